/**
 * The KERI witness role's first-seen ledger (SPEC §3.6.4, §3.6.6), one narrow interface that both
 * drivers implement (src/store/sqlite/kel-ledger.ts, src/store/postgres/kel-ledger.ts). Events,
 * the key state after each, this node's receipt, the receipts of other backers and the stored
 * duplicity proofs. Writes happen only inside the store's write transaction (StoreTransaction.kel),
 * next to the own-log entries of the same events, so an event is receipted, stored and logged, or
 * absent. Drivers keep bytes and text: they never verify, hash or sign.
 */

/** The `di` of a stored dip (the drivers keep text; this only reads one member). */
export function dipDelegator(event: string): string | null {
  try {
    const di = (JSON.parse(event) as { di?: unknown }).di;
    return typeof di === 'string' ? di : null;
  } catch {
    return null;
  }
}

/**
 * The `--kel-url` set this witness advertises in its OOBI (SPEC §3.6.1), in the order given, and
 * its stamp (`YYYY-MM-DDTHH:MM:SS.ffffff+00:00`): the `dt` of the OOBI replies. Kept as one `meta`
 * row (`kel_urls`), JSON `{"urls":[…],"stamp":…}`, so set and stamp change together.
 */
export interface KelUrlSet {
  urls: string[];
  stamp: string;
}

export const KEL_URLS_META_KEY = 'kel_urls';

export function encodeKelUrlSet(set: KelUrlSet): string {
  return JSON.stringify({ urls: set.urls, stamp: set.stamp });
}

/** The stored row; a row another version wrote in another shape reads as absent. */
export function decodeKelUrlSet(text: string | undefined): KelUrlSet | undefined {
  if (text === undefined) return undefined;
  try {
    const v = JSON.parse(text) as { urls?: unknown; stamp?: unknown };
    if (!Array.isArray(v.urls) || !v.urls.every((u) => typeof u === 'string') || typeof v.stamp !== 'string') return undefined;
    return { urls: v.urls, stamp: v.stamp };
  } catch {
    return undefined;
  }
}

/** Same URLs in the same order (the OOBI lists them in this order, so an order change is a change). */
export function sameKelUrls(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((u, i) => u === b[i]);
}

export type KelEventState = 'accepted' | 'superseded';

/** One stored event of a prefix. */
export interface KelLedgerEvent {
  prefix: string;
  sn: number;
  said: string;
  t: string;
  /** B(e), as received (UTF-8 text). */
  event: string;
  /** The `-A` group, followed by the `-G` group if any. */
  attachment: string;
  state: KelEventState;
  /** This node signed a receipt for it. */
  witnessed: boolean;
  /** keripy's first-seen stamp, `YYYY-MM-DDTHH:MM:SS.ffffff+00:00`. */
  firstSeen: string;
  /** First-seen order within the prefix, from 0. */
  ordinal: number;
  /** The 200 body of POST /receipts (rct + `-C` couple), null when not witnessed. */
  receipt: string | null;
  /** The verifier's state after this event (JSON, src/kel-witness/key-state.ts). */
  keyState: string;
  /** Index of its `kel-event` entry in the own log, null when not witnessed. */
  leafIndex: number | null;
}

/** A backer's signature over a stored event (its own receipt included). */
export interface KelReceipt {
  prefix: string;
  said: string;
  /** Position in the event's backer list. */
  index: number;
  backer: string;
  signature: Uint8Array;
}

/** A stored duplicity proof (JCS text of `anchor-witness/kel-duplicity/v1`). */
export interface KelStoredDuplicity {
  prefix: string;
  sn: number;
  proof: string;
  leafIndex: number;
}

export interface KelLedgerCounts {
  held: number;
  events: number;
  /** Events this node signed a receipt for. */
  witnessed: number;
  duplicities: number;
  bytes: number;
}

/** Reads, on committed state (KelLedgerStorage) or inside a transaction (KelLedgerTx, read-your-writes). */
export interface KelLedgerReads {
  /** The accepted event with the highest sn (the tip), undefined when the prefix is not held. */
  tip(prefix: string): Promise<KelLedgerEvent | undefined>;
  /** The accepted event at sn. */
  accepted(prefix: string, sn: number): Promise<KelLedgerEvent | undefined>;
  /** Any stored event with this SAID. */
  bySaid(prefix: string, said: string): Promise<KelLedgerEvent | undefined>;
  /** Every stored event of the prefix in first-seen order (superseded and unwitnessed included). */
  events(prefix: string): Promise<KelLedgerEvent[]>;
  /** The receipts held for an event, in index order. */
  receipts(prefix: string, said: string): Promise<KelReceipt[]>;
  duplicity(prefix: string, sn: number): Promise<KelStoredDuplicity | undefined>;
  /** Stored proofs of a prefix. */
  duplicityCount(prefix: string): Promise<number>;
  counts(): Promise<KelLedgerCounts>;
  /** Bytes of the prefix's stored events and attachments (superseded and unwitnessed included). */
  prefixBytes(prefix: string): Promise<number>;
  /** Held prefixes whose accepted inception is a `dip` naming `delegator` (the `ledger:` source's `"delegates": true`). */
  delegatesOf(delegator: string): Promise<string[]>;
  /** `kel forget` removed this prefix: its events are refused (kel_prefix_not_allowed). */
  forgotten(prefix: string): Promise<boolean>;
}

export interface KelLedgerStorage extends KelLedgerReads {
  /** Proofs in (prefix, sn) order after (prefix, sn), exclusive. */
  listDuplicities(after: { prefix: string; sn: number } | undefined, limit: number): Promise<KelStoredDuplicity[]>;
  /** Bind the store to this node's KERI witness prefix at the first start; refuse another (store_identity_mismatch). */
  bindPrefix(prefix: string): Promise<void>;
  /**
   * `kel forget` (SPEC §3.6.7): delete the prefix's stored events, receipts and proofs in one
   * transaction and remember the prefix as forgotten (a `meta` row, `kel_forgotten:<prefix>`).
   * Its own-log entries stay. Returns the number of events deleted.
   */
  forget(prefix: string): Promise<number>;
  /** The stored `--kel-url` set and its stamp; undefined before any was stored. */
  kelUrls(): Promise<KelUrlSet | undefined>;
  /**
   * Store `urls` as the `--kel-url` set, atomically across replicas: unchanged (same URLs, same
   * order) keeps the stored set and stamp; otherwise the new stamp is `nextStamp(stored stamp)`
   * (the caller guarantees it is greater). Returns the set in force.
   */
  setKelUrls(urls: readonly string[], nextStamp: (previous: string | undefined) => string): Promise<KelUrlSet>;
}

export interface KelLedgerTx extends KelLedgerReads {
  /** Serialize writers of one prefix across replicas (PostgreSQL advisory lock; SQLite: the write lane already does). */
  lockPrefix(prefix: string): Promise<void>;
  /** Store a new event; a second accepted event at one (prefix, sn) is refused (StoreInvariantError). */
  putEvent(event: Omit<KelLedgerEvent, 'ordinal'>): Promise<KelLedgerEvent>;
  /** Mark accepted events with sn ≥ fromSn superseded (a recovery). */
  supersede(prefix: string, fromSn: number): Promise<void>;
  /** Record this node's receipt of a stored event. */
  setWitnessed(prefix: string, said: string, receipt: string, leafIndex: number): Promise<void>;
  /** Store a backer's receipt unless one is held for (prefix, said, index). */
  putReceipt(receipt: KelReceipt): Promise<void>;
  putDuplicity(proof: KelStoredDuplicity): Promise<void>;
}
