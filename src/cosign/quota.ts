/**
 * Per-origin add-checkpoint quota (SPEC §5 check 4): a token bucket per origin with capacity
 * max(1, qpd/24) (an hour's worth of requests), refilled continuously at qpd/86400 tokens per
 * second, full when first used. A request takes one token; without one it is refused with the whole
 * seconds until the next token (`Retry-After`, at least 1). Only requests that reach check 4 call
 * `take`, so malformed, unknown-origin and badly signed requests never spend a log's quota.
 *
 * The bucket arithmetic is src/server/rate-limit.ts's `takeToken` (one rule for every token bucket).
 * Pure: time is a parameter (milliseconds). Memory: one bucket per known origin that has sent a
 * request; `retain` drops buckets of origins no longer known.
 */

import { takeToken, type TokenBucket } from '../server/rate-limit.ts';

export function bucketCapacity(qpd: number): number {
  return Math.max(1, qpd / 24);
}

export class OriginQuota {
  private readonly buckets = new Map<string, TokenBucket>();

  /** Take a token: null when granted, else the whole seconds until the next token (≥ 1). */
  take(origin: string, qpd: number | undefined, nowMs: number): number | null {
    if (qpd === undefined) return null;
    const capacity = bucketCapacity(qpd);
    let b = this.buckets.get(origin);
    if (b === undefined) {
      b = { tokens: capacity, last: nowMs };
      this.buckets.set(origin, b);
    }
    return takeToken(b, capacity, qpd / 86_400, nowMs);
  }

  /** Forget buckets of origins for which `keep` is false (e.g. after a reload removed them). */
  retain(keep: (origin: string) => boolean): void {
    for (const origin of this.buckets.keys()) if (!keep(origin)) this.buckets.delete(origin);
  }

  get size(): number {
    return this.buckets.size;
  }
}
