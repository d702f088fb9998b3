/**
 * Problems answered outside fastify: on the raw socket (parse errors, oversized headers, header
 * timeouts, CONNECT) or on a bare ServerResponse (the early checks). The connection then closes.
 *
 * A bad request pipelined behind one whose answer is not written yet is answered after that
 * answer, never in its place (else the client reads the problem as the answer to the earlier
 * request).
 */
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { problemBody, PROBLEM_CONTENT_TYPE } from './problem.ts';
import { connectionOf } from './state.ts';

/** Headers of a problem answered outside fastify; the connection then closes. */
export function rawProblemHeaders(body: string, id: string): Record<string, string> {
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
export function answeringEarlierRequest(socket: Socket): boolean {
  const res = currentResponse(socket);
  return res !== null && !res.writableFinished && (res as { req?: IncomingMessage }).req?.complete === true;
}

/** Write a problem on the raw socket, in order behind any answer still being written, then close it. */
export function writeRawProblem(socket: Socket, status: number, code: string, detail: string, id: string, typeBase: string): void {
  const conn = connectionOf(socket);
  if (answeringEarlierRequest(socket)) {
    // Node's own 'finish' listener runs first and hands the socket to the next queued response, if any.
    if (conn.rawProblemWaiting) return;
    conn.rawProblemWaiting = true;
    currentResponse(socket)!.once('finish', () => {
      conn.rawProblemWaiting = false;
      writeRawProblem(socket, status, code, detail, id, typeBase);
    });
    return;
  }
  if (conn.rawProblemWaiting) return;
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
