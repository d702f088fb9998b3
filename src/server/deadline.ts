/**
 * The request deadline around handlers (docs/http.md "Deadline"): an async handler still running
 * at first byte + T is answered 408 `request_timeout` (outcome unknown), and the request's
 * deadline signal aborts so the work it left behind can stop. fastify's own handlerTimeout is not
 * used: it misses requests with a body.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { HttpProblem } from './errors.ts';
import { requestStateOf, withVia } from './state.ts';

const wrappedHandlers = new WeakSet<object>();

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

/** Race an async handler against the request deadline (idempotent: a wrapped handler is returned as is). */
export function withDeadline(handler: RouteHandlerMethod): RouteHandlerMethod {
  if (wrappedHandlers.has(handler)) return handler;
  const wrapped: RouteHandlerMethod = function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply): unknown {
    const result: unknown = handler.call(this, request, reply);
    const st = requestStateOf(request);
    if (st === undefined || !isThenable(result)) return result;
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          if (reply.raw.headersSent) return; // already answering; let it finish
          if (st.ac !== null && !st.ac.signal.aborted) st.ac.abort();
          st.server.metrics.rejected.inc(withVia(st, { reason: 'request_timeout' }));
          reject(
            new HttpProblem(
              408,
              'request_timeout',
              `the request did not complete within ${st.server.limits.requestTimeoutMs} ms; its outcome is unknown (an identical retry is safe where the route is idempotent)`,
              { connection: 'close' },
            ),
          );
        },
        Math.max(0, st.deadline - performance.now()),
      );
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

/**
 * Aborted when the request's deadline passes (the client got 408) or the client goes away. Handlers
 * pass it to long waits so abandoned work stops.
 */
export function deadlineSignal(request: FastifyRequest): AbortSignal {
  const st = requestStateOf(request);
  if (st === undefined) return new AbortController().signal;
  if (st.ac === null) {
    st.ac = new AbortController();
    if (st.finished) st.ac.abort();
  }
  return st.ac.signal;
}
