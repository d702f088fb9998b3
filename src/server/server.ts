/**
 * The one HTTP layer both programs build on (SPEC §2, §6): `createServer` returns a fastify
 * instance whose every route — including the ones the servers add afterwards, in any plugin scope —
 * gets the same limits, error format and metrics. See docs in the report / module comments for the
 * design; in short:
 *
 * Node server (built by our `serverFactory`; note fastify then makes no extra 'localhost' bindings):
 *   requestTimeout = headersTimeout = T, connectionsCheckingInterval = 250 ms (Node only looks every
 *   interval), keepAliveTimeout, maxHeaderSize 16 KiB, TLS handshakeTimeout = T, maxConnections,
 *   per-client-IP connection cap on 'connection', `clientError` → raw problem+json 408/431/413/400;
 *   'checkExpectation', 'connect' and upgrade requests answered by us, not Node (early.ts).
 *   A hook on the HTTP parser's message-begin callback records each request's first byte, which is
 *   where the request deadline starts.
 *
 * fastify: bodyLimit, strict ajv (no coercion, no stripping), all default body parsers removed and
 * one catch-all parser (strict JSON via parseStrictJson, or raw bytes for `rawBody` routes),
 * lossless serializer (stringifyJson) for replies and response schemas, random request ids,
 * `return503OnClosing: false` (requests on open connections are served during shutdown, with
 * `Connection: close`).
 *
 * Hooks (root, so inherited by every plugin scope):
 *   onRoute    records each route's methods (405 + Allow), wraps async handlers with the deadline.
 *   onRequest  request state, client IP, response-'close' bookkeeping; rate limit → 429; unknown
 *              route → 404 / 405 (answered here, before any body is read); JSON route without a JSON
 *              content type → 415.
 *   preHandler in-flight slot (FIFO queue; full, or no slot while ≥ min(100 ms, T/10) of the
 *              deadline is left → 503 overloaded).
 *   onSend     X-Request-Id, CORS for GET/HEAD, nosniff, `Connection: close` when the body was not
 *              read or the server is closing.
 *   error handler: everything becomes a problem; the `mapError` hook lets servers map their own
 *   ProtocolError codes first.
 * Slots, queue entries, metrics and the access log line are settled on the raw response's 'close'
 * event, which fires for finished, failed and aborted requests alike.
 */
import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { fastify, LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions, RouteHandlerMethod } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Registry } from 'prom-client';
import type { LoggerOptions } from 'pino';
import { decodeUtf8, JsonError, parseStrictJson, stringifyJson } from '../encoding/json.ts';
import { EncodingError } from '../errors.ts';
import { HttpProblem, ServerConfigError } from './errors.ts';
import { InFlightLimiter } from './in-flight.ts';
import type { Waiter } from './in-flight.ts';
import { CidrSet, clientKey, formatIp, parseIp, resolveClientIp } from './ip.ts';
import type { IpBytes } from './ip.ts';
import { AFTER_UPGRADE_PROBLEM, CONNECT_PROBLEM, earlyProblem } from './early.ts';
import type { EarlyProblem } from './early.ts';
import { createHttpMetrics } from './metrics.ts';
import type { HttpMetrics } from './metrics.ts';
import { bindProblemTypeBase, DEFAULT_PROBLEM_TYPE_BASE, isJsonContentType, problemBody, PROBLEM_CONTENT_TYPE, sendProblem } from './problem.ts';
import type { ProblemInit } from './problem.ts';
import { TokenBuckets } from './rate-limit.ts';
import type { RateLimitSpec } from './rate-limit.ts';

/** Problem codes used for validation failures, per request part (route config `validationCodes`). */
export interface ValidationCodes {
  body?: string;
  querystring?: string;
  params?: string;
  headers?: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** skip the in-flight queue and the rate limit (`/`, `/health`, `/metrics`) */
    bypassLimits?: boolean;
    /** rate-limit this route (true) or not (false); unset = the server's `rateLimit.scope` decides */
    rateLimit?: boolean;
    /** deliver the body as a Buffer whatever its Content-Type (the C2SP /add-checkpoint route) */
    rawBody?: boolean;
    /** JSON members whose integers may exceed 2^53−1 (delivered as decimal strings) */
    bigIntegerKeys?: readonly string[];
    /** problem codes for schema failures (defaults: malformed_body / _query / _params / _headers) */
    validationCodes?: ValidationCodes;
  }
  interface FastifyRequest {
    /** the client address under SPEC §2's trust-proxy rule (canonical text) */
    clientIp: string;
  }
}

export type App = FastifyInstance<http.Server, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

/** Map an error to a problem, or return undefined to fall through to the built-in mapping. */
export type ErrorMapper = (error: unknown, request: FastifyRequest) => ProblemInit | undefined;

export interface RateLimitOptions extends RateLimitSpec {
  /** 'all' (default): every route not opted out; 'opt-in': only routes with config `rateLimit: true` */
  scope?: 'all' | 'opt-in';
  /** cap on tracked client keys (default 100 000) */
  maxClients?: number;
}

