/**
 * In-process caches of committed state for the anchor sequencer: the latest SeedRecord per seed
 * (bounded LRU) and each party's recent co-sign times (quota windows). They are updated only after
 * a transaction commits, so they never show uncommitted state, and they are correct only while
 * this process is the store's single writer — which the SQLite driver guarantees with its lock.
 * A multi-writer driver must not use them (`AnchorServiceOptions.cache: false`).
 */
import type { PartyUsage, SeedRecord } from '../store/types.ts';

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

/**
 * Per-party co-sign times (ascending) inside the quota windows; trimmed as time passes.
 *
 * `get` hands out the cached arrays themselves, not copies (a copy per batch and party cost
 * O(window) and most of the sequencer's garbage at high quotas), and the batch appends to them.
 * So a batch ends with exactly one of: `commit()` (its appends are committed state now) or
 * `rollback()` (every party it touched is dropped from the cache and re-read from the store next
 * time, so no uncommitted co-sign is ever counted).
 */
export class UsageCache {
  private readonly map = new Map<string, PartyUsage>();
  private readonly max: number;
  private readonly out = new Set<string>();

  constructor(max = 100_000) {
    this.max = max;
  }

  get(party: string, anchorsSince: number, seedsSince: number): PartyUsage | undefined {
    const u = this.map.get(party);
    if (u === undefined) return undefined;
    trim(u.anchorTimes, anchorsSince);
    trim(u.newSeedTimes, seedsSince);
    this.out.add(party);
    return u;
  }

  /** Cache `usage` (read from the store by this batch, or the object `get` returned). */
  set(party: string, usage: PartyUsage): void {
    if (this.map.get(party) === usage) return;
    this.map.delete(party);
    this.map.set(party, usage);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }

  commit(): void {
    this.out.clear();
  }

  rollback(): void {
    for (const party of this.out) this.map.delete(party);
    this.out.clear();
  }
}

function trim(times: number[], since: number): void {
  let i = 0;
  while (i < times.length && times[i]! < since) i++;
  if (i > 0) times.splice(0, i);
}
