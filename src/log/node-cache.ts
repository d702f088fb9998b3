/**
 * Committed complete-subtree hashes in memory, kept by the log above every driver. A complete
 * subtree never changes once committed, so the cache stays valid with any number of writers; the
 * log fills it only with nodes read from the store or written by a transaction that committed.
 *
 * Bounded, evicting the oldest inserted (a Map in insertion order). A hit does not reorder: the
 * LRU bookkeeping (delete + re-insert per hit) cost more than it saved on the anchor path, and a
 * hot node that ages out is read once from the database and inserted again.
 */
import { nodeKey } from '../tlog/frontier.ts';

export class NodeCache {
  private readonly map = new Map<number, Uint8Array>();
  private readonly max: number;

  constructor(max = 65_536) {
    this.max = max;
  }

  get(level: number, index: number): Uint8Array | undefined {
    return this.map.get(nodeKey(level, index));
  }

  /** Insert by key (see nodeKey). */
  setKey(key: number, hash: Uint8Array): void {
    if (this.map.has(key)) return;
    this.map.set(key, hash);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }

  set(level: number, index: number, hash: Uint8Array): void {
    this.setKey(nodeKey(level, index), hash);
  }
}
