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

/** Seconds until the party may co-sign again, or null when within quota. */
export function quotaRetryAfter(party: RegistryParty, usage: PartyUsage, newSeed: boolean, now: number, defaults: QuotaDefaults): number | null {
  const perMinute = party.limits.anchorsPerMinute ?? defaults.anchorsPerMinute;
  const perDay = party.limits.newSeedsPerDay ?? defaults.newSeedsPerDay;
  const recent = usage.anchorTimes.filter((t) => t > now - MINUTE);
  if (recent.length >= perMinute) return perMinute === 0 ? MINUTE : Math.max(1, recent[recent.length - perMinute]! + MINUTE - now);
  if (newSeed) {
    const seeds = usage.newSeedTimes.filter((t) => t > now - DAY);
    if (seeds.length >= perDay) return perDay === 0 ? DAY : Math.max(1, seeds[seeds.length - perDay]! + DAY - now);
  }
  return null;
}
