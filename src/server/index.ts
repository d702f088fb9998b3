/**
 * The shared HTTP layer (SPEC §2 errors/limits/hardening, §6 metrics) both programs build on.
 *
 * Usage:
 *   const app = await createServer({ maxBodyBytes, requestTimeoutMs, rateLimit, trustProxy, logger,
 *                                    metrics: registry, problemTypeBase, mapError, openapi });
 *   app.get('/health', { config: { bypassLimits: true } }, …);
 *   app.post('/v1/anchor', { schema: { body: AnchorRequest }, config: { bigIntegerKeys: ['cumulative'] } }, …);
 *   registerMetricsRoute(app);
 *   const { url } = await listen(app, { host, port });
 *   … await closeGracefully(app, { timeoutMs: 10_000 });
 *
 * Decisions the SPEC leaves open (the project docs should repeat them):
 *  - HEAD is implied by GET (fastify `exposeHeadRoutes`); `Allow` lists it (`GET, HEAD`).
 *  - OPTIONS on a known path is 405 with `Allow`; on an unknown path 404. No CORS preflight.
 *  - CORS: `Access-Control-Allow-Origin: *` on every GET/HEAD response (errors, 404, 429, 503
 *    included); never on other methods. The raw-socket 408/431/400 answers (written before a
 *    request exists) carry no CORS header.
 *  - Problem `type` = `problemTypeBase + code` (default `urn:anchor-witness:problem:`); `title` is
 *    the code in words. Bodies have exactly type/title/status/detail/code.
 *  - Validation: ajv with `removeAdditional: false, coerceTypes: false, useDefaults: false`
 *    everywhere. Path and query values are strings: declare them as `Type.String({ pattern })` and
 *    convert in the handler. Codes: body → malformed_body, querystring → malformed_query,
 *    params → malformed_params, headers → malformed_headers; override per route with
 *    `config.validationCodes` (e.g. `{ params: 'malformed_seed' }`). The detail starts with the
 *    JSON pointer of the first failure; a missing member points at the member itself.
 *  - A "JSON route" is any POST/PUT/PATCH route without `config.rawBody`: it needs a JSON content
 *    type (`application/json` or `application/*+json`, charset UTF-8 if given) even with an empty
 *    body → else 415 before the body is read. `config.rawBody: true` delivers a Buffer whatever
 *    the content type (C2SP /add-checkpoint ignores it).
 *  - Request deadline T (`requestTimeoutMs`) runs from the request's first byte (recorded by a
 *    hook on Node's HTTP parser; falls back to "headers complete" if Node's internals change).
 *    Receiving headers + body is bounded by Node (`requestTimeout = headersTimeout = T`, checked
 *    every ≤ 250 ms) → 408 written on the socket, connection closed. Queue wait + handler are
 *    bounded by the same deadline: a queued request that cannot start with at least min(100 ms,
 *    T/10) left gets 503 `overloaded` (nothing was done; safe to retry); an async handler still
 *    running at the deadline gets 408 `request_timeout` — for POST /v1/anchor that means "outcome
 *    unknown": resend the identical request (replay). The handler keeps running in the background
 *    (JavaScript cannot cancel it); `deadlineSignal(request)` aborts at that moment so store waits
 *    can stop. Handlers must be async (return a promise) to be covered.
 *  - In-flight slots are taken in preHandler, after the body is read and validated, so slow
 *    uploads hold connections, never slots; slots are released on the raw response's 'close'
 *    (finished, timed out or aborted). A timed-out handler's slot is released when its 408 is sent.
 *  - Per-IP limits (connections, rate limit) key IPv4 by address and IPv6 by /64. Peers inside
 *    `trustProxy` are exempt from the per-IP connection cap (a proxy carries many clients);
 *    `maxConnections` still bounds them.
 *  - Rate limit: one token bucket per client key across all limited routes; `scope: 'all'`
 *    (default: every route except `bypassLimits` / `rateLimit: false`, unknown paths included) or
 *    `'opt-in'` (only `rateLimit: true` routes — the bridge's /token). Flag `RPS[:BURST]`, default
 *    burst max(1, ⌈2×RPS⌉) (bridge default 10 → 20). Retry-After = whole seconds to the next token.
 *  - Metrics `status` label is the numeric status, or `aborted` when the client left before any
 *    response. Keep-alive idle: Node 24 closes `keepAliveTimeout` + 1 s (keepAliveTimeoutBuffer)
 *    after the last response; the `Keep-Alive: timeout=` header advertises `keepAliveTimeout`.
 *  - Errors a handler throws: HttpProblem → as given; `mapError` hook next (servers map their
 *    ProtocolError codes); then built-ins (JsonError/EncodingError → 400, fastify 4xx, errors with
 *    `code === 'store_unavailable'` → 503 + Retry-After); anything else → 500 `internal` whose
 *    detail names the request id, logged at error level with that `reqId`. Headers a handler set
 *    before failing are dropped from the problem response.
 *  - Shutdown: requests on open connections are still served (with `Connection: close`); idle
 *    keep-alive sockets are closed at once; after `timeoutMs` every connection is cut.
 *  - `listen(app, { host: 'localhost' })` binds only the first address localhost resolves to
 *    (fastify makes no extra bindings when a serverFactory is used). Give an explicit address, or
 *    `::` for dual-stack.
 */
export { createServer, listen, closeGracefully, clientIp, deadlineSignal, registerMetricsRoute, metricsRegistry, loadSnapshot } from './server.ts';
export type { App, ServerOptions, RateLimitOptions, ErrorMapper, ValidationCodes, ListenInfo } from './server.ts';
export { HttpProblem, ServerConfigError } from './errors.ts';
export { sendProblem, problemBody, isJsonContentType, titleForCode, PROBLEM_CONTENT_TYPE, DEFAULT_PROBLEM_TYPE_BASE } from './problem.ts';
export type { Problem, ProblemInit } from './problem.ts';
export { parseRateLimit, defaultBurst, TokenBuckets } from './rate-limit.ts';
export type { RateLimitSpec, TakeResult } from './rate-limit.ts';
export { CidrSet, parseCidr, parseIp, formatIp, normalizeIp, clientKey, resolveClientIp } from './ip.ts';
export type { Cidr, IpBytes } from './ip.ts';
export { InFlightLimiter } from './in-flight.ts';
export { createHttpMetrics, REJECT_REASONS } from './metrics.ts';
export type { HttpMetrics, RejectReason } from './metrics.ts';