export interface ServerOptions {
  maxBodyBytes?: number; // 65 536
  maxInFlight?: number; // 256
  maxQueue?: number; // 1 024
  requestTimeoutMs?: number; // 10 000
  maxConnections?: number; // 4 096
  maxConnectionsPerIp?: number; // 64
  keepAliveTimeoutMs?: number; // 5 000
  rateLimit?: RateLimitOptions | null; // off
  trustProxy?: readonly string[]; // CIDRs; empty = the socket peer is the client
  /** a pino logger, pino options, or true/false (default false: no logging) */
  logger?: FastifyBaseLogger | LoggerOptions | boolean;
  metrics?: Registry;
  problemTypeBase?: string;
  mapError?: ErrorMapper;
  /** Retry-After seconds on 503 overloaded / store_unavailable (default 1) */
  retryAfterSeconds?: number;
  /** register @fastify/swagger and GET /openapi.json */
  openapi?: { title: string; version: string; description?: string } | false;
  /** TLS: key/cert etc. for https.createServer; absent = plain HTTP */
  https?: https.ServerOptions | null;
  /** one info line per finished request (default true; no effect without a logger) */
  accessLog?: boolean;
}

interface Internals {
  readonly requestTimeoutMs: number;
  readonly retryAfter: string;
  readonly limiter: InFlightLimiter;
  readonly buckets: TokenBuckets | null;
  readonly rateScope: 'all' | 'opt-in';
  readonly trusted: CidrSet | null;
  readonly metrics: HttpMetrics;
  readonly registry: Registry;
  readonly mapError: ErrorMapper | undefined;
  readonly accessLog: boolean;
  readonly methods: Set<string>;
  readonly perIp: Map<string, number>;
  readonly activeBySocket: WeakMap<Socket, ReqState>;
  /** Every open connection (shutdown closes the ones that never sent a byte). */
  readonly sockets: Set<Socket>;
  readonly servers: Set<http.Server | https.Server>;
  closing: boolean;
  app: App | null;
}

interface ReqState {
  readonly internals: Internals;
  readonly id: string; // the request id (X-Request-Id, log reqId)
  readonly start: number; // performance.now() at the request's first byte (ms)
  readonly deadline: number; // start + requestTimeoutMs
  readonly route: string; // metrics label
  readonly config: FastifyRequest['routeOptions']['config'];
  readonly hasBody: boolean;
  holding: boolean;
  waiter: Waiter | null;
  rawStatus: number | null; // set when clientError answered on the raw socket
  finished: boolean;
  ac: AbortController | null;
}

const DEFAULTS = {
  maxBodyBytes: 65_536,
  maxInFlight: 256,
  maxQueue: 1_024,
  requestTimeoutMs: 10_000,
  maxConnections: 4_096,
  maxConnectionsPerIp: 64,
  keepAliveTimeoutMs: 5_000,
} as const;

const states = new WeakMap<FastifyRequest, ReqState>();
const internalsByInstance = new WeakMap<object, Internals>();
const wrappedHandlers = new WeakSet<object>();
const bigKeySets = new WeakMap<readonly string[], ReadonlySet<string>>();

const kMessageStart = Symbol('messageStart');
const kParserOwner = Symbol('parserOwner');

type ParserLike = Record<number | symbol, unknown>;

function internalsOf(instance: object): Internals | undefined {
  let o: object | null = instance;
  while (o !== null) {
    const i = internalsByInstance.get(o);
    if (i !== undefined) return i;
    o = Object.getPrototypeOf(o) as object | null;
  }
  return undefined;
}

function positiveInt(name: string, v: number | undefined, dflt: number, min = 1): number {
  const n = v ?? dflt;
  if (!Number.isSafeInteger(n) || n < min) throw new ServerConfigError('invalid_option', `${name} must be an integer ≥ ${min}, got ${String(v)}`);
  return n;
}

// ---------------------------------------------------------------------------------------------
// First-byte timestamps. Node's HTTP parser calls its kOnMessageBegin slot (index 0, unset by
// Node itself) when a request's first byte is parsed; we record the time on the parser. Guarded:
// if the internals differ, requests fall back to "headers complete" as their start.

function onMessageBegin(this: ParserLike): void {
  this[kMessageStart] = performance.now();
}

function hookParser(socket: Socket): void {
  const parser = (socket as unknown as { parser?: ParserLike | null }).parser;
  if (parser === null || parser === undefined || typeof parser !== 'object') return;
  if (typeof parser[1] !== 'function') return; // kOnHeaders: not the parser layout we know
  const slot = parser[0];
  if (slot !== null && slot !== undefined && slot !== onMessageBegin) return;
  parser[0] = onMessageBegin;
  parser[kParserOwner] = socket;
  parser[kMessageStart] = undefined;
}

function messageStart(raw: IncomingMessage, now: number): number {
  const parser = (raw.socket as unknown as { parser?: ParserLike | null } | null)?.parser;
  if (parser === null || parser === undefined || parser[kParserOwner] !== raw.socket) return now;
  const t = parser[kMessageStart];
  return typeof t === 'number' && t <= now ? t : now;
}

// ---------------------------------------------------------------------------------------------

function requestHasBody(raw: IncomingMessage): boolean {
  const cl = raw.headers['content-length'];
  return raw.headers['transfer-encoding'] !== undefined || (cl !== undefined && cl !== '0');
}

function needsJson(method: string, config: ReqState['config']): boolean {
  return (method === 'POST' || method === 'PUT' || method === 'PATCH') && config.rawBody !== true;
}

