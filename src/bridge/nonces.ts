/**
 * The single-use nonce store of SPEC §7: a (leaf key, nonce) pair is accepted once, and remembered
 * until its proof's `iat` can no longer be accepted (`iat` + 61 s) and at least 121 s after use
 * (`nonceExpiryMs`, src/bridge/pop.ts). The store is bounded: when it holds `capacity` entries a
 * new nonce is refused (`full` → 503 `overloaded`); an entry is never evicted before it expires,
 * because an early eviction would reopen a replay window.
 *
 * One small async interface, three implementations:
 *   - `MemoryNonceStore` (here): a Map; forgets everything at a restart, so it is used only with an
 *     explicit `--nonce-store memory` and the `pop_stale` restart rule (src/bridge/decide.ts);
 *   - `SqliteNonceStore` (nonces-sqlite.ts): the default, `nonces.sqlite` in `--data-dir`;
 *   - `PostgresNonceStore` (nonces-postgres.ts): `--store postgres://…`, shared by replicas.
 * The durable ones answer only after the entry is committed, so a restart forgets nothing.
 *
 * One clock decides both acceptance and expiry (SPEC §7 rev 4): the store checks the proof's `iat`
 * (±60 s, 'stale') with the same clock that computes and purges expiries. For the memory and SQLite
 * stores that is the caller's `now` (one process: the process clock is the database's clock); the
 * PostgreSQL store, shared by replicas whose clocks differ, ignores `now` and uses the database
 * server's `now()`, so no replica, whatever its clock, purges a nonce another still has to refuse.
 */
import { iatFresh, nonceExpiryMs } from './pop.ts';

/**
 * 'stale': the proof's `iat` is more than 60 s from the store's clock (→ 401 `pop_stale`).
 * With a floor raise (SPEC §7.2 commit): 'superseded' (the seed's floor moved past this anchor
 * with another head → 403 `anchor_superseded`) and 'floor_full' (→ 503 `anchor_floor_full`);
 * then neither the nonce nor the floor is written.
 */
export type ConsumeResult = 'ok' | 'replayed' | 'full' | 'stale' | 'superseded' | 'floor_full';

/** SPEC §7.2: raise a seed's floor to (idx, head) in the same commit as the nonce. */
export interface FloorRaise {
  /** hex seed id */
  seed: string;
  idx: number;
  /** hex */
  head: string;
}

export interface FloorRow {
  idx: number;
  head: string;
}

/** The floor decision shared by the stores: 'superseded' when the stored floor is past (idx, head) with another head. */
export function floorVerdict(row: FloorRow | undefined, raise: FloorRaise): 'superseded' | 'raise' | 'keep' {
  if (row === undefined) return 'raise';
  if (row.head === raise.head) return raise.idx > row.idx ? 'raise' : 'keep';
  if (raise.idx <= row.idx) return 'superseded';
  return 'raise';
}

export const DEFAULT_FLOOR_CAPACITY = 1_000_000;

/** What a read finds (no write): 'unused' means only that no live entry holds the key now. */
export type PeekResult = 'unused' | 'replayed' | 'stale';

export type NonceStoreKind = 'memory' | 'sqlite' | 'postgres';

/** A `consume` waiting for the durable stores' next batch (SQLite and PostgreSQL group commit). */
export interface PendingConsume {
  key: string;
  iat: number;
  now: number;
  raise?: FloorRaise;
  resolve: (r: ConsumeResult) => void;
  reject: (e: unknown) => void;
}

export interface NonceStore {
  readonly kind: NonceStoreKind;
  readonly capacity: number;
  /** Entries held (the `bridge_nonce_store_entries` gauge); see each implementation for how exact. */
  readonly size: number;
  /**
   * PostgreSQL only: the database server's clock minus this process's (ms), as last measured. The
   * others have one clock and leave it undefined.
   */
  readonly clockSkewMs?: number;
  /**
   * Record `key` as used at `now` (unix ms) by a proof with `iat` (unix s): 'stale' when `iat` is
   * more than 60 s from the store's clock (nothing recorded), else 'ok' the first time (and once
   * durable, for the durable stores), 'replayed' while a previous use is remembered, 'full' at
   * capacity. The PostgreSQL store reads the time from the database instead of `now`. Store faults reject (StoreUnavailableError → 503 `store_unavailable`).
   */
  consume(key: string, iat: number, now: number, raise?: FloorRaise): Promise<ConsumeResult>;
  /** SPEC §7.2: the seed's floor (memory and SQLite stores; undefined method: the store keeps none). */
  floor?(seed: string): Promise<FloorRow | undefined>;
  /** SPEC §7.2 `POST /anchor-floor`: floor := max(floor, raise); 'superseded' / 'floor_full' as consume. */
  raiseFloor?(raise: FloorRaise, now: number): Promise<{ result: 'ok' | 'superseded' | 'floor_full'; floor: FloorRow }>;
  /**
   * A read, no write (SPEC §7 check order: before the freshness gate and the signature): 'stale'
   * as `consume` would say, 'replayed' while a live entry holds `key`, else 'unused'. Only
   * `consume` decides: two requests may both read 'unused'.
   */
  peek(key: string, iat: number, now: number): Promise<PeekResult>;
  /**
   * PostgreSQL only: `peek`, and the database's clock (unix ms) of the same statement — one round
   * trip. The freshness gate checks the anchor's age (G4) on it, the clock that also judges `iat`
   * (SPEC §7 rev 4). The other stores have one clock, the caller's `now`.
   */
  peekAt?(key: string, iat: number, now: number): Promise<{ result: PeekResult; nowMs: number }>;
  /** A trivial query: resolves while the store serves, rejects (StoreUnavailableError) while it does not (`/health`). */
  probe(): Promise<void>;
  close(): Promise<void>;
}

