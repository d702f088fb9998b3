/**
 * The OOBI reads (SPEC §3.6.5, keripy `OOBIEnd`): this witness's own OOBI (its `icp`, one endorsed
 * `/loc/scheme` reply per `--kel-url`, the endorsed `/end/role/add` naming itself controller) and
 * the witness OOBI of a held prefix (its delegators' KELs, its KEL, this node's `/loc/scheme`
 * replies). The replies are dated with the stored URL set's stamp and built once per stamp: the
 * stored set, not this process's flags, decides the bytes, so replicas sharing a PostgreSQL store
 * serve the same bytes for one stamp (Ed25519 signatures are deterministic).
 */
import { firstSeenGroup, pipelined } from '../keri/cesr-attachments.ts';
import { dipDelegator, type KelLedgerReads, type KelUrlSet } from '../store/kel-ledger.ts';
import type { KelIdentity } from './identity.ts';
import { keyStateRecord } from './ksn.ts';
import { queryKel } from './reads.ts';
import { endorse, endRoleAddReply, locSchemeReply } from './replies.ts';
import { EPOCH_STAMP, urlScheme } from './urls.ts';

/** The endorsed replies of one stamp. */
export interface OobiReplies {
  stamp: string;
  /** One endorsed `/loc/scheme` reply per URL, in the set's order ('' without a stored set). */
  locSchemes: string;
  /** The endorsed `/end/role/add` {cid: B…, role: controller, eid: B…}. */
  endRole: string;
}

/** Build the endorsed replies for a URL set (undefined: none stored yet, dated at the epoch). */
export async function buildOobiReplies(identity: KelIdentity, set: KelUrlSet | undefined): Promise<OobiReplies> {
  const stamp = set?.stamp ?? EPOCH_STAMP;
  const signed = async (message: string): Promise<string> => {
    const signature = await identity.sign(new TextEncoder().encode(message));
    return endorse(message, identity.prefix, () => signature);
  };
  let locSchemes = '';
  for (const url of set?.urls ?? []) locSchemes += await signed(locSchemeReply(identity.prefix, urlScheme(url), url, stamp));
  const endRole = await signed(endRoleAddReply(identity.prefix, 'controller', identity.prefix, stamp));
  return { stamp, locSchemes, endRole };
}

/** The node's own KEL in cloneEvtMsg form: its one `icp`, first seen (ordinal 0) at the epoch (it is rebuilt, never stored). */
export function ownKel(identity: KelIdentity): string {
  return identity.inception.event + pipelined(identity.inception.attachment + firstSeenGroup(0, EPOCH_STAMP));
}

/** How many delegators a witness OOBI follows up the chain at most (a bound, not a protocol rule). */
export const MAX_DELEGATION_DEPTH = 64;

export class KelOobi {
  private readonly identity: KelIdentity;
  private readonly urls: () => Promise<KelUrlSet | undefined>;
  private readonly ledger: KelLedgerReads;
  private cached: Promise<OobiReplies> | undefined;
  private cachedStamp: string | undefined;

  /** `urls` reads the stored URL set (each request: a replica sees another replica's change). */
  constructor(identity: KelIdentity, ledger: KelLedgerReads, urls: () => Promise<KelUrlSet | undefined>) {
    this.identity = identity;
    this.ledger = ledger;
    this.urls = urls;
  }

  /** The endorsed replies of the stored stamp; a stamp change rebuilds (signs) them once. */
  async replies(): Promise<OobiReplies> {
    const set = await this.urls();
    const stamp = set?.stamp ?? EPOCH_STAMP;
    if (this.cached === undefined || this.cachedStamp !== stamp) {
      const building = buildOobiReplies(this.identity, set);
      this.cached = building;
      this.cachedStamp = stamp;
      building.catch(() => {
        if (this.cached === building) this.cached = undefined; // a signer failure is not cached
      });
    }
    return this.cached;
  }

  /** GET /oobi, /oobi/{B…}, /oobi/{B…}/controller. */
  async own(): Promise<string> {
    const r = await this.replies();
    return ownKel(this.identity) + r.locSchemes + r.endRole;
  }

  /**
   * GET /oobi/{aid}/witness[/{B…}]: null (404) unless aid is held and its latest event has at least
   * `bt` receipts here (keripy's fullyWitnessed), and every delegator up its chain is held.
   */
  async witness(aid: string): Promise<string | null> {
    const tip = await this.ledger.tip(aid);
    if (tip === undefined) return null;
    const chain = (await this.ledger.events(aid)).filter((r) => r.state === 'accepted').sort((a, b) => a.sn - b.sn);
    const record = keyStateRecord(
      chain.map((r) => JSON.parse(r.event) as Record<string, unknown>),
      { fn: tip.ordinal, dt: tip.firstSeen },
    );
    if ((await this.ledger.receipts(aid, tip.said)).length < Number.parseInt(record.bt, 16)) return null;
    // The delegators, nearest first, then reversed: root-most first.
    const delegators: string[] = [];
    let inception = chain[0]!;
    while (inception.t === 'dip') {
      const di = dipDelegator(inception.event);
      if (di === null || di === aid || delegators.includes(di) || delegators.length >= MAX_DELEGATION_DEPTH) return null;
      const first = await this.ledger.accepted(di, 0);
      if (first === undefined) return null;
      delegators.push(di);
      inception = first;
    }
    let body = '';
    for (const d of delegators.reverse()) {
      const kel = await queryKel(this.ledger, d, undefined);
      if (kel === null) return null;
      body += kel.join('');
    }
    const kel = await queryKel(this.ledger, aid, undefined);
    if (kel === null) return null;
    return body + kel.join('') + (await this.replies()).locSchemes;
  }
}
