/**
 * The witness's durable state behind one narrow interface. Drivers: SQLite (src/store/sqlite.ts,
 * the default); PostgreSQL arrives with the scale-out issue. The interface is asynchronous so that
 * both fit; the SQLite driver runs synchronously inside.
 *
 * Writes happen only inside `transaction` (serialized; one durable commit; all or nothing).
 * Reads outside a transaction see committed state only.
 * A driver that cannot write or read signals it with StoreUnavailableError (`store_unavailable`).
 */
import { ProtocolError } from '../errors.ts';
import type { Anchor, DuplicityProof } from '../anchor/types.ts';

export class StoreUnavailableError extends ProtocolError {
  constructor(message: string) {
    super('store_unavailable', message);
  }
}

/** The store refuses to open: bound to another identity, locked by another process, bad schema. */
export class StoreOpenError extends ProtocolError {}

export interface StoreIdentity {
  /** Witness public key, hex. */
  witnessKey: string;
  name: string;
  logOrigin: string;
}

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

export interface PartyUsage {
  /** Co-sign times (unix s) of this party's anchors since `since`, oldest first. */
  anchorTimes: number[];
  /** Creation times of this party's seeds since `newSeedsSince`, oldest first. */
  newSeedTimes: number[];
}

export interface TreeHead {
  size: number;
  root: Uint8Array;
}

export interface SignedCheckpoint extends TreeHead {
  /** The signed note text. */
  note: string;
}

/** Write access inside one transaction. Reads here see the transaction's own writes. */
export interface StoreTransaction {
  getSeed(seedId: Uint8Array): Promise<SeedRecord | undefined>;
  partyUsage(party: string, anchorsSince: number, newSeedsSince: number): Promise<PartyUsage>;
  /** Insert or replace a seed's latest co-signed anchor. */
  putSeed(record: SeedRecord, isNew: boolean, party: string): Promise<void>;
  /** Store the first duplicity proof of a seed (freezes it). */
  putDuplicity(proof: DuplicityProof, leafIndex: number, at: number): Promise<void>;
  /** Append entries to the log; returns the index of the first. */
  appendEntries(entries: Uint8Array[]): Promise<number>;
  /** The tree head including this transaction's appends. */
  treeHead(): Promise<TreeHead>;
  setCheckpoint(checkpoint: SignedCheckpoint): Promise<void>;
}

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

export interface WitnessStore {
  /** The identity the store is bound to; binds it on first use, refuses a different one. */
  bindIdentity(identity: StoreIdentity): Promise<void>;
  transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T>;

  getSeed(seedId: Uint8Array): Promise<SeedRecord | undefined>;
  getDuplicity(seedId: Uint8Array): Promise<DuplicityProof | undefined>;
  /** Proofs in seed order, `after` exclusive. */
  listDuplicities(after: Uint8Array | undefined, limit: number): Promise<DuplicityProof[]>;
  counts(): Promise<{ seeds: number; duplicities: number }>;

  /** The latest signed checkpoint (undefined before the first is stored). */
  checkpoint(): Promise<SignedCheckpoint | undefined>;
  /** Inclusion proof of leaf `index` in the tree of `size` (≤ the committed size). */
  inclusionProof(index: number, size: number): Promise<Uint8Array[]>;
  consistencyProof(oldSize: number, newSize: number): Promise<Uint8Array[]>;
  /** Concatenated hashes of tile (level, index), `width` entries (1..256), within the committed size. */
  tile(level: number, index: number, width: number): Promise<Uint8Array>;
  /** Entries [index·256, index·256 + width). */
  entries(index: number, width: number): Promise<Uint8Array[]>;

  /** Cosign role: the state of one origin (undefined when never cosigned). */
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
  recordEvidence(evidence: Omit<EvidenceRecord, 'hash'> & { hash: Uint8Array }, limit?: number): Promise<{ added: boolean; evicted: number }>;
  /** The evidence rows of an origin, oldest first. */
  listEvidence(origin: string): Promise<EvidenceRecord[]>;

  close(): Promise<void>;
}