export const DEFAULT_NONCE_CAPACITY = 100_000;

export function checkCapacity(capacity: number): number {
  if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError('nonce store capacity must be ≥ 1');
  return capacity;
}

/**
 * Entries live in a Map in insertion order. Expiry = max(iat + 61 s, use + 121 s), which is use +
 * 121 s for every proof that passed the freshness check, so with a clock that does not go backwards
 * insertion order is expiry order and expired entries are dropped from the front. If the clock
 * steps back, the front may hold an entry that is not yet expired while a later one is: purging
 * stops at the first live entry, so nothing is ever dropped early (some expired entries are merely
 * kept a little longer). No I/O, no timers.
 */
export class MemoryNonceStore implements NonceStore {
  readonly kind = 'memory';
  readonly capacity: number;
  private readonly entries = new Map<string, number>(); // key → expiry (unix ms)
  private readonly floors = new Map<string, FloorRow>();
  private readonly floorCapacity: number;

  constructor(capacity = DEFAULT_NONCE_CAPACITY, floorCapacity = DEFAULT_FLOOR_CAPACITY) {
    this.capacity = checkCapacity(capacity);
    this.floorCapacity = checkCapacity(floorCapacity);
  }

  floor(seed: string): Promise<FloorRow | undefined> {
    return Promise.resolve(this.floors.get(seed));
  }

  private applyFloor(raise: FloorRaise): 'ok' | 'superseded' | 'floor_full' {
    const row = this.floors.get(raise.seed);
    const verdict = floorVerdict(row, raise);
    if (verdict === 'superseded') return 'superseded';
    if (row === undefined && this.floors.size >= this.floorCapacity) return 'floor_full';
    if (verdict === 'raise') this.floors.set(raise.seed, { idx: raise.idx, head: raise.head });
    return 'ok';
  }

  raiseFloor(raise: FloorRaise): Promise<{ result: 'ok' | 'superseded' | 'floor_full'; floor: FloorRow }> {
    const result = this.applyFloor(raise);
    return Promise.resolve({ result, floor: this.floors.get(raise.seed) ?? { idx: raise.idx, head: raise.head } });
  }

  /** Exact: live entries plus expired ones not yet purged. */
  get size(): number {
    return this.entries.size;
  }

  private purge(now: number): void {
    for (const [key, expiry] of this.entries) {
      if (expiry > now) break;
      this.entries.delete(key);
    }
  }

  consumeNow(key: string, iat: number, now: number, raise?: FloorRaise): ConsumeResult {
    if (!iatFresh(iat, now)) return 'stale';
    this.purge(now);
    const expiry = this.entries.get(key);
    if (expiry !== undefined && expiry > now) return 'replayed';
    if (expiry === undefined && this.entries.size >= this.capacity) return 'full';
    if (raise !== undefined) {
      const floor = this.applyFloor(raise);
      if (floor !== 'ok') return floor;
    }
    this.entries.delete(key); // an expired leftover (clock stepped back) is replaced at the end
    this.entries.set(key, nonceExpiryMs(iat, now));
    return 'ok';
  }

  consume(key: string, iat: number, now: number, raise?: FloorRaise): Promise<ConsumeResult> {
    return Promise.resolve(this.consumeNow(key, iat, now, raise));
  }

  peek(key: string, iat: number, now: number): Promise<PeekResult> {
    if (!iatFresh(iat, now)) return Promise.resolve('stale');
    const expiry = this.entries.get(key);
    return Promise.resolve(expiry !== undefined && expiry > now ? 'replayed' : 'unused');
  }

  probe(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
