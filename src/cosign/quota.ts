/**
 * Per-origin add-checkpoint quota (SPEC §5 check 4): a token bucket per origin with capacity
 * max(1, qpd/24) (an hour's worth of requests), refilled continuously at qpd/86400 tokens per
 * second, full when first used. A request takes one token; without one it is refused with the whole
 * seconds until the next token (`Retry-After`, at least 1). Only requests that reach check 4 call
 * `take`, so malformed, unknown-origin and badly signed requests never spend a log's quota.
 *
 * Pure: time is a parameter (milliseconds). Memory: one bucket per known origin that has sent a
 * request; `retain` drops buckets of origins no longer known.
 */

/** Tolerance for floating-point refill arithmetic (a token due "now" is granted). */
const EPSILON = 1e-9;

interface Bucket {
  tokens: number;
  /** ms of the last refill */
  at: number;
}

export function bucketCapacity(qpd: number): number {
  return Math.max(1, qpd / 24);
}

export class OriginQuota {
  private readonly buckets = new Map<string, Bucket>();

  /** Take a token: null when granted, else the whole seconds until the next token (≥ 1). */
  take(origin: string, qpd: number | undefined, nowMs: number): number | null {
    if (qpd === undefined) return null;
    const capacity = bucketCapacity(qpd);
    const ratePerMs = qpd / 86_400_000;
    let b = this.buckets.get(origin);
    if (b === undefined) {
      b = { tokens: capacity, at: nowMs };
      this.buckets.set(origin, b);
    } else {
      const elapsed = Math.max(0, nowMs - b.at);
      b.tokens = Math.min(capacity, b.tokens + elapsed * ratePerMs);
      b.at = Math.max(b.at, nowMs);
    }
    if (b.tokens >= 1 - EPSILON) {
      b.tokens = Math.max(0, b.tokens - 1);
      return null;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / ratePerMs / 1000 - EPSILON));
  }

  /** Forget buckets of origins for which `keep` is false (e.g. after a reload removed them). */
  retain(keep: (origin: string) => boolean): void {
    for (const origin of this.buckets.keys()) if (!keep(origin)) this.buckets.delete(origin);
  }

  get size(): number {
    return this.buckets.size;
  }
}
