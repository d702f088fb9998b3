/**
 * The witness's durable state, one narrow interface per concern, each implemented by both drivers
 * (SQLite: src/store/sqlite/, the default; PostgreSQL: src/store/postgres/, for replicas):
 *
 *   LogStorage          the log's bytes: entries, complete-subtree hashes, the signed checkpoint
 *   AnchorStateStorage  anchor chains: seed records, party usage (quota windows), duplicity proofs,
 *                       and the highest accepted KEL tip per identifier (kel_tips, SPEC §3.5)
 *   CosignStateStorage  the cosign role: per-origin state (compare-and-swap), evidence
 *   LogWitnessStorage   the witnessed own log (SPEC §4.1): peers' state, cosignatures, published size
 *
 * Drivers store and read bytes: they never hash or sign (the log above them, src/log, does).
 * Writes to the log and the anchor state happen only inside `transaction` (serialized; one durable
 * commit; all or nothing), so a batch's seeds and log entries commit together. Reads outside a
 * transaction see committed state only; reads inside see the transaction's own writes.
 * A driver that cannot write or read rejects with StoreUnavailableError (src/store/errors.ts).
 */
import type { PartyUsage } from '../anchor/quota-window.ts';
import type { Anchor, DuplicityProof } from '../anchor/types.ts';
import type { NodeRef, StoredNode } from '../tlog/frontier.ts';
import type { KelLedgerStorage, KelLedgerTx } from './kel-ledger.ts';

export type * from './kel-ledger.ts';

export type { NodeRef, StoredNode } from '../tlog/frontier.ts';

export interface StoreIdentity {
  /** Witness public key, hex. */
  witnessKey: string;
  name: string;
  logOrigin: string;
}

/** What a driver can do, declared so that callers never test a driver's class. */
export interface StoreCapabilities {
  /**
   * Several processes may write this store at once (replicas): caches of committed mutable state
   * (seed records, quota windows) are invalid. Complete-subtree hashes stay cacheable.
   */
  readonly multiWriter: boolean;
}

export interface TreeHead {
  size: number;
  root: Uint8Array;
}

export interface SignedCheckpoint extends TreeHead {
  /** The signed note text. */
  note: string;
}

// ---------------------------------------------------------------- the log

/** The log's committed bytes. */
export interface LogStorage {
  /** The latest signed checkpoint (undefined before the first is stored). */
  checkpoint(): Promise<SignedCheckpoint | undefined>;
  /** The stored hashes of these complete subtrees; absent ones are left out (any order). */
  readNodes(refs: readonly NodeRef[]): Promise<StoredNode[]>;
  /** Hashes of the complete subtrees (level, start … start + count − 1), fewer if not all are stored. */
  readNodeRange(level: number, start: number, count: number): Promise<Uint8Array[]>;
  /** Entries [start, start + count), fewer if not all are stored. */
  readEntries(start: number, count: number): Promise<Uint8Array[]>;
}

/** The log inside a write transaction. */
export interface LogStorageTx {
  /** The log size, including this transaction's writes. */
  size(): Promise<number>;
  /** As LogStorage.readNodes, seeing this transaction's writes. */
  readNodes(refs: readonly NodeRef[]): Promise<StoredNode[]>;
  /**
   * Store entries [start, start + entries.length) with the complete-subtree hashes they finish
   * (leaf hashes included); `start` must be the current size, which becomes start + entries.length.
   */
  appendLeaves(start: number, entries: readonly Uint8Array[], nodes: readonly StoredNode[]): Promise<void>;
  /** Replace the signed checkpoint (its size never exceeds the log size nor goes backwards). */
  setCheckpoint(checkpoint: SignedCheckpoint): Promise<void>;
}

// ---------------------------------------------------------------- anchor state

export interface CosignatureRecord {
  signature: Uint8Array;
  /** Unix seconds: informational, not signed. */
  timestamp: number;
  /** Index of the cosign message in the witness log. */
  leafIndex: number;
}

export interface SeedRecord {
  seedId: Uint8Array;
  /** `did:keri:` id of the agent that created the seed here. */
  owner: string;
  createdAt: number;
  latest: Anchor;
  cosignature: CosignatureRecord;
  duplicity?: DuplicityProof;
}

/** A party's co-sign times inside the quota windows (defined with the quota arithmetic). */
export type { PartyUsage };

