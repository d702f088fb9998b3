/**
 * Admission (docs/http.md "Rate limit", "In-flight bound"): the per-client token bucket (429
 * `rate_limited`, checked in onRequest) and the in-flight slot (taken in preHandler, after the body
 * was read and validated, so slow uploads hold a connection, never a slot). Excess requests wait in
 * a FIFO queue; queue full, or no slot while at least min(100 ms, T/10) of the deadline is left →
 * 503 `overloaded` (nothing was done; safe to retry). Routes with `bypassLimits` skip both.
 */
import type { FastifyReply } from 'fastify';
import { clientKey } from './ip.ts';
import { sendProblem } from './problem.ts';
import { withVia } from './state.ts';
import type { RequestState } from './state.ts';

/** Take a token for the request's client; false when it was refused (429 sent). */
export function admitRate(st: RequestState, reply: FastifyReply): boolean {
  const server = st.server;
  const config = st.config;
  if (server.buckets === null || config.bypassLimits === true || !(config.rateLimit ?? server.rateScope === 'all')) return true;
  const r = server.buckets.take(clientKey(st.ip));
  if (r.ok) return true;
  server.metrics.rejected.inc(withVia(st, { reason: 'rate_limited' }));
  sendProblem(reply, 429, 'rate_limited', `too many requests; retry in ${r.retryAfterSeconds} s`, {
    'retry-after': String(r.retryAfterSeconds),
  });
  return false;
}

/**
 * Give the request an in-flight slot, now or once one is handed to it from the queue, then call
 * `done`; or answer 503 `overloaded`. A client already gone gets neither.
 */
export function admitInFlight(st: RequestState | undefined, reply: FastifyReply, done: () => void): void {
  if (st?.finished === true) return; // the client is gone: do not start work for nobody
  if (st === undefined || st.config.bypassLimits === true) {
    done();
    return;
  }
  const server = st.server;
  const limiter = server.limiter;
  const minStartMs = server.limits.minStartMs;
  if (limiter.tryAcquire()) {
    st.holding = true;
    done();
    return;
  }
  const refuse = (): void => {
    server.metrics.rejected.inc(withVia(st, { reason: 'overloaded' }));
    sendProblem(reply, 503, 'overloaded', 'the server is at capacity; retry later', { 'retry-after': server.retryAfter });
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
}
