/**
 * Party quotas (SPEC §3.3 check 8) as arithmetic over sliding windows: co-signed anchors per minute
 * and created seeds per day. Registry `limits` override the node defaults; only co-signed new
 * anchors count. Pure: the windows are arrays of co-sign times that the anchor role reads from its
 * store or cache and keeps (src/anchoring/quota.ts).
 */
import type { PartyLimits } from './registry.ts';

export interface QuotaDefaults {
  anchorsPerMinute: number;
  newSeedsPerDay: number;
}

export const DEFAULT_QUOTA: QuotaDefaults = { anchorsPerMinute: 60, newSeedsPerDay: 100 };

export const MINUTE = 60;
export const DAY = 86400;

/** A party's recent co-signs, as the quota windows see them. */
export interface PartyUsage {
  /** Co-sign times (unix s) of this party's anchors within the minute window, oldest first. */
  anchorTimes: number[];
  /** Creation times of this party's seeds within the day window, oldest first. */
  newSeedTimes: number[];
}

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

/** Drop the times before `since` from ascending `times`. */
export function dropBefore(times: number[], since: number): void {
  let i = 0;
  while (i < times.length && times[i]! < since) i++;
  if (i > 0) times.splice(0, i);
}

/**
 * Seconds until the party may co-sign again, or null when within quota. `usage` times are in
 * ascending order; the windows are found by binary search, so the cost does not grow with a
 * party's quota (no per-anchor copy of its window).
 */
export function quotaRetryAfter(
  limits: PartyLimits,
  usage: PartyUsage,
  newSeed: boolean,
  now: number,
  defaults: QuotaDefaults,
): number | null {
  const perMinute = limits.anchorsPerMinute ?? defaults.anchorsPerMinute;
  const perDay = limits.newSeedsPerDay ?? defaults.newSeedsPerDay;
  const anchors = usage.anchorTimes;
  if (anchors.length - firstAfter(anchors, now - MINUTE) >= perMinute) {
    return perMinute === 0 ? MINUTE : Math.max(1, anchors[anchors.length - perMinute]! + MINUTE - now);
  }
  if (newSeed) {
    const seeds = usage.newSeedTimes;
    if (seeds.length - firstAfter(seeds, now - DAY) >= perDay)
      return perDay === 0 ? DAY : Math.max(1, seeds[seeds.length - perDay]! + DAY - now);
  }
  return null;
}
