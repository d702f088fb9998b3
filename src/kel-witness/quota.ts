/**
 * The KERI witness role's quotas and capacity bounds (SPEC §3.6.7), per process:
 * * `--kel-rate-limit` RPS:BURST per client on POST /receipts and POST / (429 `rate_limited`);
 * * check 5 (checked before the event's transaction, charged after its commit):
 *   `--kel-prefix-events-per-minute` per prefix, the client's `--kel-ip-bytes-per-day` and, for a
 *   prefix not held, its `--kel-new-prefixes-per-day` (429 `kel_quota_exceeded` + `Retry-After`);
 *   `--kel-max-prefixes` for a prefix not held and `--kel-ledger-max-bytes` (503
 *   `kel_capacity_exhausted`).
 *
 * A client is its address, an IPv6 client its /64 (src/server/ip.ts `clientKey`). The daily
 * quotas are token buckets holding one day's allowance and refilled continuously (N per 24 h), so
 * a client that used its day's allowance regains it gradually, never all at midnight. The held
 * count and the ledger's bytes are read from the store at start and every minute, and counted up
 * at each commit in between (another replica's commits show at the next refresh). Memory is
 * bounded: at most `maxClients` clients per table, least recently seen dropped first.
 */
import { clientKey, parseIp } from '../server/ip.ts';
import { refillBucket, TokenBuckets, type RateLimitSpec, type TokenBucket } from '../server/rate-limit.ts';
import type { KelLedgerCounts } from '../store/kel-ledger.ts';
import { problem, type KelOutcome } from './outcome.ts';

export interface KelQuotaLimits {
  /** `--kel-rate-limit` (null: off). */
  rateLimit: RateLimitSpec | null;
  prefixEventsPerMinute: number;
  /** 0: off. */
  newPrefixesPerDay: number;
  /** 0: off. */
  ipBytesPerDay: number;
  maxPrefixes: number;
  ledgerMaxBytes: number;
}

export const DEFAULT_KEL_QUOTA_LIMITS: KelQuotaLimits = {
  rateLimit: { rps: 20, burst: 100 },
  prefixEventsPerMinute: 60,
  newPrefixesPerDay: 1000,
  ipBytesPerDay: 16 * 1024 * 1024,
  maxPrefixes: 100_000,
  ledgerMaxBytes: 2 * 1024 * 1024 * 1024,
};

const DAY_MS = 24 * 60 * 60 * 1000;
const MINUTE_MS = 60_000;
const MAX_CLIENTS = 100_000;

/** The per-IP key: the address, or the /64 of an IPv6 address (unparsable text is its own key). */
export function quotaClient(ip: string): string {
  const bytes = parseIp(ip);
  return bytes === null ? ip : clientKey(bytes);
}

/** Buckets of `capacity` units refilled at capacity per day, one per client, LRU-bounded. */
class DailyBuckets {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly capacity: number;
  private readonly perSecond: number;

  constructor(capacity: number) {
    this.capacity = capacity;
    this.perSecond = capacity / (DAY_MS / 1000);
  }

  private bucket(key: string, nowMs: number): TokenBucket {
    let b = this.buckets.get(key);
    if (b === undefined) {
      if (this.buckets.size >= MAX_CLIENTS) this.buckets.delete(this.buckets.keys().next().value!);
      b = { tokens: this.capacity, last: nowMs };
    } else this.buckets.delete(key);
    this.buckets.set(key, b);
    refillBucket(b, this.capacity, this.perSecond, nowMs);
    return b;
  }

  /** null when `amount` fits, else the whole seconds until it does (at least 1). */
  check(key: string, amount: number, nowMs: number): number | null {
    const b = this.bucket(key, nowMs);
    if (b.tokens >= amount) return null;
    return Math.max(1, Math.ceil((amount - b.tokens) / this.perSecond));
  }

  charge(key: string, amount: number, nowMs: number): void {
    this.bucket(key, nowMs).tokens -= amount;
  }
}

export class KelQuotas {
  private readonly limits: KelQuotaLimits;
  private readonly now: () => number;
  private readonly rate: TokenBuckets | null;
  private readonly newPrefixes: DailyBuckets | null;
  private readonly ipBytes: DailyBuckets | null;
  /** Witnessed-event times per prefix within the last minute. */
  private readonly recent = new Map<string, number[]>();
  private counts: { held: number; bytes: number } | null = null;

