/**
 * GET /v1/kel/event?pre=P&(sn=N|said=D) (SPEC §3.6.5): one stored event as this node holds it —
 * the event, its stored attachment, accepted or superseded, witnessed or not, its first-seen time,
 * the receipt (the CESR 200 body of POST /receipts) and, for a witnessed event, the inclusion of its
 * `kel-event` own-log entry (§3.3's inclusion object) in the current checkpoint. A client checks
 * that inclusion with any tlog verifier (test/kel-witness/go-inclusion: Go x/mod).
 */
import type { FastifyInstance } from 'fastify';
import { decodeQb64, IDENTIFIER_CODES } from '../keri/qb64.ts';
import type { InclusionBody, TransparencyLog } from '../log/log.ts';
import { sendProblem } from '../server/problem.ts';
import type { WitnessStore } from '../store/types.ts';

export interface KelEventView {
  event: unknown;
  attachment: string;
  state: 'accepted' | 'superseded';
  witnessed: boolean;
  first_seen: string;
  receipt: string | null;
  inclusion: InclusionBody | null;
}

const PREFIX = /^[A-Za-z0-9_-]{44}([A-Za-z0-9_-]{4})?$/;

/** The view, or null when no such event is stored. `sn` selects the accepted event at sn. */
export async function kelEventView(
  log: TransparencyLog<WitnessStore>,
  prefix: string,
  which: { sn: number } | { said: string },
): Promise<KelEventView | null> {
  const ledger = log.store.kelLedger;
  const row = 'sn' in which ? await ledger.accepted(prefix, which.sn) : await ledger.bySaid(prefix, which.said);
  if (row === undefined) return null;
  let inclusion: InclusionBody | null = null;
  if (row.leafIndex !== null) {
    const checkpoint = await log.checkpoint();
    if (checkpoint !== undefined && checkpoint.size > row.leafIndex) inclusion = await log.inclusionBody(row.leafIndex, checkpoint);
  }
  return {
    event: JSON.parse(row.event) as unknown,
    attachment: row.attachment,
    state: row.state,
    witnessed: row.witnessed,
    first_seen: row.firstSeen,
    receipt: row.receipt,
    inclusion,
  };
}

export function registerKelEventRoute(app: FastifyInstance, log: TransparencyLog<WitnessStore>): void {
  app.get(
    '/v1/kel/event',
    { schema: { summary: "A stored KERI event with its receipt and its own-log entry's inclusion proof (docs/protocol.md §3.6.5)" } },
    async (request, reply) => {
      const q = request.query as Record<string, unknown>;
      const sn = typeof q.sn === 'string' && /^(?:0|[1-9][0-9]{0,14})$/.test(q.sn) ? Number(q.sn) : q.sn === undefined ? undefined : null;
      const said = q.said;
      if (
        typeof q.pre !== 'string' ||
        !PREFIX.test(q.pre) ||
        decodeQb64(q.pre, IDENTIFIER_CODES) === null ||
        sn === null ||
        (sn === undefined) === (said === undefined) ||
        (said !== undefined && (typeof said !== 'string' || decodeQb64(said, ['E']) === null))
      )
        return sendProblem(reply, 400, 'malformed_query', 'GET /v1/kel/event needs pre and exactly one of sn (decimal) or said');
      const view = await kelEventView(log, q.pre, sn !== undefined ? { sn } : { said: said as string });
      if (view === null) return sendProblem(reply, 404, 'not_found', 'no such event is stored here');
      return reply
        .code(200)
        .header('content-type', 'application/json')
        .header('access-control-allow-origin', '*')
        .header('cache-control', 'no-store')
        .send(JSON.stringify(view));
    },
  );
}
