/**
 * The one HTTP layer both programs build on (SPEC §2, §6): `createServer` returns a fastify
 * instance whose every route, in any plugin scope, gets the same limits, error format and metrics.
 * This file assembles the parts and adds the hooks on the root instance; the parts and the hooks
 * are listed in docs/http.md.
 */
import { randomUUID } from 'node:crypto';
import { fastify, LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Registry } from 'prom-client';
import { admitInFlight, admitRate } from './admission.ts';
import { installBodyCodecs, needsJson } from './body.ts';
import { nodeServerFactory } from './connections.ts';
import { withDeadline } from './deadline.ts';
import { answerError } from './error-mapping.ts';
import { ServerConfigError } from './errors.ts';
import { formatIp, resolveClientIp } from './ip.ts';
import { resolveLimits } from './options.ts';
import type { App, ServerOptions } from './options.ts';
import { bindProblemTypeBase, isJsonContentType, sendProblem } from './problem.ts';
import { answerNotFound, recordRouteMethods, transportServes } from './routing.ts';
import { beginRequest, bindServerState, createServerState, requestHasBody, requestStateOf, serverStateOf } from './state.ts';
import type { RequestState, ServerState } from './state.ts';

/** Headers on every answer fastify sends. */
function commonHeaders(st: RequestState | undefined, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  reply.header('x-content-type-options', 'nosniff');
  const method = request.method;
  if (method === 'GET' || method === 'HEAD') reply.header('access-control-allow-origin', '*');
  // HTTP/2 has no Connection header (problems that close the connection carry one): an HTTP/2
  // stream with an unread body is reset after its answer instead (http2.ts).
  if (request.raw.httpVersionMajor === 2) {
    reply.removeHeader('connection');
    return;
  }
  const bodyUnread = (st?.hasBody ?? requestHasBody(request.raw)) && !request.raw.complete;
  if (bodyUnread || st?.server.closing === true || reply.statusCode === 408) reply.header('connection', 'close');
}

/** Build the hardened fastify instance. Add routes to it, then `listen`. */
export async function createServer(options: ServerOptions = {}): Promise<App> {
  const limits = resolveLimits(options);
  const state = createServerState(options, limits);

  const fastifyOptions: FastifyServerOptions & Record<string, unknown> = {
    serverFactory: nodeServerFactory(state, options.https ?? null),
    bodyLimit: limits.maxBodyBytes,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    return503OnClosing: false,
    exposeHeadRoutes: true,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    routerOptions: { maxParamLength: 2048 },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false } },
    // Our own 'clientError' listener is installed on every server instance (connections.ts).
    clientErrorHandler: () => undefined,
    frameworkErrors: (error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply) => {
      const st = beginRequest(state, request, reply);
      commonHeaders(st, request, reply);
      if (error.code === 'FST_ERR_BAD_URL') sendProblem(reply, 400, 'malformed_url', 'the request URL is not valid');
      else sendProblem(reply, 404, 'not_found', 'not found');
    },
  };
  const lg = options.logger ?? false;
  if (typeof lg === 'object' && typeof (lg as { child?: unknown }).child === 'function')
    fastifyOptions.loggerInstance = lg as FastifyBaseLogger;
  else fastifyOptions.logger = lg;

  const app = (
    fastify(fastifyOptions as FastifyServerOptions) as unknown as FastifyInstance
  ).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
  state.app = app;
  state.log = app.log;
  bindServerState(app, state);
  bindProblemTypeBase(app, state.typeBase);
  app.decorateRequest('clientIp', '');
  installBodyCodecs(app);
  addHooks(app, state);

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

function addHooks(app: App, state: ServerState): void {
  app.addHook('onRoute', (route) => {
    recordRouteMethods(state, route.method);
    route.handler = withDeadline(route.handler);
  });

  app.addHook('onRequest', (request, reply, done) => {
    const st = beginRequest(state, request, reply);
    if (!admitRate(st, reply)) return;
    if (request.is404) {
      answerNotFound(state, request, reply);
      return;
    }
    if (st.transport !== null && !transportServes(st.transport, request.method, st.route)) {
      answerNotFound(state, request, reply);
      return;
    }
    if (needsJson(request.method, st.config) && !isJsonContentType(request.headers['content-type'])) {
      sendProblem(reply, 415, 'unsupported_media_type', 'the body must be JSON (Content-Type: application/json)');
      return;
    }
    done();
  });

  app.addHook('preHandler', (request, reply, done) => {
    admitInFlight(requestStateOf(request), reply, done);
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    commonHeaders(requestStateOf(request), request, reply);
    done(null, payload);
  });

  app.addHook('preClose', (done) => {
    state.closing = true;
    done();
  });

  app.setNotFoundHandler((request, reply) => {
    beginRequest(state, request, reply);
    return answerNotFound(state, request, reply);
  });

  app.setErrorHandler((error: unknown, request, reply) => answerError(state, error, request, reply));
}

/** The client address of a request (SPEC §2 trust-proxy rule), canonical text. */
export function clientIp(request: FastifyRequest): string {
  if (request.clientIp !== '') return request.clientIp;
  const state = serverStateOf(request.server);
  return formatIp(resolveClientIp(request.raw.socket.remoteAddress, request.raw.headers['x-forwarded-for'], state?.trusted ?? null));
}

function stateOf(app: FastifyInstance | App): ServerState {
  const state = serverStateOf(app);
  if (state === undefined) throw new ServerConfigError('invalid_option', 'not a server built by createServer');
  return state;
}

/** The metrics registry a server reports to. */
export function metricsRegistry(app: FastifyInstance | App): Registry {
  return stateOf(app).registry;
}

/** Current in-flight and queue counts (for /health pages and tests). */
export function loadSnapshot(app: FastifyInstance | App): { inFlight: number; queued: number; connections: number } {
  const state = stateOf(app);
  let connections = 0;
  for (const n of state.perIp.values()) connections += n;
  return { inFlight: state.limiter.inFlight, queued: state.limiter.queued, connections };
}

/** `GET /metrics` in Prometheus text format; bypasses the queue and the rate limit. */
export function registerMetricsRoute(app: App, opts: { path?: string; registry?: Registry } = {}): void {
  const registry = opts.registry ?? metricsRegistry(app);
  app.get(opts.path ?? '/metrics', { config: { bypassLimits: true }, schema: { hide: true } }, async (_request, reply) => {
    const text = await registry.metrics();
    return reply.header('content-type', registry.contentType).header('cache-control', 'no-store').send(text);
  });
}
