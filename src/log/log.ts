/**
 * The witness's own transparency log (SPEC §4, C2SP tlog-tiles), once, above every store driver:
 * the tree append (a frontier per batch), checkpoint signing, tiles, entry bundles and proofs
 * built from stored complete-subtree hashes. Drivers only store and read the bytes (LogStorage).
 *
 * A batch runs inside one store transaction together with whatever else the caller writes there
 * (the anchor role's seed records): `transaction` opens the batch, runs the caller, writes the
 * batch's entries and hashes, signs and stores the checkpoint, commits; only then are the batch's
 * nodes added to the node cache and its right edge remembered, so the next batch reads nothing
 * but the log size.
 */
import { StoreUnavailableError } from '../store/errors.ts';
import type { LogStorageTx, SignedCheckpoint, StoreTransaction, StoredNode, WitnessStore } from '../store/types.ts';
import { frontierRefs } from '../tlog/frontier.ts';
import { consistencyProof, inclusionProof } from '../tlog/merkle.ts';
import { LogBatch } from './batch.ts';
import { NodeCache } from './node-cache.ts';
import { formatInclusion, withNodes, type InclusionBody } from './proofs.ts';
import type { LogSigner } from './signer.ts';

export type { InclusionBody } from './proofs.ts';

export interface LogTransactionResult<T> {
  value: T;
  /** The checkpoint signed over the new head; undefined when nothing was appended (and none was asked for). */
  checkpoint: SignedCheckpoint | undefined;
  batch: LogBatch;
}

/**
 * Called inside the transaction right before a checkpoint signature (SPEC §1.2): rejects (with a
 * SignerError, 503 `signer_unavailable`) when the store's witness key set is not the signer's.
 */
export type KeySetGuard = (tx: StoreTransaction) => Promise<void>;

/** What the log needs of a store: its log storage and the transaction over log and anchor state. */
export type LogStore = Pick<WitnessStore, 'log' | 'transaction'>;

/** `S`: the store the log was made on, which callers writing in its transactions read too. */
export class TransparencyLog<S extends LogStore = LogStore> {
  readonly signer: LogSigner;
  readonly store: S;
  /** 65 536 nodes ≈ 6 MiB: the right edge of the tree and recent proofs stay in memory. */
  private readonly cache: NodeCache;
  /** The right edge after the last batch this process committed (any writer: same size, same tree). */
  private edge: { size: number; nodes: readonly StoredNode[] } | undefined;

  private readonly keyGuard: KeySetGuard | undefined;

  constructor(store: S, signer: LogSigner, cache = new NodeCache(65_536), keyGuard?: KeySetGuard) {
    this.store = store;
    this.signer = signer;
    this.cache = cache;
    this.keyGuard = keyGuard;
  }

  get origin(): string {
    return this.signer.origin;
  }

  /** The latest signed checkpoint (undefined before the first). */
  checkpoint(): Promise<SignedCheckpoint | undefined> {
    return this.store.log.checkpoint();
  }

  /** Sign and store the size-0 checkpoint on first start; return the latest checkpoint. */
  async init(): Promise<SignedCheckpoint> {
    const existing = await this.store.log.checkpoint();
    if (existing !== undefined) return existing;
    const { checkpoint } = await this.transaction(() => Promise.resolve(undefined), { sign: true });
    return checkpoint!;
  }

  /**
   * Run `fn` in one store transaction with a batch to append to. When it resolves, the batch's
   * entries and hashes are written and, if anything was appended (or `sign` is set), the new head
   * is signed and stored as the checkpoint; then the transaction commits.
   */
  async transaction<T>(
    fn: (tx: StoreTransaction, batch: LogBatch) => Promise<T>,
    options: { sign?: boolean } = {},
  ): Promise<LogTransactionResult<T>> {
    const result = await this.store.transaction(async (tx) => {
      const batch = await this.open(tx.log);
      const value = await fn(tx, batch);
      await batch.write(tx.log);
      let checkpoint: SignedCheckpoint | undefined;
      if (batch.appended > 0 || options.sign === true) {
        await this.keyGuard?.(tx);
        checkpoint = await this.signer.signAsync(batch.head());
        await tx.log.setCheckpoint(checkpoint);
      }
      return { value, checkpoint, batch };
    });
    // Committed: the batch's nodes may now be served from memory.
    const { batch } = result;
    for (const n of batch.newNodes()) this.cache.set(n.level, n.index, n.hash);
    this.edge = { size: batch.size, nodes: batch.edgeNodes() }; // the next batch copies them
    return result;
  }

  /** Start a batch at the store's current size: its right edge from memory, else one store read. */
  private async open(tx: LogStorageTx): Promise<LogBatch> {
    const size = await tx.size();
    if (this.edge?.size === size) return new LogBatch(size, this.edge.nodes, this.cache);
    const refs = frontierRefs(size);
    const known = new Map<string, StoredNode>();
    const absent = refs.filter((r) => {
      const h = this.cache.get(r.level, r.index);
      if (h !== undefined) known.set(`${r.level}/${r.index}`, { ...r, hash: h });
      return h === undefined;
    });
    if (absent.length > 0) {
      for (const n of await tx.readNodes(absent)) {
        known.set(`${n.level}/${n.index}`, n);
        this.cache.set(n.level, n.index, n.hash); // committed before this transaction began
      }
    }
    const nodes = refs.map((r) => known.get(`${r.level}/${r.index}`));
    if (nodes.some((n) => n === undefined))
      throw new StoreUnavailableError(`store: missing tree nodes on the right edge of the log (size ${size})`);
    return new LogBatch(size, nodes as StoredNode[], this.cache);
  }

  /** Inclusion proof of leaf `index` in the tree of `size` (≤ the committed size). */
  inclusionProof(index: number, size: number): Promise<Uint8Array[]> {
    return withNodes(
      (read) => inclusionProof(index, size, read),
      (refs) => this.store.log.readNodes(refs),
      this.cache,
    );
  }

  consistencyProof(oldSize: number, newSize: number): Promise<Uint8Array[]> {
    return withNodes(
      (read) => consistencyProof(oldSize, newSize, read),
      (refs) => this.store.log.readNodes(refs),
      this.cache,
    );
  }

  /**
   * The inclusion material of `leafIndex` against `checkpoint`. When `batch` is the batch that
   * committed that checkpoint, the proof comes from memory; otherwise from cached or stored nodes.
   */
  async inclusionBody(leafIndex: number, checkpoint: SignedCheckpoint, batch?: LogBatch): Promise<InclusionBody> {
    const fromBatch = batch !== undefined && batch.size === checkpoint.size ? batch.inclusionProof(leafIndex) : undefined;
    const proof = fromBatch ?? (await this.inclusionProof(leafIndex, checkpoint.size));
    return formatInclusion(this.origin, leafIndex, checkpoint, proof);
  }

  /** Concatenated hashes of tile (level, index), `width` entries (1..256), within the committed size. */
  async tile(level: number, index: number, width: number): Promise<Uint8Array> {
    const hashes = await this.store.log.readNodeRange(level * 8, index * 256, width);
    if (hashes.length !== width) throw new RangeError('tile not available at that width');
    return Buffer.concat(hashes);
  }

  /** Entries [index·256, index·256 + width) (an entry bundle's contents). */
  async entries(index: number, width: number): Promise<Uint8Array[]> {
    const entries = await this.store.log.readEntries(index * 256, width);
    if (entries.length !== width) throw new RangeError('entry bundle not available at that width');
    return entries;
  }
}
