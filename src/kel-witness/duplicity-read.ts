/**
 * The stored KEL duplicity proofs (SPEC §3.6.5): `GET /v1/kel/duplicity/{prefix}/{sn}` and the
 * listing `GET /v1/kel/duplicity?after=<prefix>:<sn>&limit=<1..100>`, paged as §3.4's
 * `/v1/duplicity`: `{"items":[proof…],"next"}` in (prefix, sn) order, `after` exclusive, `next` the
 * last (prefix, sn) of a full page (null otherwise), so a monitor finds every proof.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { canonicalize } from '../encoding/jcs.ts';
import { Problem } from '../server/problem-schema.ts';
import { sendProblem } from '../server/problem.ts';
import type { KelLedgerStorage, KelStoredDuplicity } from '../store/kel-ledger.ts';
import { parseSn, validPrefix } from './query-params.ts';
import { KelDuplicityPage, KelDuplicityProofSchema } from './schemas.ts';

export const MAX_PAGE = 100;

/** `after=<prefix>:<sn>` and `limit=<1..100>` (default 100); null when malformed. */
export function parseDuplicityPage(q: {
  after?: unknown;
  limit?: unknown;
}): { after: { prefix: string; sn: number } | undefined; limit: number } | null {
  let limit = MAX_PAGE;
  if (q.limit !== undefined) {
    if (typeof q.limit !== 'string' || !/^[1-9][0-9]{0,2}$/.test(q.limit) || Number(q.limit) > MAX_PAGE) return null;
    limit = Number(q.limit);
  }
  if (q.after === undefined) return { after: undefined, limit };
  if (typeof q.after !== 'string') return null;
  const colon = q.after.lastIndexOf(':');
  const prefix = q.after.slice(0, colon);
  const sn = parseSn(q.after.slice(colon + 1));
  if (colon < 0 || !validPrefix(prefix) || sn === null) return null;
  return { after: { prefix, sn }, limit };
}

/** The page's JCS text; the proofs are stored as JCS. */
export function duplicityPageText(rows: readonly KelStoredDuplicity[], limit: number): string {
  const last = rows.length === limit ? rows[rows.length - 1] : undefined;
  return canonicalize({
    items: rows.map((r) => JSON.parse(r.proof) as unknown),
    next: last === undefined ? null : `${last.prefix}:${last.sn}`,
  });
}

export function registerDuplicityRoutes(scope: FastifyInstance, ledger: KelLedgerStorage): void {
  const json = (reply: FastifyReply, text: string) =>
    reply.code(200).header('content-type', 'application/json').header('access-control-allow-origin', '*').send(text);
  scope.get(
    '/v1/kel/duplicity/:prefix/:sn',
    {
      schema: {
        summary: 'A stored KEL duplicity proof (docs/protocol.md §3.6.5)',
        response: { 200: KelDuplicityProofSchema, '4xx': Problem },
      },
    },
    async (request, reply) => {
      const { prefix, sn } = request.params as { prefix: string; sn: string };
      const n = parseSn(sn);
      if (!validPrefix(prefix) || n === null) return sendProblem(reply, 400, 'malformed_query', 'prefix and a decimal sn');
      const d = await ledger.duplicity(prefix, n);
      if (d === undefined) return sendProblem(reply, 404, 'not_found', 'no stored duplicity proof there');
      return json(reply, canonicalize(JSON.parse(d.proof)));
    },
  );
  scope.get(
    '/v1/kel/duplicity',
    {
      schema: {
        summary: 'Every stored KEL duplicity proof in (prefix, sn) order: ?after=<prefix>:<sn>, exclusive&limit=<1..100, default 100>',
        response: { 200: KelDuplicityPage, '4xx': Problem },
      },
    },
    async (request, reply) => {
      const page = parseDuplicityPage(request.query as { after?: unknown; limit?: unknown });
      if (page === null)
        return sendProblem(reply, 400, 'malformed_query', 'after must be <prefix>:<decimal sn> and limit an integer 1..100');
      return json(reply, duplicityPageText(await ledger.listDuplicities(page.after, page.limit), page.limit));
    },
  );
}