/** Committed anchor-chain state. */
export interface AnchorStateStorage {
  getSeed(seedId: Uint8Array): Promise<SeedRecord | undefined>;
  getDuplicity(seedId: Uint8Array): Promise<DuplicityProof | undefined>;
  /** Proofs in seed order, `after` exclusive. */
  listDuplicities(after: Uint8Array | undefined, limit: number): Promise<DuplicityProof[]>;
  counts(): Promise<{ seeds: number; duplicities: number }>;
  /** Every identifier's highest accepted KEL tip (SPEC §3.5 `kel_tips`). */
  kelTips(): Promise<KelTip[]>;
  /**
   * Raise the stored tips, in one durable commit of its own (outside the log's transactions): a row
   * is written when the identifier has none or a lower `s`; never lowered, and a tip at the same
   * `s` with another `d` leaves the stored row as it is.
   */
  raiseKelTips(tips: readonly KelTip[]): Promise<void>;
}

/** An identifier's highest accepted key event: sequence number and SAID (SPEC §3.5). */
export interface KelTip {
  prefix: string;
  s: number;
  d: string;
  /** The last establishment event at that tip (SPEC §3.5 rev 4); absent on a row written before revision 4. */
  estS?: number;
  estD?: string;
}

/** Anchor-chain state inside a write transaction. */
export interface AnchorStateTx {
  getSeed(seedId: Uint8Array): Promise<SeedRecord | undefined>;
  partyUsage(party: string, anchorsSince: number, newSeedsSince: number): Promise<PartyUsage>;
  /** Insert or replace a seed's latest co-signed anchor (its index only ever grows). */
  putSeed(record: SeedRecord, isNew: boolean, party: string): Promise<void>;
  /** Store the first duplicity proof of a seed (freezes it). */
  putDuplicity(proof: DuplicityProof, leafIndex: number, at: number): Promise<void>;
}

// ---------------------------------------------------------------- cosign state

/** Per-origin state of the cosign role (SPEC §5). */
export interface OriginState {
  origin: string;
  /** Size and root of the latest checkpoint this witness cosigned. */
  size: number;
  root: Uint8Array;
  /** The cosigned checkpoint note: its text and the log signature lines that verified. */
  checkpoint: string;
  /** The cosignature lines returned for it (`— <name> <b64>\n` each). */
  cosignatures: string;
  /** The latest cosignature time issued for this origin (unix s); times never go backwards. */
  lastTime: number;
  /**
   * The log key set (vkeys) the state was cosigned under (SPEC §5 rev 4: the state is bound to it);
   * undefined for a state stored before key sets were recorded.
   */
  logKeys?: readonly string[] | undefined;
  /**
   * Identifies the cosign key set that made `cosignatures` (SHA-256 of its vkeys, one per line):
   * a replayed checkpoint is answered from the stored lines only when it is the current set.
   * Undefined when unknown (stored before it was recorded): a replay is then signed anew.
   */
  cosignerSet?: Uint8Array | undefined;
}

/** The key binding of an origin's stored state row (empty states of imported logs included). */
export interface StoredOriginKeys {
  /** The vkeys the state is bound to; undefined when the row predates key sets. */
  readonly keys: readonly string[] | undefined;
  /** A checkpoint was cosigned (the state is not the empty state of an import). */
  readonly cosigned: boolean;
}

/** What `forgetOrigin` deleted. */
export interface ForgottenOrigin {
  /** The stored state row (cosigned or the empty state of an import); its size when cosigned. */
  readonly state: boolean;
  readonly cosignedSize: number | undefined;
  /** Evidence rows deleted. */
  readonly evidence: number;
  /** The import record of a logs/v0 list (a later list read may import the origin again). */
  readonly imported: boolean;
}

/** Evidence rows kept per origin by default (SPEC §5); the oldest are evicted first beyond it. */
export const EVIDENCE_LIMIT = 1000;

/** A checkpoint kept as evidence of a log's misbehaviour (SPEC §5). */
export interface EvidenceRecord {
  origin: string;
  /**
   * The deduplication key: SHA-256 of the checkpoint text (the cosign role computes it). Undefined
   * for rows written before schema versions with deduplication (never deduplicated, evicted first).
   */
  hash: Uint8Array | undefined;
  /** The checkpoint text and the log signature lines that verified (a signed note). */
  note: string;
  reason: string;
  /** Unix seconds. */
  at: number;
}

