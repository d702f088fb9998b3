/**
 * `--kel-source ledger:` (SPEC §3.6.8): the KERI witness role's first-seen ledger as a §3.5 KEL
 * source. It supplies the accepted events held for the registry file's ids, their delegators
 * (transitively, from the held `dip`s) and the `dip` prefixes delegated by `"delegates": true`
 * entries — never any other held prefix, so controllers of a public witness are no parties. Each
 * prefix's KEL is read again only when its tip changed (the source hash is its accepted SAIDs);
 * reading happens on the main thread (the store's connections live there) and the worker verifies
 * the copy as any other (src/registry/kel-worker.ts, locator kind `ledger`).
 *
 * `watches` tells the registry whether a commit of the ledger for a prefix concerns it (SPEC
 * §3.6.8 "a reload after commits"): a prefix supplied at the last reload, a registry id (held or
 * not yet), or a `dip` delegated by a `"delegates": true` entry.
 */
import { sha256Hex } from '../crypto/sha256.ts';
import type { KelLimits, RawKel } from '../keri/index.ts';
import { dipDelegator, type KelLedgerReads } from '../store/kel-ledger.ts';
import { unreadableKel } from './source.ts';

export const LEDGER_SOURCE = 'ledger:';

/** What the feed reads of the ledger (the store's committed state). */
export type LedgerFeedReads = Pick<KelLedgerReads, 'tip' | 'accepted' | 'events' | 'delegatesOf'>;

/** Delegation levels followed upwards from a listed prefix (§3.5 rule 8 allows 4). */
const MAX_CHAIN = 5;

export class LedgerKelFeed {
  private readonly ledger: LedgerFeedReads;
  /** Per prefix, the tip it was read at and the copy read then. */
  private readonly cache = new Map<string, { tip: string; raw: RawKel }>();
  /** What the last `list` looked for and supplied. */
  private last: { ids: ReadonlySet<string>; delegating: ReadonlySet<string>; listed: ReadonlySet<string> } = {
    ids: new Set(),
    delegating: new Set(),
    listed: new Set(),
  };

  constructor(ledger: LedgerFeedReads) {
    this.ledger = ledger;
  }

  /** The held prefixes to supply: `ids` and their delegators, and the dips delegated by `delegating`. */
  async list(ids: readonly string[], delegating: readonly string[]): Promise<string[]> {
    const out = new Set<string>();
    const add = async (prefix: string): Promise<void> => {
      for (let p: string | null = prefix, depth = 0; p !== null && depth <= MAX_CHAIN && !out.has(p); depth++) {
        const icp = await this.ledger.accepted(p, 0);
        if (icp === undefined) return;
        out.add(p);
        p = icp.t === 'dip' ? dipDelegator(icp.event) : null;
      }
    };
    for (const id of ids) await add(id);
    for (const root of delegating) for (const agent of await this.ledger.delegatesOf(root)) await add(agent);
    for (const p of this.cache.keys()) if (!out.has(p)) this.cache.delete(p);
    this.last = { ids: new Set(ids), delegating: new Set(delegating), listed: out };
    return [...out];
  }

  /**
   * Whether a commit of `prefix` in the ledger may change what the last `list` supplied: a prefix
   * it supplied or looked for, or (one read) a `dip` whose delegator is a delegating entry.
   */
  async watches(prefix: string): Promise<boolean> {
    const { ids, delegating, listed } = this.last;
    if (listed.has(prefix) || ids.has(prefix)) return true;
    if (delegating.size === 0) return false;
    const icp = await this.ledger.accepted(prefix, 0);
    const di = icp?.t === 'dip' ? dipDelegator(icp.event) : null;
    return di !== null && delegating.has(di);
  }

  /** The accepted KEL of a held prefix (null: not held), read again only when its tip moved. */
  async read(prefix: string, limits: KelLimits): Promise<RawKel | null> {
    const tip = await this.ledger.tip(prefix);
    if (tip === undefined) {
      this.cache.delete(prefix);
      return null;
    }
    const key = `${tip.sn}:${tip.said}:${tip.ordinal}`;
    const known = this.cache.get(prefix);
    if (known?.tip === key) return known.raw;
    const accepted = (await this.ledger.events(prefix)).filter((e) => e.state === 'accepted').sort((a, b) => a.sn - b.sn);
    const bytes = accepted.reduce((n, e) => n + e.event.length + e.attachment.length, 0);
    const raw: RawKel =
      accepted.length > limits.maxEvents || bytes > limits.maxBytes
        ? unreadableKel(prefix, LEDGER_SOURCE, 'oversize', `${accepted.length} events, ${bytes} bytes in the ledger`)
        : {
            prefix,
            events: accepted.map((e) => JSON.parse(e.event) as unknown),
            attachments: accepted.map((e) => e.attachment),
            bytes,
            sourceHash: sha256Hex(`ledger\n${accepted.map((e) => e.said).join('\n')}`),
            source: LEDGER_SOURCE,
          };
    this.cache.set(prefix, { tip: key, raw });
    return raw;
  }
}
