/**
 * The sequencer's cache of committed seed state: the latest SeedRecord per seed (bounded LRU, null
 * for a seed known to be absent). It learns a batch's records only after the batch commits, so it
 * never shows uncommitted state, and it is correct only while this process is the store's single
 * writer (the SQLite driver guarantees it with its lock); the quota windows are src/anchoring/quota.ts.
 */
import type { SeedRecord } from '../store/types.ts';

export class SeedCache {
  private readonly map = new Map<string, SeedRecord | null>();
  private readonly max: number;

  constructor(max = 50_000) {
    this.max = max;
  }

  /** undefined = not cached; null = known absent. */
  get(key: string): SeedRecord | null | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  set(key: string, v: SeedRecord | null): void {
    this.map.delete(key);
    this.map.set(key, v);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
}