function bigKeys(keys: readonly string[] | undefined): ReadonlySet<string> | undefined {
  if (keys === undefined) return undefined;
  let s = bigKeySets.get(keys);
  if (s === undefined) {
    s = new Set(keys);
    bigKeySets.set(keys, s);
  }
  return s;
}

function statusCodeName(status: number): string {
  return (http.STATUS_CODES[status] ?? 'error').toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');
}

function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

function truncate(s: string, n = 200): string {
  return s.length <= n ? s : `${s.slice(0, n)}…`;
}

interface AjvErrorLike {
  instancePath?: string;
  keyword?: string;
  params?: Record<string, unknown>;
  message?: string;
}

function validationProblem(error: { validation: unknown; validationContext?: unknown }, config: ReqState['config'] | undefined): ProblemInit {
  const ctx = typeof error.validationContext === 'string' ? error.validationContext : 'body';
  const codes = config?.validationCodes;
  const defaults: Record<string, string> = { body: 'malformed_body', querystring: 'malformed_query', params: 'malformed_params', headers: 'malformed_headers' };
  const code = (codes as Record<string, string | undefined> | undefined)?.[ctx] ?? defaults[ctx] ?? 'malformed_request';
  const first = (Array.isArray(error.validation) ? (error.validation[0] as AjvErrorLike | undefined) : undefined) ?? {};
  let pointer = first.instancePath ?? '';
  let message = first.message ?? 'is invalid';
  const params = first.params ?? {};
  if (first.keyword === 'required' && typeof params.missingProperty === 'string') {
    pointer += '/' + escapePointer(params.missingProperty);
    message = 'required member is missing';
  } else if (first.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    pointer += '/' + escapePointer(params.additionalProperty);
    message = 'unknown member';
  }
  const where = ctx === 'body' ? '' : `${ctx === 'querystring' ? 'query' : ctx} `;
  const detail = pointer === '' ? `${ctx === 'querystring' ? 'query' : ctx}: ${message}` : `${where}${pointer}: ${message}`;
  return { status: 400, code, detail };
}

/** The built-in error → problem mapping (after HttpProblem and the server's mapError hook). */
function builtinProblem(error: unknown, request: FastifyRequest, internals: Internals): ProblemInit | null {
  const config = states.get(request)?.config;
  const bodyCode = config?.validationCodes?.body ?? 'malformed_body';
  if (error instanceof JsonError) {
    return { status: 400, code: bodyCode, detail: error.pointer === '' ? `invalid JSON: ${error.message}` : `invalid JSON at ${error.message}` };
  }
  if (error instanceof EncodingError) return { status: 400, code: bodyCode, detail: error.message };
  if (typeof error !== 'object' || error === null) return null;
  const e = error as { code?: unknown; statusCode?: unknown; validation?: unknown; validationContext?: unknown; message?: unknown };
  if (Array.isArray(e.validation)) return validationProblem({ validation: e.validation, validationContext: e.validationContext }, config);
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE': {
      const limit = request.routeOptions.bodyLimit;
      return { status: 413, code: 'body_too_large', detail: `request body exceeds ${limit} bytes`, headers: { connection: 'close' } };
    }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, code: 'unsupported_media_type', detail: 'unsupported or malformed Content-Type' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, code: bodyCode, detail: 'Content-Length does not match the body' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { status: 400, code: bodyCode, detail: 'invalid JSON' };
    case 'FST_ERR_NOT_FOUND':
      return { status: 404, code: 'not_found', detail: 'not found' };
    case 'store_unavailable':
      return { status: 503, code: 'store_unavailable', detail: 'the store is unavailable; retry later', headers: { 'retry-after': internals.retryAfter } };
    default:
      break;
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500 && typeof e.code === 'string' && e.code.startsWith('FST_')) {
    return { status: e.statusCode, code: statusCodeName(e.statusCode), detail: typeof e.message === 'string' ? truncate(e.message) : http.STATUS_CODES[e.statusCode] ?? 'client error' };
  }
  // A body that could not be read because the client went away: nobody will see the answer.
  if (e.code === 'ECONNRESET' || e.code === 'ECONNABORTED' || e.message === 'aborted') return { status: 400, code: bodyCode, detail: 'request body aborted' };
  return null;
}

// ---------------------------------------------------------------------------------------------

function beginRequest(internals: Internals, request: FastifyRequest, reply: FastifyReply): ReqState {
  const existing = states.get(request);
  if (existing !== undefined) return existing;
  const now = performance.now();
  const raw = request.raw;
  const start = messageStart(raw, now);
  const config = request.routeOptions.config;
  const ip = resolveClientIp(raw.socket.remoteAddress, raw.headers['x-forwarded-for'], internals.trusted);
  request.clientIp = formatIp(ip);
  const st: ReqState = {
    internals,
    id: request.id,
    start,
    deadline: start + internals.requestTimeoutMs,
    route: request.is404 || typeof config.url !== 'string' ? 'other' : config.url,
    config,
    hasBody: requestHasBody(raw),
    holding: false,
    waiter: null,
    rawStatus: null,
    finished: false,
    ac: null,
  };
  states.set(request, st);
  ipBytesOf.set(request, ip);
  internals.activeBySocket.set(raw.socket, st);
  reply.raw.once('close', () => {
    finishRequest(st, request, reply);
  });
  return st;
}

