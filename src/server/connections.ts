/**
 * Connection hardening: the Node server behind fastify (our `serverFactory`; fastify then makes no
 * extra 'localhost' bindings).
 *
 *   requestTimeout = headersTimeout = T, connectionsCheckingInterval ≤ 250 ms (Node only looks
 *   every interval), keepAliveTimeout (the idle close rechecked after pending reads), maxHeaderSize 16 KiB, TLS handshakeTimeout = min(T, 10 s),
 *   maxConnections (Node closes the excess at accept) and a per-client-IP connection cap on
 *   'connection' (trusted proxies exempt; the excess is answered 503, over-cap.ts);
 *   'clientError' (parse errors, header/body timeouts, oversized headers or chunk extensions) →
 *   problem+json 400/408/413/431 written on the raw socket; 'checkExpectation', 'checkContinue',
 *   'connect' and upgrade requests answered by us, not Node (early.ts), before routing.
 */
import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { AFTER_UPGRADE_PROBLEM, CONNECT_PROBLEM, earlyProblem } from './early.ts';
import type { EarlyProblem } from './early.ts';
import { hookParser } from './first-byte.ts';
import { clientKey, parseIp } from './ip.ts';
import { arrivedOverCap, holdOverCap, overCapProblem } from './over-cap.ts';
import { problemBody } from './problem.ts';
import { answeringEarlierRequest, rawProblemHeaders, writeRawProblem } from './raw-answer.ts';
import { connectionOf } from './state.ts';
import type { ServerState } from './state.ts';

/** The `serverFactory` fastify calls: a Node http(s) server with every hardening above. */
export function nodeServerFactory(state: ServerState, tls: https.ServerOptions | null): (handler: http.RequestListener) => http.Server {
  const { requestTimeoutMs, keepAliveTimeoutMs } = state.limits;
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
      connectionOf(req.socket).upgradeRequest = req;
      return false;
    },
  };
  return (handler) => {
    // Version, Host and expectation checks, and the upgrade rule (early.ts), before routing.
    // `via`: the Node event that delivered the request ('checkContinue': 100 Continue is sent only
    // to a request that passes, so a refused one is not invited to send its body).
    const checked = (req: IncomingMessage, res: ServerResponse, via: 'request' | 'checkExpectation' | 'checkContinue'): void => {
      if (arrivedOverCap(req, res)) {
        const { id, body } = earlyAnswer(state, req.socket.remoteAddress, overCapProblem(state));
        res.writeHead(503, { ...rawProblemHeaders(body, id), 'Retry-After': String(state.limits.retryAfterSeconds) });
        res.end(body);
        return;
      }
      const upgrade = connectionOf(req.socket).upgradeRequest;
      const problem = upgrade !== null && upgrade !== req ? AFTER_UPGRADE_PROBLEM : earlyProblem(req, via === 'checkExpectation');
      if (problem === null) {
        if (upgrade === req) res.shouldKeepAlive = false; // the bytes after it may be lost: close after the answer
        if (via === 'checkContinue') res.writeContinue();
        handler(req, res);
        return;
      }
      const { id, body } = earlyAnswer(state, req.socket.remoteAddress, problem);
      res.writeHead(problem.status, rawProblemHeaders(body, id));
      res.end(body);
    };
    const onRequest: http.RequestListener = (req, res) => {
      checked(req, res, 'request');
    };
    const server =
      tls !== null
        ? https.createServer({ ...tls, ...httpOptions, handshakeTimeout: Math.min(requestTimeoutMs, 10_000) }, onRequest)
        : http.createServer(httpOptions, onRequest);
    server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
      checked(req, res, 'checkExpectation');
    });
    server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      checked(req, res, 'checkContinue');
    });
    server.on('connect', (_req: IncomingMessage, socket: Socket) => {
      socket.on('error', () => socket.destroy()); // Node has removed its own listener
      const { id } = earlyAnswer(state, socket.remoteAddress, CONNECT_PROBLEM);
      writeRawProblem(socket, CONNECT_PROBLEM.status, CONNECT_PROBLEM.code, CONNECT_PROBLEM.detail, id, state.typeBase);
    });
    hardenServer(state, server, tls !== null);
    return server;
  };
}

/** Count and log an early answer; its request id and problem body. */
function earlyAnswer(state: ServerState, ip: string | undefined, p: EarlyProblem): { id: string; body: string } {
  state.metrics.requests.inc({ route: 'other', method: 'other', status: String(p.status) });
  const id = randomUUID();
  state.log?.info({ reqId: id, status: p.status, ip, reason: p.detail }, 'client error');
  return { id, body: JSON.stringify(problemBody(p.status, p.code, p.detail, state.typeBase)) };
}

/** Timeouts, connection caps and the 'clientError' answer on one Node server. */
function hardenServer(state: ServerState, server: http.Server | https.Server, tls: boolean): void {
  const { requestTimeoutMs, keepAliveTimeoutMs, maxConnections, maxConnectionsPerIp } = state.limits;
  const { metrics, perIp, trusted } = state;
  state.servers.add(server);
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
    state.sockets.add(socket);
    socket.once('close', () => {
      metrics.openConnections.dec();
      state.sockets.delete(socket);
    });
    const ip = parseIp(socket.remoteAddress ?? '');
    if (ip === null || (trusted !== null && trusted.contains(ip))) return; // unix socket, or our proxy
    const key = clientKey(ip);
    const n = perIp.get(key) ?? 0;
    if (n >= maxConnectionsPerIp) {
      metrics.rejected.inc({ reason: 'connections' });
      holdOverCap(state, socket, key); // its first request is answered 503, then it closes
      return;
    }
    perIp.set(key, n + 1);
    socket.once('close', () => {
      const c = (perIp.get(key) ?? 1) - 1;
      if (c <= 0) perIp.delete(key);
      else perIp.set(key, c);
    });
  });
  if (tls) {
    server.on('secureConnection', (socket: Socket) => {
      hookParser(socket);
    });
  }
  // The keep-alive idle timeout. Node destroys an idle socket from a timer; after the event loop
  // was stalled (CPU starvation, a long synchronous task), due timers run before the reads that
  // waited, so a request sent in time on a kept-alive connection was cut unanswered. With this
  // listener Node leaves the socket to us: it closes only if nothing arrived by the poll phase.
  server.on('timeout', (socket: Socket) => {
    const seen = socket.bytesRead;
    setImmediate(() => {
      if (socket.bytesRead === seen) socket.destroy();
    });
  });
  server.on('clientError', (err: Error & { code?: string }, socket: Socket) => {
    onClientError(state, err, socket);
  });
}

/** A request Node could not read: answer on the raw socket and close. */
function onClientError(state: ServerState, err: Error & { code?: string }, socket: Socket): void {
  const code = err.code;
  if (code === 'ECONNRESET' || code === 'EPIPE' || socket.destroyed) {
    socket.destroy();
    return;
  }
  const metrics = state.metrics;
  let status = 400;
  let pcode = 'malformed_request';
  let detail = 'the request could not be parsed';
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    pcode = 'request_timeout';
    detail = `the request was not received within ${state.limits.requestTimeoutMs} ms`;
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
  const st = answeringEarlierRequest(socket) ? null : connectionOf(socket).active;
  if (st !== null)
    st.rawStatus = status; // counted when that request's response closes
  else metrics.requests.inc({ route: 'other', method: 'other', status: String(status) });
  const id = st?.id ?? randomUUID();
  state.log?.info({ reqId: id, code, status, ip: socket.remoteAddress }, 'client error');
  writeRawProblem(socket, status, pcode, detail, id, state.typeBase);
}