/** A log imported from a logs/v0 list (SPEC §5.5), as first imported; only its qpd changes later. */
export interface ImportedLog {
  origin: string;
  /** Its vkeys, in list order (at least one). */
  vkeys: string[];
  /** add-checkpoint requests per day. */
  qpd: number;
  /** The list it came from: a file path or a URL without credentials, query or fragment. */
  source: string;
  /** Unix seconds of the import. */
  importedAt: number;
}

/** The cosign role's state; each call is its own durable transaction. */
export interface CosignStateStorage {
  /** The state of one origin (undefined when never cosigned). */
  getOrigin(origin: string): Promise<OriginState | undefined>;
  /**
   * Replace an origin's state iff its stored size is still `expectedSize` (0 = never cosigned),
   * atomically and durably. Returns false when another writer changed it first.
   */
  updateOrigin(expectedSize: number, next: OriginState): Promise<boolean>;
  /**
   * Keep a checkpoint as evidence, durably, unless the origin already has a row with this hash.
   * Then keep at most `limit` rows for the origin (default EVIDENCE_LIMIT), deleting the oldest.
   * `added`: a row was written; `evicted`: rows deleted to make room.
   */
  recordEvidence(
    evidence: Omit<EvidenceRecord, 'hash'> & { hash: Uint8Array },
    limit?: number,
  ): Promise<{ added: boolean; evicted: number }>;
  /** The evidence rows of an origin, oldest first. */
  listEvidence(origin: string): Promise<EvidenceRecord[]>;
  /**
   * Record imported logs in one durable transaction that also creates each one's empty state (size
   * 0, `emptyRoot`, no checkpoint; read by getOrigin as never cosigned). An origin already imported
   * keeps its record (the first import wins: a list never changes keys) and an origin with stored
   * state keeps that state. Returns the origins recorded now.
   */
  importLogs(logs: readonly ImportedLog[], emptyRoot: Uint8Array): Promise<string[]>;
  /** Set the qpd of imported origins (a list's changed qpd is followed), durably; unknown origins are ignored. */
  setImportedQpd(changes: readonly { origin: string; qpd: number }[]): Promise<void>;
  /** Every imported log, in import order. */
  listImportedLogs(): Promise<ImportedLog[]>;
  /** The key bindings of those of `origins` that have a stored state row (absent ones are left out). */
  originKeys(origins: readonly string[]): Promise<Map<string, StoredOriginKeys>>;
  /**
   * Bind an origin's stored state to `keys` (an update of its key set by the operator, or the first
   * binding of an older row), durably. False when the origin has no state row.
   */
  setOriginKeys(origin: string, keys: readonly string[]): Promise<boolean>;
  /**
   * Delete an origin's state, its evidence and its import record in one durable transaction
   * (`anchor-witness cosign forget`, SPEC §5 rev 4).
   */
  forgetOrigin(origin: string): Promise<ForgottenOrigin>;
  /** Every cosigned origin's size in one read (start-up gauges); optional: else getOrigin per origin. */
  cosignedSizes?(): Promise<Map<string, number>>;
}

// ---------------------------------------------------------------- witnessed own log

/** What this node knows of one peer witness of its own log (SPEC §4.1), keyed by submission URL. */
export interface LogWitnessState {
  url: string;
  /** Size and root of this node's checkpoint the witness last cosigned. */
  size: number;
  root: Uint8Array;
  /** Unix seconds when that cosignature was collected. */
  at: number;
}

/** One peer's cosignature of one of this node's checkpoints, with the node-signed note it covers. */
export interface LogCosignatureRecord extends LogWitnessState {
  /** The node-signed checkpoint note of `size` (the text the lines sign, with the node's own line). */
  note: string;
  /** The witness's cosignature lines that verified (`— <name> <b64>\n` each, at least one). */
  lines: string;
}

/** The lines collected for one checkpoint of the own log. */
export interface LogCosignedCheckpoint {
  size: number;
  root: Uint8Array;
  note: string;
  /** Witness URL → its cosignature lines for this checkpoint. */
  lines: Map<string, string>;
}

/** Cosignature rows kept per witness beyond the published size (older ones are pruned). */
export const LOG_COSIGNATURES_PER_WITNESS = 256;

/**
 * The witnessed own log's state (SPEC §4.1); each call is its own durable transaction. Drivers keep
 * bytes only: the submitter (src/log-witness) verifies lines before recording them.
 */