const ipBytesOf = new WeakMap<FastifyRequest, IpBytes>();

function finishRequest(st: ReqState, request: FastifyRequest, reply: FastifyReply): void {
  if (st.finished) return;
  st.finished = true;
  const internals = st.internals;
  // Abort first: work tied to this request (an anchor queued in the sequencer) leaves before the
  // slot is handed to the next request, so that work never outnumbers the slots.
  if (st.ac !== null && !st.ac.signal.aborted) st.ac.abort();
  if (st.waiter !== null) {
    internals.limiter.cancel(st.waiter);
    st.waiter = null;
  }
  if (st.holding) {
    st.holding = false;
    internals.limiter.release();
  }
  const socket = request.raw.socket;
  if (internals.activeBySocket.get(socket) === st) internals.activeBySocket.delete(socket);
  const res = reply.raw;
  const status = res.headersSent ? String(res.statusCode) : st.rawStatus !== null ? String(st.rawStatus) : 'aborted';
  const labels = { route: st.route, method: request.method, status };
  const seconds = (performance.now() - st.start) / 1000;
  internals.metrics.requests.inc(labels);
  internals.metrics.duration.observe(labels, seconds);
  if (internals.accessLog) {
    request.log.info({ method: request.method, url: truncate(request.url), route: st.route, status, ms: Math.round(seconds * 1000), ip: request.clientIp }, 'request completed');
  }
}

function commonHeaders(st: ReqState | undefined, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  reply.header('x-content-type-options', 'nosniff');
  const method = request.method;
  if (method === 'GET' || method === 'HEAD') reply.header('access-control-allow-origin', '*');
  const bodyUnread = (st?.hasBody ?? requestHasBody(request.raw)) && !request.raw.complete;
  if (bodyUnread || st?.internals.closing === true || reply.statusCode === 408) reply.header('connection', 'close');
}

const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

function allowedMethods(internals: Internals, app: FastifyInstance, rawUrl: string): string[] {
  const q = rawUrl.indexOf('?');
  const path = q === -1 ? rawUrl : rawUrl.slice(0, q);
  const out: string[] = [];
  for (const method of internals.methods) {
    // findRoute matches a concrete path (find-my-way `find`); it returns null at run time when no
    // route matches, whatever its type says.
    const found: unknown = app.findRoute({ method, url: path });
    if (found !== null && found !== undefined) out.push(method);
  }
  return out.sort((a, b) => {
    const ia = METHOD_ORDER.indexOf(a);
    const ib = METHOD_ORDER.indexOf(b);
    return ia !== ib ? (ia === -1 ? 99 : ia) - (ib === -1 ? 99 : ib) : a < b ? -1 : a > b ? 1 : 0;
  });
}

function answerNotFound(internals: Internals, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const app = internals.app;
  const allowed = app === null ? [] : allowedMethods(internals, app, request.raw.url ?? '/');
  if (allowed.length > 0 && !allowed.includes(request.method)) {
    return sendProblem(reply, 405, 'method_not_allowed', `${request.method} is not allowed here; allowed: ${allowed.join(', ')}`, { allow: allowed.join(', ') });
  }
  const path = (request.raw.url ?? '/').split('?')[0]!;
  return sendProblem(reply, 404, 'not_found', `no resource at ${truncate(path, 120)}`);
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

/** Race an async handler against the request deadline (fastify's handlerTimeout misses requests with bodies). */
function withDeadline(handler: RouteHandlerMethod): RouteHandlerMethod {
  if (wrappedHandlers.has(handler)) return handler;
  const wrapped: RouteHandlerMethod = function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply): unknown {
    const result: unknown = handler.call(this, request, reply);
    const st = states.get(request);
    if (st === undefined || !isThenable(result)) return result;
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (reply.raw.headersSent) return; // already answering; let it finish
        if (st.ac !== null && !st.ac.signal.aborted) st.ac.abort();
        st.internals.metrics.rejected.inc({ reason: 'request_timeout' });
        reject(
          new HttpProblem(
            408,
            'request_timeout',
            `the request did not complete within ${st.internals.requestTimeoutMs} ms; its outcome is unknown (an identical retry is safe where the route is idempotent)`,
            { connection: 'close' },
          ),
        );
      }, Math.max(0, st.deadline - performance.now()));
      result.then(
        (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        (e: unknown) => {
          clearTimeout(timer);
          reject(e instanceof Error ? e : new Error(String(e)));
        },
      );
    });
  };
  wrappedHandlers.add(wrapped);
  return wrapped;
}

