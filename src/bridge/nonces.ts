/**
 * The single-use nonce store of SPEC §7: a (leaf key, nonce) pair is accepted once, and remembered
 * for 120 s. The store is bounded: when it holds `capacity` live entries a new nonce is refused
 * (`full` → 503 `overloaded`); an entry is never evicted before its 120 s are over, because an early
 * eviction would reopen a replay window. Time is a parameter (unix ms); no I/O, no timers.
 *
 * Entries live in a Map in insertion order. Expiry = insertion time + TTL, so with a clock that does
 * not go backwards insertion order is expiry order and expired entries are dropped from the front.
 * If the clock steps back, the front may hold an entry that is not yet expired while a later one is:
 * purging stops at the first live entry, so nothing is ever dropped early (some expired entries are
 * merely kept a little longer).
 */
export type ConsumeResult = 'ok' | 'replayed' | 'full';

export class NonceStore {
  readonly capacity: number;
  readonly ttlMs: number;
  private readonly entries = new Map<string, number>(); // key → expiry (unix ms)

  constructor(capacity = 100_000, ttlMs = 120_000) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError('nonce store capacity must be ≥ 1');
    this.capacity = capacity;
    this.ttlMs = ttlMs;
  }

  get size(): number {
    return this.entries.size;
  }

  private purge(now: number): void {
    for (const [key, expiry] of this.entries) {
      if (expiry > now) break;
      this.entries.delete(key);
    }
  }

  /** Would `consume` accept this key now (without recording it)? */
  peek(key: string, now: number): ConsumeResult {
    this.purge(now);
    const expiry = this.entries.get(key);
    if (expiry !== undefined && expiry > now) return 'replayed';
    return this.entries.size >= this.capacity ? 'full' : 'ok';
  }

  /** Record `key` as used at `now`: 'ok' the first time, 'replayed' within the TTL, 'full' at capacity. */
  consume(key: string, now: number): ConsumeResult {
    const r = this.peek(key, now);
    if (r !== 'ok') return r;
    this.entries.delete(key); // an expired leftover (clock stepped back) is replaced at the end
    this.entries.set(key, now + this.ttlMs);
    return 'ok';
  }
}
