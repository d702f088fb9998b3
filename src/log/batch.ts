/**
 * One batch of appends to the log inside one store transaction: the frontier (src/tlog/frontier.ts)
 * computes every new complete-subtree hash in memory; at the end the entries and those hashes go to
 * the store as bytes, with the checkpoint signed over the new head. After the commit the batch
 * still answers inclusion proofs for its own leaves from the nodes it wrote (and the node cache),
 * with no store trip.
 */
import type { LogStorageTx, StoredNode, TreeHead } from '../store/types.ts';
import { Frontier, nodeKey } from '../tlog/frontier.ts';
import { inclusionProof, type HashReader } from '../tlog/merkle.ts';
import type { NodeCache } from './node-cache.ts';
import { missingNode } from './proofs.ts';

export class LogBatch {
  private readonly frontier: Frontier;
  /** The right edge the batch started from (left siblings of its leaves below the base size). */
  private readonly edge: readonly StoredNode[];
  private readonly cache: NodeCache;
  private byKey: Map<number, Uint8Array> | undefined;

  constructor(baseSize: number, edge: readonly StoredNode[], cache: NodeCache) {
    this.frontier = new Frontier(baseSize, edge);
    this.edge = edge;
    this.cache = cache;
  }

  /** The size the batch started from. */
  get baseSize(): number {
    return this.frontier.baseSize;
  }

  /** The log size including this batch's appends. */
  get size(): number {
    return this.frontier.size;
  }

  /** Entries appended so far. */
  get appended(): number {
    return this.frontier.newEntries.length;
  }

  /** Append one entry (hashing it into the frontier); returns its index in the log. */
  append(entry: Uint8Array): number {
    return this.frontier.append(entry);
  }

  /** The tree head including this batch's appends. */
  head(): TreeHead {
    return { size: this.frontier.size, root: this.frontier.root() };
  }

  /** The right edge after the appends. */
  edgeNodes(): readonly StoredNode[] {
    return this.frontier.nodes();
  }

  /** Every complete subtree the batch finished (leaves included), in creation order. */
  newNodes(): readonly StoredNode[] {
    return this.frontier.newNodes;
  }

  /** Hand the entries and their hashes to the store (inside the transaction). */
  write(tx: LogStorageTx): Promise<void> {
    if (this.appended === 0) return Promise.resolve();
    return tx.appendLeaves(this.baseSize, this.frontier.newEntries, this.frontier.newNodes);
  }

  /**
   * The inclusion proof of `index` in the tree of this batch's size, from memory: the node cache,
   * the nodes the batch wrote and the edge it started from (which hold every node a proof of one of
   * its own leaves needs). Undefined when a node is not in memory (an older leaf): ask the log.
   */
  inclusionProof(index: number): Uint8Array[] | undefined {
    const read: HashReader = (level, i) => {
      const hit = this.cache.get(level, i) ?? this.local().get(nodeKey(level, i));
      if (hit === undefined) throw missingNode(level, i);
      return hit;
    };
    try {
      return inclusionProof(index, this.size, read);
    } catch {
      return undefined;
    }
  }

  /** The batch's own nodes by key, built on the first cache miss only. */
  private local(): Map<number, Uint8Array> {
    if (this.byKey === undefined) {
      this.byKey = new Map();
      for (const n of this.edge) this.byKey.set(nodeKey(n.level, n.index), n.hash);
      for (const n of this.frontier.newNodes) this.byKey.set(nodeKey(n.level, n.index), n.hash);
    }
    return this.byKey;
  }
}
