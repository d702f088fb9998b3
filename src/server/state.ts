/**
 * The layer's state, in three plain objects:
 *
 *  - `ServerState`, one per `createServer` (limits, limiter, rate buckets, metrics, open
 *    connections), found from any fastify instance of that server (plugin scopes included);
 *  - `RequestState`, one per request (first-byte start and deadline, its in-flight slot or queue
 *    entry, its abort controller), created by the first hook that sees the request and settled
 *    once, on the raw response's 'close' event, which fires for finished, failed and aborted
 *    requests alike (slot released, metrics and the access log line written);
 *  - `ConnectionState`, one per socket (the request being served on it, the request that asked
 *    for an upgrade, a raw problem waiting for the answers ahead of it);
 *  - `Transport`, for a request that did not come through the server's own listener (an HTTP/2
 *    stream on a bastion connection, http2.ts): its client address, its `via` label and the routes
 *    it may reach.
 */
import type http from 'node:http';
import type https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { Registry } from 'prom-client';
import { messageStart } from './first-byte.ts';
import { InFlightLimiter } from './in-flight.ts';
import type { Waiter } from './in-flight.ts';
import { CidrSet, formatIp, resolveClientIp } from './ip.ts';
import type { IpBytes } from './ip.ts';
import { createHttpMetrics } from './metrics.ts';
import type { HttpMetrics } from './metrics.ts';
import type { App, ErrorMapper, Limits, RouteConfig, ServerOptions } from './options.ts';
import { DEFAULT_PROBLEM_TYPE_BASE, truncate } from './problem.ts';
import { TokenBuckets } from './rate-limit.ts';
import type { StoreHealth } from '../store/health.ts';

export interface ServerState {
  readonly limits: Limits;
  readonly typeBase: string;
  /** the Retry-After value of 503 answers */
  readonly retryAfter: string;
  readonly limiter: InFlightLimiter;
  readonly buckets: TokenBuckets | null;
  readonly rateScope: 'all' | 'opt-in';
  readonly trusted: CidrSet | null;
  readonly metrics: HttpMetrics;
  readonly registry: Registry;
  readonly mapError: ErrorMapper | undefined;
  readonly storeHealth: StoreHealth | undefined;
  readonly accessLog: boolean;
  /** every method some route answers (for 405 + Allow) */
  readonly methods: Set<string>;
  /** open connections per client key (sockets from trusted proxies are not counted) */
  readonly perIp: Map<string, number>;
  /** connections over the per-IP cap waiting to be answered 503 (over-cap.ts), per client key */
  readonly perIpExcess: Map<string, number>;
  /** every open connection (shutdown closes the ones that never sent a byte) */
  readonly sockets: Set<Socket>;
  readonly servers: Set<http.Server | https.Server>;
  closing: boolean;
  app: App | null;
  log: FastifyBaseLogger | null;
}

/** How a request that did not arrive on the server's own listener reached the app (http2.ts). */
export interface Transport {
  /** metrics and access-log label `via` (e.g. `bastion`) */
  readonly via: string;
  /** the client address, decided by the transport (replaces the trust-proxy rule) */
  readonly ip: IpBytes;
  /** the routes served this way (HEAD wherever GET); any other path is 404 */
  readonly routes: readonly { readonly method: string; readonly url: string }[];
  /** performance.now() when the request's first byte arrived (the deadline runs from there) */
  readonly start: number;
}

export interface RequestState {
  readonly server: ServerState;
  readonly id: string; // the request id (X-Request-Id, log reqId)
  readonly start: number; // performance.now() at the request's first byte (ms)
  readonly deadline: number; // start + requestTimeoutMs
  readonly route: string; // metrics label
  readonly config: RouteConfig;
  readonly ip: IpBytes; // the client address (SPEC §2 trust-proxy rule, or the transport's)
  readonly transport: Transport | null; // null: the server's own listener
  readonly hasBody: boolean;
  holding: boolean; // holds an in-flight slot
  waiter: Waiter | null; // waits in the in-flight queue
  rawStatus: number | null; // set when clientError answered on the raw socket
  finished: boolean;
  ac: AbortController | null;
}

export interface ConnectionState {
  /** the request whose response is open on this connection */
  active: RequestState | null;
  /** the request that asked for an upgrade (early.ts): nothing parsed after it is served */
  upgradeRequest: IncomingMessage | null;
  /** a raw problem waits for the answers to the requests ahead of it */
  rawProblemWaiting: boolean;
  /** over the per-IP connection cap: its first request is answered 503 and the connection closed (over-cap.ts) */
  overCap: boolean;
  /** a request on this connection reached the request listener */
  requestSeen: boolean;
}

const serverStates = new WeakMap<object, ServerState>();
const requestStates = new WeakMap<FastifyRequest, RequestState>();
const connectionStates = new WeakMap<Socket, ConnectionState>();
const transports = new WeakMap<object, Transport>();
const rawRequestStates = new WeakMap<object, RequestState>();

/** Mark a raw request (before routing) as arrived through `transport`. */
export function setTransport(raw: object, transport: Transport): void {
  transports.set(raw, transport);
}

/** The state of a request by its raw Node request object, once a hook has begun it. */
export function requestStateOfRaw(raw: object): RequestState | undefined {
  return rawRequestStates.get(raw);
}

/** Metric labels with `via` added for requests that came through a transport. */
export function withVia<T extends object>(st: RequestState | null | undefined, labels: T): T | (T & { via: string }) {
  return st?.transport == null ? labels : { ...labels, via: st.transport.via };
}

