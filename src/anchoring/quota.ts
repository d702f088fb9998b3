/**
 * Per-party quotas (SPEC §3.3 check 8): sliding windows over co-signed anchors (per minute) and
 * created seeds (per day). Registry `limits` override the node defaults. Only co-signed new
 * anchors count, so the windows are read from the store's record of co-signatures.
 */
import type { RegistryParty } from '../anchor/registry.ts';
import type { PartyUsage } from '../store/types.ts';

export interface QuotaDefaults {
  anchorsPerMinute: number;
  newSeedsPerDay: number;
}

export const DEFAULT_QUOTA: QuotaDefaults = { anchorsPerMinute: 60, newSeedsPerDay: 100 };

export const MINUTE = 60;
export const DAY = 86400;

/** Index of the first element of ascending `sorted` greater than `cutoff`. */
function firstAfter(sorted: readonly number[], cutoff: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! > cutoff) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Insert `t` into ascending `sorted`, keeping it sorted (appends in the usual case). */
export function insertSorted(sorted: number[], t: number): void {
  let i = sorted.length;
  while (i > 0 && sorted[i - 1]! > t) i--;
  if (i === sorted.length) sorted.push(t);
  else sorted.splice(i, 0, t);
}

/**
 * Seconds until the party may co-sign again, or null when within quota. `usage` times are in
 * ascending order; the windows are found by binary search, so the cost does not grow with a
 * party's quota (no per-anchor copy of its window).
 */
export function quotaRetryAfter(party: RegistryParty, usage: PartyUsage, newSeed: boolean, now: number, defaults: QuotaDefaults): number | null {
  const perMinute = party.limits.anchorsPerMinute ?? defaults.anchorsPerMinute;
  const perDay = party.limits.newSeedsPerDay ?? defaults.newSeedsPerDay;
  const anchors = usage.anchorTimes;
  if (anchors.length - firstAfter(anchors, now - MINUTE) >= perMinute) {
    return perMinute === 0 ? MINUTE : Math.max(1, anchors[anchors.length - perMinute]! + MINUTE - now);
  }
  if (newSeed) {
    const seeds = usage.newSeedTimes;
    if (seeds.length - firstAfter(seeds, now - DAY) >= perDay) return perDay === 0 ? DAY : Math.max(1, seeds[seeds.length - perDay]! + DAY - now);
  }
  return null;
}