/** Headers of a problem answered outside fastify (raw socket or bare ServerResponse); the connection then closes. */
function rawProblemHeaders(body: string, id: string): Record<string, string> {
  return {
    'Content-Type': `${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'X-Request-Id': id,
    Connection: 'close',
  };
}

/** The response a connection is writing or will write next (Node's `_httpMessage`), if any. */
function currentResponse(socket: Socket): ServerResponse | null {
  return (socket as unknown as { _httpMessage?: ServerResponse | null })._httpMessage ?? null;
}

/** True when the request being answered on `socket` was read whole: a parse error belongs to a request behind it. */
function answeringEarlierRequest(socket: Socket): boolean {
  const res = currentResponse(socket);
  return res !== null && !res.writableFinished && (res as { req?: IncomingMessage }).req?.complete === true;
}

/** Sockets whose raw problem waits for the answers to the requests ahead of it. */
const rawProblemWaiting = new WeakSet<Socket>();

function writeRawProblem(socket: Socket, status: number, code: string, detail: string, id: string, typeBase: string): void {
  if (answeringEarlierRequest(socket)) {
    // The bad request was pipelined behind one whose answer is not written yet: answer in order
    // (else the client reads this problem as the answer to the earlier request). Node's own
    // 'finish' listener runs first and hands the socket to the next queued response, if any.
    if (rawProblemWaiting.has(socket)) return;
    rawProblemWaiting.add(socket);
    currentResponse(socket)!.once('finish', () => {
      rawProblemWaiting.delete(socket);
      writeRawProblem(socket, status, code, detail, id, typeBase);
    });
    return;
  }
  if (rawProblemWaiting.has(socket)) return;
  const httpMessage = currentResponse(socket);
  if (!socket.writable || httpMessage?.headersSent === true) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(problemBody(status, code, detail, typeBase));
  const headers = Object.entries(rawProblemHeaders(body, id)).map(([k, v]) => `${k}: ${v}\r\n`);
  const head = `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}\r\n${headers.join('')}\r\n`;
  const kill = setTimeout(() => socket.destroy(), 1000);
  kill.unref();
  socket.end(head + body, () => {
    clearTimeout(kill);
    socket.destroy();
  });
}

// ---------------------------------------------------------------------------------------------

/** Build the hardened fastify instance. Add routes to it, then `listen`. */
export async function createServer(options: ServerOptions = {}): Promise<App> {
  const requestTimeoutMs = positiveInt('requestTimeoutMs', options.requestTimeoutMs, DEFAULTS.requestTimeoutMs, 100);
  const maxBodyBytes = positiveInt('maxBodyBytes', options.maxBodyBytes, DEFAULTS.maxBodyBytes);
  const maxInFlight = positiveInt('maxInFlight', options.maxInFlight, DEFAULTS.maxInFlight);
  const maxQueue = positiveInt('maxQueue', options.maxQueue, DEFAULTS.maxQueue, 0);
  const maxConnections = positiveInt('maxConnections', options.maxConnections, DEFAULTS.maxConnections);
  const maxConnectionsPerIp = positiveInt('maxConnectionsPerIp', options.maxConnectionsPerIp, DEFAULTS.maxConnectionsPerIp);
  const keepAliveTimeoutMs = positiveInt('keepAliveTimeoutMs', options.keepAliveTimeoutMs, DEFAULTS.keepAliveTimeoutMs);
  const retryAfterSeconds = positiveInt('retryAfterSeconds', options.retryAfterSeconds, 1);
  const typeBase = options.problemTypeBase ?? DEFAULT_PROBLEM_TYPE_BASE;
  const minStartMs = Math.min(100, requestTimeoutMs / 10);
  const registry = options.metrics ?? new Registry();
  const metrics = createHttpMetrics(registry);
  const trusted = options.trustProxy !== undefined && options.trustProxy.length > 0 ? new CidrSet(options.trustProxy) : null;
  const rl = options.rateLimit ?? null;

  const internals: Internals = {
    requestTimeoutMs,
    retryAfter: String(retryAfterSeconds),
    limiter: new InFlightLimiter(maxInFlight, maxQueue, (dIn, dQ) => {
      if (dIn !== 0) metrics.inFlight.inc(dIn);
      if (dQ !== 0) metrics.queueDepth.inc(dQ);
    }),
    buckets: rl === null ? null : new TokenBuckets(rl, rl.maxClients === undefined ? {} : { maxClients: rl.maxClients }),
    rateScope: rl?.scope ?? 'all',
    trusted,
    metrics,
    registry,
    mapError: options.mapError,
    accessLog: options.accessLog ?? true,
    methods: new Set(),
    perIp: new Map(),
    activeBySocket: new WeakMap(),
    sockets: new Set(),
    servers: new Set(),
    closing: false,
    app: null,
  };

  const isTls = options.https !== undefined && options.https !== null;
  /** Per connection, the request that asked for an upgrade (early.ts): nothing parsed after it is served. */
  const upgradeRequests = new WeakMap<Socket, IncomingMessage>();
  const httpOptions: http.ServerOptions = {
    requestTimeout: requestTimeoutMs,
    headersTimeout: requestTimeoutMs,
    connectionsCheckingInterval: Math.min(250, Math.max(50, Math.floor(requestTimeoutMs / 4))),
    keepAliveTimeout: keepAliveTimeoutMs,
    maxHeaderSize: 16_384,
    // Node's check answers a missing Host with a bare 400; hostHeaderProblem (early.ts) covers it
    // with a problem body, and also duplicated and malformed Host headers.
    requireHostHeader: false,
    // Called for requests asking for an upgrade; none is done, but the connection is marked (early.ts).
    shouldUpgradeCallback: (req: IncomingMessage) => {
      upgradeRequests.set(req.socket, req);
      return false;
    },
  };

  let rootLog: FastifyBaseLogger | null = null;
  const earlyAnswer = (ip: string | undefined, p: EarlyProblem): { id: string; body: string } => {
    metrics.requests.inc({ route: 'other', method: 'other', status: String(p.status) });
    const id = randomUUID();
    rootLog?.info({ reqId: id, status: p.status, ip, reason: p.detail }, 'client error');
    return { id, body: JSON.stringify(problemBody(p.status, p.code, p.detail, typeBase)) };
  };
  const serverFactory = (handler: http.RequestListener): http.Server => {
    // Version, Host and expectation checks, and the upgrade rule (early.ts), before routing.
    // `via`: the Node event that delivered the request ('checkContinue': 100 Continue is sent only
    // to a request that passes, so a refused one is not invited to send its body).
    const checked = (req: IncomingMessage, res: ServerResponse, via: 'request' | 'checkExpectation' | 'checkContinue'): void => {
      const upgrade = upgradeRequests.get(req.socket);
      const problem = upgrade !== undefined && upgrade !== req ? AFTER_UPGRADE_PROBLEM : earlyProblem(req, via === 'checkExpectation');
      if (problem === null) {
        if (upgrade === req) res.shouldKeepAlive = false; // the bytes after it may be lost: close after the answer
        if (via === 'checkContinue') res.writeContinue();
        handler(req, res);
        return;
      }
      const { id, body } = earlyAnswer(req.socket.remoteAddress, problem);
      res.writeHead(problem.status, rawProblemHeaders(body, id));
      res.end(body);
    };
    const onRequest: http.RequestListener = (req, res) => {
      checked(req, res, 'request');
    };
    const server = isTls
      ? https.createServer({ ...options.https, ...httpOptions, handshakeTimeout: Math.min(requestTimeoutMs, 10_000) }, onRequest)
      : http.createServer(httpOptions, onRequest);
    server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
      checked(req, res, 'checkExpectation');
    });
    server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      checked(req, res, 'checkContinue');
    });
    server.on('connect', (req: IncomingMessage, socket: Socket) => {
      socket.on('error', () => socket.destroy()); // Node has removed its own listener
      const { id } = earlyAnswer(socket.remoteAddress, CONNECT_PROBLEM);
      writeRawProblem(socket, CONNECT_PROBLEM.status, CONNECT_PROBLEM.code, CONNECT_PROBLEM.detail, id, typeBase);
    });
    hardenServer(server, isTls);
    return server;
  };

  const hardenServer = (server: http.Server | https.Server, tls: boolean): void => {
    internals.servers.add(server);
    server.requestTimeout = requestTimeoutMs;
    server.headersTimeout = requestTimeoutMs;
    server.keepAliveTimeout = keepAliveTimeoutMs;
    server.maxConnections = maxConnections;
    server.on('drop', () => {
      metrics.rejected.inc({ reason: 'connections' });
    });
    server.on('connection', (socket: Socket) => {
      if (!tls) hookParser(socket);
      metrics.openConnections.inc();
      internals.sockets.add(socket);
      socket.once('close', () => {
        metrics.openConnections.dec();
        internals.sockets.delete(socket);
      });
      const ip = parseIp(socket.remoteAddress ?? '');
      if (ip === null || (trusted !== null && trusted.contains(ip))) return; // unix socket, or our proxy
      const key = clientKey(ip);
      const n = internals.perIp.get(key) ?? 0;
      if (n >= maxConnectionsPerIp) {
        metrics.rejected.inc({ reason: 'connections' });
        socket.destroy();
        return;
      }
      internals.perIp.set(key, n + 1);
      socket.once('close', () => {
        const c = (internals.perIp.get(key) ?? 1) - 1;
        if (c <= 0) internals.perIp.delete(key);
        else internals.perIp.set(key, c);
      });
    });
    if (tls) {
      server.on('secureConnection', (socket: Socket) => {
        hookParser(socket);
      });
    }
    server.on('clientError', (err: Error & { code?: string }, socket: Socket) => {
      onClientError(err, socket);
    });
  };

  const onClientError = (err: Error & { code?: string }, socket: Socket): void => {
    const code = err.code;
    if (code === 'ECONNRESET' || code === 'EPIPE' || socket.destroyed) {
      socket.destroy();
      return;
    }
    let status = 400;
    let pcode = 'malformed_request';
    let detail = 'the request could not be parsed';
    if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      status = 408;
      pcode = 'request_timeout';
      detail = `the request was not received within ${requestTimeoutMs} ms`;
      metrics.rejected.inc({ reason: 'request_timeout' });
    } else if (code === 'HPE_HEADER_OVERFLOW') {
      status = 431;
      pcode = 'headers_too_large';
      detail = 'request headers are too large';
    } else if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') {
      status = 413;
      pcode = 'body_too_large';
      detail = 'chunk extensions are too large';
      metrics.rejected.inc({ reason: 'body_too_large' });
    }
    // The request being answered is not the bad one when it was read whole (pipelining).
    const st = answeringEarlierRequest(socket) ? undefined : internals.activeBySocket.get(socket);
    if (st !== undefined) st.rawStatus = status; // counted when that request's response closes
    else metrics.requests.inc({ route: 'other', method: 'other', status: String(status) });
    const id = st?.id ?? randomUUID();
    rootLog?.info({ reqId: id, code, status, ip: socket.remoteAddress }, 'client error');
    writeRawProblem(socket, status, pcode, detail, id, typeBase);
  };

  const fastifyOptions: FastifyServerOptions & Record<string, unknown> = {
    serverFactory,
    bodyLimit: maxBodyBytes,
    keepAliveTimeout: keepAliveTimeoutMs,
    requestTimeout: requestTimeoutMs,
    return503OnClosing: false,
    exposeHeadRoutes: true,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    routerOptions: { maxParamLength: 2048 },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false } },
    // Our own 'clientError' listener is installed by hardenServer on every server instance.
    clientErrorHandler: () => undefined,
    frameworkErrors: (error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply) => {
      const st = beginRequest(internals, request, reply);
      commonHeaders(st, request, reply);
      if (error.code === 'FST_ERR_BAD_URL') sendProblem(reply, 400, 'malformed_url', 'the request URL is not valid');
      else sendProblem(reply, 404, 'not_found', 'not found');
    },
  };
  const lg = options.logger ?? false;
  if (typeof lg === 'object' && typeof (lg as { child?: unknown }).child === 'function') fastifyOptions.loggerInstance = lg as FastifyBaseLogger;
  else fastifyOptions.logger = lg;

  const app = (fastify(fastifyOptions as FastifyServerOptions) as unknown as FastifyInstance).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
  internals.app = app;
  rootLog = app.log;
  internalsByInstance.set(app, internals);
  bindProblemTypeBase(app, typeBase);
  app.decorateRequest('clientIp', '');

  // Bodies: one catch-all parser. JSON routes get strict JSON; rawBody routes get the bytes.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    const config = states.get(request)?.config ?? request.routeOptions.config;
    if (config.rawBody === true) {
      done(null, body);
      return;
    }
    if (!isJsonContentType(request.headers['content-type'])) {
      done(new HttpProblem(415, 'unsupported_media_type', 'the body must be JSON (Content-Type: application/json)'), undefined);
      return;
    }
    try {
      const keys = bigKeys(config.bigIntegerKeys);
      done(null, parseStrictJson(decodeUtf8(body as Buffer), keys === undefined ? {} : { bigIntegerKeys: keys }));
    } catch (e) {
      done(e instanceof Error ? e : new Error(String(e)), undefined);
    }
  });

  // Replies: lossless JSON (bigints as integer literals), also for routes with response schemas.
  app.setReplySerializer((payload) => stringifyJson(payload));
  app.setSerializerCompiler(() => (data: unknown) => stringifyJson(data));

  app.addHook('onRoute', (route) => {
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) internals.methods.add(String(m).toUpperCase());
    route.handler = withDeadline(route.handler);
  });

  app.addHook('onRequest', (request, reply, done) => {
    const st = beginRequest(internals, request, reply);
    const config = st.config;
    if (internals.buckets !== null && config.bypassLimits !== true && (config.rateLimit ?? internals.rateScope === 'all')) {
      const ip = ipBytesOf.get(request);
      const r = internals.buckets.take(ip === undefined ? request.clientIp : clientKey(ip));
      if (!r.ok) {
        metrics.rejected.inc({ reason: 'rate_limited' });
        sendProblem(reply, 429, 'rate_limited', `too many requests; retry in ${r.retryAfterSeconds} s`, { 'retry-after': String(r.retryAfterSeconds) });
        return;
      }
    }
    if (request.is404) {
      answerNotFound(internals, request, reply);
      return;
    }
    if (needsJson(request.method, config) && !isJsonContentType(request.headers['content-type'])) {
      sendProblem(reply, 415, 'unsupported_media_type', 'the body must be JSON (Content-Type: application/json)');
      return;
    }
    done();
  });

  app.addHook('preHandler', (request, reply, done) => {
    const st = states.get(request);
    if (st?.finished === true) return; // the client is gone: do not start work for nobody
    if (st === undefined || st.config.bypassLimits === true) {
      done();
      return;
    }
    const limiter = internals.limiter;
    if (limiter.tryAcquire()) {
      st.holding = true;
      done();
      return;
    }
    const refuse = (): void => {
      metrics.rejected.inc({ reason: 'overloaded' });
      sendProblem(reply, 503, 'overloaded', 'the server is at capacity; retry later', { 'retry-after': internals.retryAfter });
    };
    // A queued request must start with at least `minStartMs` of its deadline left; otherwise it
    // is refused with 503 (safe to retry) rather than started only to end in 408 (outcome unknown).
    const budget = st.deadline - performance.now() - minStartMs;
    if (budget <= 0) {
      refuse();
      return;
    }
    const waiter = limiter.enqueue(budget, (outcome) => {
      st.waiter = null;
      if (outcome === 'timeout') {
        refuse();
        return;
      }
      if (st.finished || st.deadline - performance.now() < minStartMs) {
        limiter.release();
        if (!st.finished) refuse();
        return;
      }
      st.holding = true;
      done();
    });
    if (waiter === null) {
      refuse();
      return;
    }
    st.waiter = waiter;
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    commonHeaders(states.get(request), request, reply);
    done(null, payload);
  });

  app.addHook('preClose', (done) => {
    internals.closing = true;
    done();
  });

  app.setNotFoundHandler((request, reply) => {
    beginRequest(internals, request, reply);
    return answerNotFound(internals, request, reply);
  });

  app.setErrorHandler((error: unknown, request, reply) => {
    let p: ProblemInit | null;
    try {
      if (error instanceof HttpProblem) p = error;
      else p = internals.mapError?.(error, request) ?? builtinProblem(error, request, internals);
    } catch (mapErr) {
      request.log.error({ err: mapErr }, 'error mapping failed');
      p = null;
    }
    if (p === null) {
      request.log.error({ err: error }, 'internal error');
      p = { status: 500, code: 'internal', detail: `internal error; request id ${request.id}` };
    } else if (p.status >= 500) {
      request.log.warn({ err: error, code: p.code }, 'service unavailable');
    }
    if (p.status === 413) metrics.rejected.inc({ reason: 'body_too_large' });
    if (reply.raw.headersSent) {
      reply.raw.destroy();
      return;
    }
    // Headers a handler set before failing (Cache-Control: immutable, ETag, …) must not describe
    // the error: a problem carries only its own headers (plus the common ones added in onSend).
    for (const name of Object.keys(reply.getHeaders())) reply.removeHeader(name);
    return sendProblem(reply, p.status, p.code, p.detail, p.headers);
  });

  if (options.openapi !== undefined && options.openapi !== false) {
    const info = options.openapi;
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: { title: info.title, version: info.version, ...(info.description === undefined ? {} : { description: info.description }) },
      },
    });
    app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
  }
  return app;
}

/** The client address of a request (SPEC §2 trust-proxy rule), canonical text. */
export function clientIp(request: FastifyRequest): string {
  if (request.clientIp !== '') return request.clientIp;
  const internals = internalsOf(request.server);
  return formatIp(resolveClientIp(request.raw.socket.remoteAddress, request.raw.headers['x-forwarded-for'], internals?.trusted ?? null));
}

/**
 * Aborted when the request's deadline passes (the client got 408) or the client goes away. Handlers
 * pass it to long waits so abandoned work stops.
 */
export function deadlineSignal(request: FastifyRequest): AbortSignal {
  const st = states.get(request);
  if (st === undefined) return new AbortController().signal;
  if (st.ac === null) {
    st.ac = new AbortController();
    if (st.finished) st.ac.abort();
  }
  return st.ac.signal;
}

/** The metrics registry a server reports to. */
export function metricsRegistry(app: FastifyInstance | App): Registry {
  const internals = internalsOf(app);
  if (internals === undefined) throw new ServerConfigError('invalid_option', 'not a server built by createServer');
  return internals.registry;
}

/** Current in-flight and queue counts (for /health pages and tests). */
export function loadSnapshot(app: FastifyInstance | App): { inFlight: number; queued: number; connections: number } {
  const internals = internalsOf(app);
  if (internals === undefined) throw new ServerConfigError('invalid_option', 'not a server built by createServer');
  let connections = 0;
  for (const n of internals.perIp.values()) connections += n;
  return { inFlight: internals.limiter.inFlight, queued: internals.limiter.queued, connections };
}

/** `GET /metrics` in Prometheus text format; bypasses the queue and the rate limit. */
export function registerMetricsRoute(app: App, opts: { path?: string; registry?: Registry } = {}): void {
  const registry = opts.registry ?? metricsRegistry(app);
  app.get(opts.path ?? '/metrics', { config: { bypassLimits: true }, schema: { hide: true } }, async (_request, reply) => {
    const text = await registry.metrics();
    return reply.header('content-type', registry.contentType).header('cache-control', 'no-store').send(text);
  });
}

export interface ListenInfo {
  readonly host: string;
  readonly port: number;
  /** `http(s)://host:port` with the real port (IPv6 hosts in brackets) */
  readonly url: string;
}

