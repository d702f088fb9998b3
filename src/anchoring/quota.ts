/**
 * The anchor role's quota state: each party's recent co-sign times (SPEC §3.3 check 8), read from
 * the store or from an in-process cache, appended to by the batch that co-signs, and handed to the
 * cache only once that batch commits. Every edit of this state is in this file; the arithmetic
 * over the windows is pure (src/anchor/quota-window.ts).
 *
 * The cache is correct only while this process is the store's single writer (the SQLite driver
 * guarantees it with its lock); a store with several writers reads the windows every batch.
 */
import { DAY, dropBefore, insertSorted, MINUTE, type PartyUsage } from '../anchor/quota-window.ts';
import type { AnchorStateTx } from '../store/types.ts';

/** Quota windows kept across batches (bounded LRU of parties), or none. */
export class QuotaWindows {
  private readonly cache: Map<string, PartyUsage> | undefined;
  private readonly max: number;

  constructor(cached: boolean, max = 100_000) {
    this.cache = cached ? new Map() : undefined;
    this.max = max;
  }

  /** The windows of one batch; it ends with exactly one of `committed()` or `failed()`. */
  batch(): BatchQuota {
    return new BatchQuota(this.cache, this.max);
  }
}

/**
 * One batch's view of the windows. It hands out the cached arrays themselves, not copies (a copy
 * per batch and party cost O(window) and most of the sequencer's garbage at high quotas), and
 * appends the batch's co-signs to them; so if the batch fails, every party it touched is dropped
 * from the cache and read again from the store, and no uncommitted co-sign is ever counted.
 */
export class BatchQuota {
  private readonly cache: Map<string, PartyUsage> | undefined;
  private readonly max: number;
  private readonly parties = new Map<string, PartyUsage>();

  constructor(cache: Map<string, PartyUsage> | undefined, max: number) {
    this.cache = cache;
    this.max = max;
  }

  /** The party's windows at `now` if this batch or the cache has them (the cache's trimmed to the windows). */
  known(party: string, now: number): PartyUsage | undefined {
    let use = this.parties.get(party);
    if (use !== undefined) return use;
    use = this.cache?.get(party);
    if (use === undefined) return undefined;
    dropBefore(use.anchorTimes, now - MINUTE);
    dropBefore(use.newSeedTimes, now - DAY);
    this.parties.set(party, use);
    return use;
  }

  /** The party's windows at `now` read from the store (when `known` has none). */
  async read(tx: Pick<AnchorStateTx, 'partyUsage'>, party: string, now: number): Promise<PartyUsage> {
    const use = await tx.partyUsage(party, now - MINUTE, now - DAY);
    this.parties.set(party, use);
    return use;
  }

  /** Count a co-sign of `party` at `now` (its windows were read by `known` or `read`). */
  recordCosign(party: string, now: number, newSeed: boolean): void {
    const use = this.parties.get(party)!;
    insertSorted(use.anchorTimes, now);
    if (newSeed) insertSorted(use.newSeedTimes, now);
  }

  /** The batch committed: its windows are committed state now. */
  committed(): void {
    const cache = this.cache;
    if (cache === undefined) return;
    for (const [party, use] of this.parties) {
      if (cache.get(party) === use) continue;
      cache.delete(party);
      cache.set(party, use);
      if (cache.size > this.max) cache.delete(cache.keys().next().value!);
    }
  }

  /** The batch failed: forget every party it touched (it may have appended to cached windows). */
  failed(): void {
    for (const party of this.parties.keys()) this.cache?.delete(party);
  }
}
