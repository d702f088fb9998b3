/**
 * Connections over the per-IP cap (SPEC §2: 64 per client IP) get an HTTP answer, not a bare
 * close: their first request is answered 503 `overloaded` with `Retry-After` and
 * `Connection: close`, before routing (nothing is done, so a retry is safe), and the connection
 * closes. Why (docs/http.md "Connections over the cap"): a server whose event loop was starved
 * accepts a whole backlog at once, so a client's ordinary burst of concurrent requests goes past
 * the cap although, on a quiet machine, its connections come and go one by one; destroying them at
 * accept lost those requests with no status (`ECONNRESET`, "other side closed").
 *
 * Bounds: a connection over the cap has `overCapGraceMs` (min(2 s, T)) to deliver its first
 * request head, and a client key holds at most another cap's worth of such connections; beyond
 * that, connections are closed at accept as before. The grace timer is checked after the event
 * loop's next poll phase: after a stall, timers run before the reads that were waiting, and a
 * request that arrived in time must not be cut because the server was slow to read it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { EarlyProblem } from './early.ts';
import { connectionOf } from './state.ts';
import type { ServerState } from './state.ts';

/** How long a connection over the per-IP cap may take to deliver its first request head. */
export function overCapGraceMs(requestTimeoutMs: number): number {
  return Math.min(2_000, requestTimeoutMs);
}

/**
 * Keep a connection that is over its client key's cap for one 503 answer (or close it at once when
 * the key already holds a cap's worth of those). The caller has counted the rejection.
 */
export function holdOverCap(state: ServerState, socket: Socket, key: string): void {
  const excess = state.perIpExcess.get(key) ?? 0;
  if (excess >= state.limits.maxConnectionsPerIp) {
    socket.destroy();
    return;
  }
  state.perIpExcess.set(key, excess + 1);
  const conn = connectionOf(socket);
  conn.overCap = true;
  const timer = setTimeout(() => {
    // Let the poll phase read what is waiting (a request that came while the loop was stalled) first.
    setImmediate(() => {
      if (!conn.requestSeen) socket.destroy();
    });
  }, overCapGraceMs(state.limits.requestTimeoutMs));
  timer.unref();
  socket.once('close', () => {
    clearTimeout(timer);
    const c = (state.perIpExcess.get(key) ?? 1) - 1;
    if (c <= 0) state.perIpExcess.delete(key);
    else state.perIpExcess.set(key, c);
  });
}

/** The answer to a request on a connection over the per-IP cap. */
export function overCapProblem(state: ServerState): EarlyProblem {
  const cap = state.limits.maxConnectionsPerIp;
  return {
    status: 503,
    code: 'overloaded',
    detail: `more than ${cap} open connections from this client; nothing was done: retry after ${state.limits.retryAfterSeconds} s, and reuse connections (keep-alive) or send fewer at once`,
  };
}

/** True (and the request marked seen) when `req` arrived on a connection over the cap. */
export function arrivedOverCap(req: IncomingMessage, res: ServerResponse): boolean {
  const conn = connectionOf(req.socket);
  conn.requestSeen = true;
  if (!conn.overCap) return false;
  res.shouldKeepAlive = false;
  return true;
}