/** Start listening (port 0 = any free port). Resolves once connections are accepted. */
export async function listen(app: App, opts: { host?: string; port?: number } = {}): Promise<ListenInfo> {
  const host = opts.host ?? '127.0.0.1';
  await app.listen({ host, port: opts.port ?? 0 });
  const addr = app.server.address() as AddressInfo;
  const scheme = app.server instanceof https.Server ? 'https' : 'http';
  const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return { host: addr.address, port: addr.port, url: `${scheme}://${shown}:${addr.port}` };
}

/**
 * Graceful shutdown: stop accepting, answer requests on open connections with `Connection: close`,
 * close idle keep-alive sockets, wait for in-flight requests up to `timeoutMs` (default 10 s), then
 * cut whatever is left.
 */
export async function closeGracefully(app: App, opts: { timeoutMs?: number } = {}): Promise<void> {
  const internals = internalsOf(app);
  if (internals !== undefined) internals.closing = true;
  const closing = app.close();
  // Node closes idle keep-alive connections itself, but not those that never sent a byte (browsers
  // pre-connect): they would hold shutdown until their header timeout.
  for (const socket of internals?.sockets ?? []) if (socket.bytesRead === 0) socket.destroy();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const forced = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      for (const s of internals?.servers ?? [app.server]) s.closeAllConnections();
      resolve();
    }, opts.timeoutMs ?? 10_000);
    timer.unref();
  });
  await Promise.race([closing, forced]);
  clearTimeout(timer);
  await closing;
}
