/**
 * Liveness and readiness (SPEC §1.1), for both programs; both routes bypass the queue and the
 * rate limits:
 *   GET /live  → 200 {"live":true} while the process serves HTTP at all;
 *   GET /ready → 200 {"ready":true} when the store's last write or health probe succeeded (the
 *                StoreHealth state, probed at most every 5 s, never per request) and every signer
 *                needed to serve is `ok`; else 503 `not_ready` naming the failures.
 * `/health` stays 200 (`degraded` while a signer is down) and lists `signers` (src/keys/signer.ts
 * SignerStatus); a load balancer should route by `/ready`, a container HEALTHCHECK by `/health`.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { SignerStatus } from '../keys/signer.ts';
import { Problem } from './problem-schema.ts';
import { sendProblem } from './problem.ts';

export interface ReadinessSources {
  /** The signers needed to serve (witness, next witness, cosign, kel; bridge: the active key). */
  signers: () => readonly { status(): SignerStatus }[];
  /** False while the store is down (StoreHealth); undefined = no store to watch. */
  storeUp?: () => boolean;
  /** Other reasons not to serve, each named (the bridge: a clock too far from its database's). */
  other?: () => readonly string[];
}

export const SignerStatusSchema = Type.Object({
  key: Type.String(),
  ref: Type.String(),
  state: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  since: Type.String(),
  last_error: Type.Union([Type.String(), Type.Null()]),
});

/** Why the node is not ready (empty = ready). */
export function readinessFailures(src: ReadinessSources): string[] {
  const out: string[] = [];
  if (src.storeUp !== undefined && !src.storeUp()) out.push('store: down');
  for (const s of src.signers()) {
    const st = s.status();
    if (st.state !== 'ok') out.push(`signer ${st.key}: ${st.last_error ?? 'unavailable'}`);
  }
  out.push(...(src.other?.() ?? []));
  return out;
}

export function registerReadinessRoutes(app: FastifyInstance, src: ReadinessSources): void {
  app.get(
    '/live',
    {
      schema: { summary: 'Liveness: 200 while the process serves HTTP', response: { 200: Type.Object({ live: Type.Literal(true) }) } },
      config: { bypassLimits: true },
    },
    async (_req, reply) => reply.type('application/json; charset=utf-8').send({ live: true }),
  );
  app.get(
    '/ready',
    {
      schema: {
        summary: 'Readiness: 200 when the store is writable and the signers needed to serve are ok, else 503 not_ready naming the failures',
        response: { 200: Type.Object({ ready: Type.Literal(true) }), 503: Problem },
      },
      config: { bypassLimits: true },
    },
    async (_req, reply) => {
      const failures = readinessFailures(src);
      if (failures.length === 0) return reply.type('application/json; charset=utf-8').send({ ready: true });
      return sendProblem(reply, 503, 'not_ready', `not ready: ${failures.join('; ')}`, { 'retry-after': '5' });
    },
  );
}
