/**
 * GET /ksn?pre=P (SPEC §3.6.5): the endorsed key-state notice of a held, fully witnessed prefix.
 * One signature per (P, tip SAID): the endorsed reply is cached (bounded, least recently used
 * dropped first), so a read never signs twice for one tip.
 */
import type { FastifyInstance } from 'fastify';
import { decodeQb64, IDENTIFIER_CODES } from '../keri/qb64.ts';
import { sendProblem } from '../server/problem.ts';
import type { KelLedgerReads } from '../store/kel-ledger.ts';
import type { KelIdentity } from './identity.ts';
import { keyStateRecord, ksnReply } from './ksn.ts';
import { endorse } from './replies.ts';

const CACHE_ENTRIES = 1024;

export class KsnReader {
  private readonly cache = new Map<string, string>();
  private readonly ledger: KelLedgerReads;
  private readonly identity: KelIdentity;

  constructor(ledger: KelLedgerReads, identity: KelIdentity) {
    this.ledger = ledger;
    this.identity = identity;
  }

  /** The endorsed `rpy`, or null (404) unless the prefix is held and its tip fully witnessed. */
  async notice(prefix: string): Promise<string | null> {
    const tip = await this.ledger.tip(prefix);
    if (tip === undefined) return null;
    const key = `${prefix}/${tip.said}`;
    const hit = this.cache.get(key);
    if (hit !== undefined) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    const chain = (await this.ledger.events(prefix)).filter((r) => r.state === 'accepted').sort((a, b) => a.sn - b.sn);
    const record = keyStateRecord(
      chain.map((r) => JSON.parse(r.event) as Record<string, unknown>),
      { fn: tip.ordinal, dt: tip.firstSeen },
    );
    // keripy's fullyWitnessed: at least bt receipts held for the latest event.
    const receipts = await this.ledger.receipts(prefix, tip.said);
    if (receipts.length < Number.parseInt(record.bt, 16)) return null;
    const message = ksnReply(this.identity.prefix, record);
    const signature = await this.identity.sign(new TextEncoder().encode(message));
    const body = endorse(message, this.identity.prefix, () => signature);
    this.cache.set(key, body);
    if (this.cache.size > CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    return body;
  }
}

/** Register GET /ksn in the role's route scope (part.ts). */
export function registerKsnRoute(scope: FastifyInstance, ledger: KelLedgerReads, identity: KelIdentity): void {
  const reader = new KsnReader(ledger, identity);
  scope.get(
    '/ksn',
    {
      schema: { summary: "KERI witness: keripy's key-state notice of a held, fully witnessed prefix (rpy /ksn, docs/protocol.md §3.6.5)" },
    },
    async (request, reply) => {
      const pre = (request.query as Record<string, unknown>).pre;
      if (typeof pre !== 'string' || !/^[A-Za-z0-9_-]{44}([A-Za-z0-9_-]{4})?$/.test(pre) || decodeQb64(pre, IDENTIFIER_CODES) === null)
        return sendProblem(reply, 400, 'malformed_query', 'GET /ksn needs pre (a qb64 prefix)');
      const body = await reader.notice(pre);
      if (body === null)
        return sendProblem(reply, 404, 'not_found', 'the prefix is not held here, or its latest event is not fully witnessed');
      return reply.code(200).header('content-type', 'application/cesr').header('access-control-allow-origin', '*').send(Buffer.from(body));
    },
  );
}