export function createServerState(options: ServerOptions, limits: Limits): ServerState {
  const registry = options.metrics ?? new Registry();
  const metrics = createHttpMetrics(registry);
  const rl = options.rateLimit ?? null;
  return {
    limits,
    typeBase: options.problemTypeBase ?? DEFAULT_PROBLEM_TYPE_BASE,
    retryAfter: String(limits.retryAfterSeconds),
    limiter: new InFlightLimiter(limits.maxInFlight, limits.maxQueue, (dIn, dQ) => {
      if (dIn !== 0) metrics.inFlight.inc(dIn);
      if (dQ !== 0) metrics.queueDepth.inc(dQ);
    }),
    buckets: rl === null ? null : new TokenBuckets(rl, rl.maxClients === undefined ? {} : { maxClients: rl.maxClients }),
    rateScope: rl?.scope ?? 'all',
    trusted: options.trustProxy !== undefined && options.trustProxy.length > 0 ? new CidrSet(options.trustProxy) : null,
    metrics,
    registry,
    mapError: options.mapError,
    storeHealth: options.storeHealth,
    accessLog: options.accessLog ?? true,
    methods: new Set(),
    perIp: new Map(),
    perIpExcess: new Map(),
    sockets: new Set(),
    servers: new Set(),
    closing: false,
    app: null,
    log: null,
  };
}

export function bindServerState(app: object, state: ServerState): void {
  serverStates.set(app, state);
}

/** The state of the server a fastify instance belongs to (child plugin instances inherit by prototype). */
export function serverStateOf(instance: object): ServerState | undefined {
  let o: object | null = instance;
  while (o !== null) {
    const s = serverStates.get(o);
    if (s !== undefined) return s;
    o = Object.getPrototypeOf(o) as object | null;
  }
  return undefined;
}

export function requestStateOf(request: FastifyRequest): RequestState | undefined {
  return requestStates.get(request);
}

export function connectionOf(socket: Socket): ConnectionState {
  let c = connectionStates.get(socket);
  if (c === undefined) {
    c = { active: null, upgradeRequest: null, rawProblemWaiting: false, overCap: false, requestSeen: false };
    connectionStates.set(socket, c);
  }
  return c;
}

export function requestHasBody(raw: IncomingMessage): boolean {
  const cl = raw.headers['content-length'];
  return raw.headers['transfer-encoding'] !== undefined || (cl !== undefined && cl !== '0');
}

/** The request's state, created on first call: start, deadline, client IP, and its settling on 'close'. */
export function beginRequest(server: ServerState, request: FastifyRequest, reply: FastifyReply): RequestState {
  const existing = requestStates.get(request);
  if (existing !== undefined) return existing;
  const now = performance.now();
  const raw = request.raw;
  const transport = transports.get(raw) ?? null;
  const start = transport?.start ?? messageStart(raw, now);
  const config = request.routeOptions.config;
  const ip = transport?.ip ?? resolveClientIp(raw.socket.remoteAddress, raw.headers['x-forwarded-for'], server.trusted);
  request.clientIp = formatIp(ip);
  const st: RequestState = {
    server,
    id: request.id,
    start,
    deadline: start + server.limits.requestTimeoutMs,
    route: request.is404 || typeof config.url !== 'string' ? 'other' : config.url,
    config,
    ip,
    transport,
    hasBody: requestHasBody(raw),
    holding: false,
    waiter: null,
    rawStatus: null,
    finished: false,
    ac: null,
  };
  requestStates.set(request, st);
  rawRequestStates.set(raw, st);
  connectionOf(raw.socket).active = st;
  reply.raw.once('close', () => {
    finishRequest(st, request, reply);
  });
  return st;
}

/** The abort reason of a finished request's deadline signal (made once, not per request). */
const REQUEST_FINISHED = new DOMException('the request finished', 'AbortError');

function finishRequest(st: RequestState, request: FastifyRequest, reply: FastifyReply): void {
  if (st.finished) return;
  st.finished = true;
  const server = st.server;
  // Abort first: work tied to this request (an anchor queued in the sequencer) leaves before the
  // slot is handed to the next request, so that work never outnumbers the slots. One shared
  // reason: abort() without one builds a DOMException (with its stack) for every request.
  if (st.ac !== null && !st.ac.signal.aborted) st.ac.abort(REQUEST_FINISHED);
  if (st.waiter !== null) {
    server.limiter.cancel(st.waiter);
    st.waiter = null;
  }
  if (st.holding) {
    st.holding = false;
    server.limiter.release();
  }
  const conn = connectionStates.get(request.raw.socket);
  if (conn?.active === st) conn.active = null;
  const res = reply.raw;
  const status = res.headersSent ? String(res.statusCode) : st.rawStatus !== null ? String(st.rawStatus) : 'aborted';
  const labels = withVia(st, { route: st.route, method: request.method, status });
  const seconds = (performance.now() - st.start) / 1000;
  server.metrics.requests.inc(labels);
  server.metrics.duration.observe(labels, seconds);
  if (server.accessLog) {
    request.log.info(
      {
        method: request.method,
        url: truncate(request.url),
        route: st.route,
        status,
        ms: Math.round(seconds * 1000),
        ip: request.clientIp,
        ...(st.transport === null ? {} : { via: st.transport.via }),
      },
      'request completed',
    );
  }
}
