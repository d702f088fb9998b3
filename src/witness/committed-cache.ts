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

/** Per-party co-sign times (sorted) inside the quota windows; trimmed as time passes. */
export class UsageCache {
  private readonly map = new Map<string, PartyUsage>();
  private readonly max: number;

  constructor(max = 100_000) {
    this.max = max;
  }

  get(party: string, anchorsSince: number, seedsSince: number): PartyUsage | undefined {
    const u = this.map.get(party);
    if (u === undefined) return undefined;
    trim(u.anchorTimes, anchorsSince);
    trim(u.newSeedTimes, seedsSince);
    return { anchorTimes: [...u.anchorTimes], newSeedTimes: [...u.newSeedTimes] };
  }

  set(party: string, usage: PartyUsage): void {
    this.map.delete(party);
    this.map.set(party, { anchorTimes: [...usage.anchorTimes], newSeedTimes: [...usage.newSeedTimes] });
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
}

function trim(times: number[], since: number): void {
  let i = 0;
  while (i < times.length && times[i]! < since) i++;
  if (i > 0) times.splice(0, i);
}