  constructor(limits: KelQuotaLimits, now: () => number) {
    this.limits = limits;
    this.now = now;
    this.rate = limits.rateLimit === null ? null : new TokenBuckets(limits.rateLimit, { now });
    this.newPrefixes = limits.newPrefixesPerDay > 0 ? new DailyBuckets(limits.newPrefixesPerDay) : null;
    this.ipBytes = limits.ipBytesPerDay > 0 ? new DailyBuckets(limits.ipBytesPerDay) : null;
  }

  /** `--kel-rate-limit`: one token per request, before anything is parsed. */
  admit(ip: string): KelOutcome | null {
    if (this.rate === null) return null;
    const r = this.rate.take(quotaClient(ip));
    if (r.ok) return null;
    return problem(429, 'rate_limited', `too many requests from this client; retry in ${r.retryAfterSeconds} s`, {
      headers: { 'retry-after': String(r.retryAfterSeconds) },
    });
  }

  /** Set the held count and ledger bytes from the store (at start, then every minute). */
  refresh(c: Pick<KelLedgerCounts, 'held' | 'bytes'>): void {
    this.counts = { held: c.held, bytes: c.bytes };
  }

  get needsCounts(): boolean {
    return this.counts === null;
  }

  /** Check 5 for an event of `bytes` bytes from `ip`; `held`: the prefix is held already. */
  check(prefix: string, ip: string, held: boolean, bytes: number): KelOutcome | null {
    const now = this.now();
    const L = this.limits;
    const times = (this.recent.get(prefix) ?? []).filter((t) => t > now - MINUTE_MS);
    if (times.length === 0) this.recent.delete(prefix);
    else this.recent.set(prefix, times);
    if (times.length >= L.prefixEventsPerMinute)
      return quotaExceeded(
        Math.max(1, Math.ceil((times[0]! + MINUTE_MS - now) / 1000)),
        `${prefix} had ${times.length} events witnessed in the last minute`,
      );
    const client = quotaClient(ip);
    const wait = this.ipBytes?.check(client, bytes, now) ?? null;
    if (wait !== null) return quotaExceeded(wait, `this client added --kel-ip-bytes-per-day (${L.ipBytesPerDay}) bytes to the ledger`);
    if (!held) {
      const w = this.newPrefixes?.check(client, 1, now) ?? null;
      if (w !== null) return quotaExceeded(w, `this client opened --kel-new-prefixes-per-day (${L.newPrefixesPerDay}) new prefixes`);
      if (this.counts !== null && this.counts.held >= L.maxPrefixes)
        return problem(503, 'kel_capacity_exhausted', `the ledger holds --kel-max-prefixes (${L.maxPrefixes}) prefixes`);
    }
    if (this.counts !== null && this.counts.bytes + bytes > L.ledgerMaxBytes)
      return problem(503, 'kel_capacity_exhausted', `the ledger holds --kel-ledger-max-bytes (${L.ledgerMaxBytes}) bytes`);
    return null;
  }

  /** After a commit: `events` witnessed events of `prefix` and `bytes` stored bytes, charged to `ip`. */
  charge(prefix: string, ip: string, o: { witnessed: number; bytes: number; newPrefix: boolean }): void {
    const now = this.now();
    if (o.witnessed > 0) {
      const times = this.recent.get(prefix) ?? [];
      for (let i = 0; i < o.witnessed; i++) times.push(now);
      this.recent.set(prefix, times);
    }
    const client = quotaClient(ip);
    if (o.bytes > 0) this.ipBytes?.charge(client, o.bytes, now);
    if (o.newPrefix) this.newPrefixes?.charge(client, 1, now);
    if (this.counts !== null) {
      this.counts.bytes += o.bytes;
      if (o.newPrefix) this.counts.held++;
    }
  }
}

function quotaExceeded(retryAfterSeconds: number, detail: string): KelOutcome {
  return problem(429, 'kel_quota_exceeded', detail, { headers: { 'retry-after': String(retryAfterSeconds) } });
}
