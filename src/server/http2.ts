/**
 * HTTP/2 sessions served by the app: a connection the node dialled itself and on which it is the
 * HTTP/2 server (a C2SP https-bastion connection, SPEC §5.6; src/bastion). Each stream becomes a
 * compat request/response pair handed to fastify's router, so it passes the same hooks as a
 * request from the listener: rate limit, in-flight queue, body cap, handler deadline, error bodies,
 * metrics (label `via`) and access log. What the listener's Node http server does for an HTTP/1.1
 * connection is done here per stream (docs/http.md "HTTP/2 through a bastion"):
 *
 *  - the deadline covers the body: a stream whose request is not complete at its first byte + T
 *    is answered 408 `request_timeout`, and a stream still open at first byte + T + 5 s is reset
 *    (RST_STREAM CANCEL), so a peer that stops reading cannot hold an in-flight slot;
 *  - an answer sent while the peer is still sending the request body (413, 404, 429, …) is
 *    followed by RST_STREAM NO_ERROR (RFC 9113 §8.1), HTTP/2's "closed without reading the rest";
 *  - `Expect` other than 100-continue is 417 and CONNECT is 400, as on the listener (early.ts);
 *  - a body of unknown length (no content-length, HEADERS without END_STREAM) is read: fastify
 *    decides whether there is a body from HTTP/1.1 headers, so the compat headers get
 *    `transfer-encoding: chunked`, a header HTTP/2 forbids on the wire (no peer can send it).
 *
 * The session settings cap concurrent streams at --max-in-flight and the header list at 16 KiB
 * (the listener's maxHeaderSize).
 */
import http2 from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { IncomingHttpHeaders, ServerHttp2Session, ServerHttp2Stream } from 'node:http2';
import { randomUUID } from 'node:crypto';
import { CONNECT_PROBLEM, expectationProblem } from './early.ts';
import type { EarlyProblem } from './early.ts';
import type { IpBytes } from './ip.ts';
import type { App } from './options.ts';
import { problemBody } from './problem.ts';
import { rawProblemHeaders } from './raw-answer.ts';
import { requestStateOfRaw, serverStateOf, setTransport } from './state.ts';
import type { ServerState, Transport } from './state.ts';

/** After the deadline, a stream still open this long later is reset. */
export const STREAM_GRACE_MS = 5_000;
const MAX_HEADER_LIST_SIZE = 16_384;

export interface Http2Serving {
  /** metrics and access-log label `via` */
  readonly via: string;
  /** the routes served (HEAD wherever GET); any other path is 404 */
  readonly routes: Transport['routes'];
  /** the client address of one stream, from its headers and the session's peer address */
  readonly clientIp: (headers: IncomingHttpHeaders, peer: string | undefined) => IpBytes;
}

function stateOf(app: App): ServerState {
  const state = serverStateOf(app);
  if (state === undefined) throw new Error('not a server built by createServer');
  return state;
}

/** The settings for `http2.performServerHandshake` on a connection this app will serve. */
export function http2SessionSettings(app: App): http2.Settings {
  return { maxConcurrentStreams: stateOf(app).limits.maxInFlight, maxHeaderListSize: MAX_HEADER_LIST_SIZE };
}

/** The headers of a problem answered outside fastify, without HTTP/1.1's `Connection`. */
function problemHeaders(body: string, id: string): Record<string, string> {
  const h = { ...rawProblemHeaders(body, id) };
  delete h.Connection;
  return h;
}

/** Answer a stream that never reaches the router (CONNECT, an unmet expectation). */
function answerEarly(state: ServerState, stream: ServerHttp2Stream, p: EarlyProblem, via: string): void {
  state.metrics.requests.inc({ route: 'other', method: 'other', status: String(p.status), via });
  const id = randomUUID();
  state.log?.info({ reqId: id, status: p.status, via, reason: p.detail }, 'client error');
  const body = JSON.stringify(problemBody(p.status, p.code, p.detail, state.typeBase));
  stream.respond({ ':status': p.status, ...problemHeaders(body, id) });
  stream.end(body);
}

/** Serve every stream of `session` through the app's router. */
export function serveHttp2Session(app: App, session: ServerHttp2Session, serving: Http2Serving): void {
  const state = stateOf(app);
  session.on('stream', (stream, headers, _flags, rawHeaders) => {
    onStream(app, state, serving, session, stream, headers, rawHeaders);
  });
}

function onStream(
  app: App,
  state: ServerState,
  serving: Http2Serving,
  session: ServerHttp2Session,
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  rawHeaders: string[],
): void {
  const start = performance.now();
  stream.on('error', () => undefined); // a reset by the peer; the compat objects report the rest
  if (headers[':method'] === 'CONNECT' || typeof headers[':path'] !== 'string') {
    answerEarly(state, stream, CONNECT_PROBLEM, serving.via);
    return;
  }
  if (headers.expect !== undefined) {
    const p = expectationProblem(headers.expect);
    if (p !== null) {
      answerEarly(state, stream, p, serving.via);
      return;
    }
  }
  if (!stream.endAfterHeaders && headers['content-length'] === undefined) headers['transfer-encoding'] = 'chunked';
  const req = new http2.Http2ServerRequest(stream, headers, {}, rawHeaders);
  const res = new http2.Http2ServerResponse(stream);
  const transport: Transport = {
    via: serving.via,
    ip: serving.clientIp(headers, session.socket.remoteAddress),
    routes: serving.routes,
    start,
  };
  setTransport(req, transport);
  if (headers.expect !== undefined) res.writeContinue();

  // The deadline for the body, then the hard stop.
  const deadline = start + state.limits.requestTimeoutMs;
  let timer: ReturnType<typeof setTimeout> | undefined = setTimeout(
    () => {
      timer = setTimeout(() => {
        if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
      }, STREAM_GRACE_MS);
      if (res.headersSent || req.complete) return; // the handler's own deadline (deadline.ts) answers
      const st = requestStateOfRaw(req);
      const id = st?.id ?? randomUUID();
      state.metrics.rejected.inc({ reason: 'request_timeout', via: serving.via });
      const body = JSON.stringify(
        problemBody(408, 'request_timeout', `the request was not received within ${state.limits.requestTimeoutMs} ms`, state.typeBase),
      );
      res.writeHead(408, problemHeaders(body, id));
      res.end(body);
    },
    Math.max(0, deadline - performance.now()),
  );
  stream.once('close', () => {
    clearTimeout(timer);
    timer = undefined;
  });
  // An answer sent while the peer is still sending its body: ask it to stop. After the answer's
  // last frame is out (the next turn, as Node's own close of unread streams does); never when the
  // peer has finished sending (END_STREAM received), where a reset could only race the answer.
  stream.once('finish', () => {
    setImmediate(() => {
      if (!stream.closed && !stream.destroyed && stream.state.remoteClose !== 1) stream.close(http2.constants.NGHTTP2_NO_ERROR);
    });
  });
  // fastify serves compat HTTP/2 objects (its `http2` mode runs the same router on them); the
  // app's types name the HTTP/1.1 ones.
  app.routing(req as unknown as IncomingMessage, res as unknown as ServerResponse);
}
