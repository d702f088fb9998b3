/**
 * Per-client token buckets (SPEC §2 `--rate-limit RPS[:BURST]`).
 *
 * Each client key (see ip.ts `clientKey`) owns a bucket of `burst` tokens refilled at `rps` tokens
 * per second; a request takes one token or is refused with the whole seconds until the next token
 * (`Retry-After`, at least 1). Buckets start full.
 *
 * Memory is bounded: at most `maxClients` buckets (default 100 000) are tracked, kept in
 * least-recently-used order. When a new client arrives at the cap, the least recently used buckets
 * that have refilled to full are dropped (a full bucket is the same as no bucket); if none of the
 * oldest `EVICTION_SCAN` buckets is full, the least recently used one is dropped anyway — memory is
 * the hard bound, and the client losing its state is the one not seen for the longest time.
 */
import { ServerConfigError } from './errors.ts';

export interface RateLimitSpec {
  /** tokens per second (> 0, fractions allowed: 0.5 = one request every 2 s) */
  readonly rps: number;
  /** bucket capacity, an integer ≥ 1 */
  readonly burst: number;
}

/** Default burst when the flag gives only RPS: twice the rate, at least 1 (SPEC bridge default 10/s → 20). */
export function defaultBurst(rps: number): number {
  return Math.max(1, Math.ceil(2 * rps));
}

/**
 * Parse the `RPS[:BURST]` flag syntax. `0` (or `0:N`) turns the limit off (null). RPS is a
 * non-negative decimal number (`10`, `2.5`), BURST a positive integer.
 */
export function parseRateLimit(text: string): RateLimitSpec | null {
  const m = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?(?::([1-9][0-9]*))?$/.exec(text.trim());
  if (m === null)
    throw new ServerConfigError(
      'invalid_rate_limit',
      `rate limit must be RPS[:BURST] (e.g. 10:20, or 0 for off), got ${JSON.stringify(text)}`,
    );
  const rps = Number(m[2] === undefined ? m[1] : `${m[1]}.${m[2]}`);
  if (rps === 0) return null;
  if (!Number.isFinite(rps) || rps > 1e9) throw new ServerConfigError('invalid_rate_limit', `rate limit RPS out of range: ${text}`);
  const burst = m[3] === undefined ? defaultBurst(rps) : Number(m[3]);
  if (!Number.isSafeInteger(burst)) throw new ServerConfigError('invalid_rate_limit', `rate limit BURST out of range: ${text}`);
  return { rps, burst };
}

export type TakeResult = { readonly ok: true } | { readonly ok: false; readonly retryAfterSeconds: number };

/** One token bucket: its tokens and the time (ms) they were last refilled. */
export interface TokenBucket {
  tokens: number;
  last: number;
}

/** Tolerance for floating-point refill arithmetic: a token due "now" is granted. */
const EPSILON = 1e-9;

/** Refill `b` at `perSecond` tokens per second up to `capacity` for the time since its last refill (never backwards). */
export function refillBucket(b: TokenBucket, capacity: number, perSecond: number, nowMs: number): void {
  if (nowMs > b.last) {
    b.tokens = Math.min(capacity, b.tokens + ((nowMs - b.last) / 1000) * perSecond);
    b.last = nowMs;
  }
}

/**
 * The one token-bucket rule (this file's per-client limits, the cosign role's per-origin quota,
 * src/cosign/quota.ts): refill, then take one token — null when granted, else the whole seconds
 * until the next token (`Retry-After`, at least 1).
 */
export function takeToken(b: TokenBucket, capacity: number, perSecond: number, nowMs: number): number | null {
  refillBucket(b, capacity, perSecond, nowMs);
  if (b.tokens >= 1 - EPSILON) {
    b.tokens = Math.max(0, b.tokens - 1);
    return null;
  }
  return Math.max(1, Math.ceil((1 - b.tokens) / perSecond - EPSILON));
}

const EVICTION_SCAN = 64;
const OK: TakeResult = { ok: true };

export class TokenBuckets {
  readonly rps: number;
  readonly burst: number;
  readonly maxClients: number;
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly now: () => number;

  constructor(spec: RateLimitSpec, opts: { maxClients?: number; now?: () => number } = {}) {
    if (!(spec.rps > 0) || !Number.isFinite(spec.rps)) throw new ServerConfigError('invalid_rate_limit', 'rps must be > 0');
    if (!Number.isSafeInteger(spec.burst) || spec.burst < 1)
      throw new ServerConfigError('invalid_rate_limit', 'burst must be an integer ≥ 1');
    this.rps = spec.rps;
    this.burst = spec.burst;
    this.maxClients = opts.maxClients ?? 100_000;
    this.now = opts.now ?? (() => performance.now());
  }

  get size(): number {
    return this.buckets.size;
  }

  /** Take one token for `key`. */
  take(key: string): TakeResult {
    const t = this.now();
    let b = this.buckets.get(key);
    if (b === undefined) {
      if (this.buckets.size >= this.maxClients) this.evict(t);
      b = { tokens: this.burst, last: t };
    } else {
      this.buckets.delete(key); // re-inserted below: Map order is LRU order
    }
    this.buckets.set(key, b);
    const retryAfterSeconds = takeToken(b, this.burst, this.rps, t);
    return retryAfterSeconds === null ? OK : { ok: false, retryAfterSeconds };
  }

  private evict(t: number): void {
    let scanned = 0;
    let freed = 0;
    for (const [key, b] of this.buckets) {
      if (scanned++ >= EVICTION_SCAN) break;
      refillBucket(b, this.burst, this.rps, t);
      if (b.tokens >= this.burst) {
        this.buckets.delete(key);
        freed++;
      }
    }
    if (freed === 0) {
      const oldest = this.buckets.keys().next();
      if (oldest.done !== true) this.buckets.delete(oldest.value);
    }
  }
}