export interface LogWitnessStorage {
  /** Every witness's last known state (witnesses removed from the configuration included). */
  witnessStates(): Promise<LogWitnessState[]>;
  /**
   * Record a cosignature, durably and atomically: the witness's state becomes (size, root, at),
   * the note of `size` is kept (once) and the lines stored for (size, url), replacing earlier
   * ones. Then at most LOG_COSIGNATURES_PER_WITNESS rows are kept for that witness (newest sizes).
   */
  recordCosignature(record: LogCosignatureRecord): Promise<void>;
  /** The note and the lines collected for checkpoint `size` (undefined when none). */
  cosigned(size: number): Promise<LogCosignedCheckpoint | undefined>;
  /** Sizes with at least one collected line, above `after`, newest first (at most `limit`). */
  cosignedSizes(after: number, limit: number): Promise<number[]>;
  /** The published (witnessed) size; undefined before the first quorum. */
  published(): Promise<number | undefined>;
  /**
   * Publish `size` (its lines must be recorded): the stored size becomes max(stored, size), so it
   * never decreases; rows of smaller sizes are deleted. Returns the size published afterwards.
   */
  publish(size: number): Promise<number>;
}

// ---------------------------------------------------------------- witness key history

/** Where a witness key stands in the rotation history (SPEC §1.2). */
export type WitnessKeyState = 'current' | 'next' | 'retired';

/** One witness key of the history: at most one `current` and one `next`; `retired` keys are refused forever. */
export interface WitnessKeyRecord {
  /** The Ed25519 public key, hex. */
  key: string;
  state: WitnessKeyState;
  /** Unix seconds when the key took this state (an announcement's time for `next`). */
  since: number;
}

/** The key history inside a write transaction (recorded with the rotation entries it logs). */
export interface KeyHistoryTx {
  /** The history, oldest first (as `WitnessStore.keyHistory`), seeing this transaction's writes. */
  history(): Promise<WitnessKeyRecord[]>;
  /** Record a key in a state (insert, or move a recorded key to another state). */
  setKey(record: WitnessKeyRecord): Promise<void>;
  /** Keep a rotation entry (its JCS text) appended at `logIndex` in this transaction. */
  addRotationEntry(entry: KeyRotationRecord): Promise<void>;
}

/** A logged `anchor-witness/key-rotation/v1` entry: its log index and JCS text. */
export interface KeyRotationRecord {
  logIndex: number;
  entry: string;
}

// ---------------------------------------------------------------- the store

/** One write transaction over the log and the anchor state. */
export interface StoreTransaction {
  readonly log: LogStorageTx;
  readonly anchors: AnchorStateTx;
  /** The KERI witness role's first-seen ledger (SPEC §3.6.6). */
  readonly kel: KelLedgerTx;
  /** The witness key history (SPEC §1.2). */
  readonly keys: KeyHistoryTx;
}

/** An open store: one driver's implementation of every concern. */
export interface WitnessStore {
  readonly capabilities: StoreCapabilities;
  readonly log: LogStorage;
  readonly anchors: AnchorStateStorage;
  readonly cosign: CosignStateStorage;
  readonly logWitness: LogWitnessStorage;
  /** The KERI witness role's first-seen ledger, committed state (SPEC §3.6). */
  readonly kelLedger: KelLedgerStorage;
  /**
   * The identity the store is bound to; binds it on first use (the witness key becomes the history's
   * `current`), refuses a different name or origin, and a witness key the history never recorded
   * (store_identity_mismatch). Which recorded key may start is the rotation rule (src/keys/rotation.ts).
   */
  bindIdentity(identity: StoreIdentity): Promise<void>;
  /** The witness key history (SPEC §1.2), oldest first; committed state (re-read before each checkpoint signature). */
  keyHistory(): Promise<WitnessKeyRecord[]>;
  /** The logged rotation entries, oldest first (GET /v1/key-rotation). */
  keyRotations(): Promise<KeyRotationRecord[]>;
  /**
   * A witness key's stored cosignature of the anchor at log leaf `leafIndex`, other than the one the
   * seed record keeps (SPEC §1.2): the next key's `cosignature_next` during an overlap, or after a
   * completion the current key's over an anchor an earlier key co-signed. Undefined until first need.
   */
  witnessCosignature(leafIndex: number, key: string): Promise<Uint8Array | undefined>;
  /**
   * Store such a cosignature at first need, in a durable commit of its own; the first stored value
   * wins (the signatures are deterministic) and is returned.
   */
  putWitnessCosignature(leafIndex: number, key: string, signature: Uint8Array): Promise<Uint8Array>;
  /** Run `fn` in one write transaction; commits when it resolves, rolls back when it rejects. */
  transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
