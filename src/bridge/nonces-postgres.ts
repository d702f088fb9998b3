/**
 * The nonce store in PostgreSQL (`--store postgres://…`, SPEC §7 "Replicas"), shared by several
 * bridge replicas behind one issuer so a proof is accepted once across all of them. Nonces only,
 * never keys. Batched insert-if-absent, issuer binding and the counted capacity: docs/bridge.md.
 *
 * One clock for every replica (SPEC §7 rev 4): expiries are computed, compared and purged with the
 * database server's `now()`, and the insert rechecks each proof's `iat` (±60 s) against that same
 * `now()` in the same statement. A replica's own clock never decides what is expired, so a replica
 * whose clock runs ahead cannot purge a nonce that another one would still accept. The `now` that
 * callers pass is ignored here; this replica's clock only measures its skew from the database.
 */
import pg from 'pg';
import { mapPgError, redact } from '../store/postgres/db.ts';
import { StoreUnavailableError } from '../store/errors.ts';
import { BridgeConfigError } from './errors.ts';
import { checkCapacity, DEFAULT_FLOOR_CAPACITY, DEFAULT_NONCE_CAPACITY } from './nonces.ts';
import type { ConsumeResult, FloorRaise, FloorRow, NonceStore, PeekResult, PendingConsume as Pending } from './nonces.ts';
import { NONCE_MIN_RETENTION_SECONDS, POP_MAX_SKEW_SECONDS } from './pop.ts';
import { kelTipFromRow, type KelTipRow } from '../store/rows.ts';
import { RAISE_WHERE, type BridgeKelTip, type KelTipStore } from './kel-tips.ts';
import { MIGRATION_LOCK, Q, SCHEMA, SCHEMA_VERSION } from './nonces-postgres-sql.ts';

export interface PostgresNonceStoreOptions {
  /** postgres://user:password@host:port/database?… */
  url: string;
  /** The bridge's issuer: the store is bound to it at first use. */
  issuer: string;
  capacity?: number;
  /** Purge expired rows and recount this often (default 10 000 ms). */
  purgeIntervalMs?: number;
  /** Connections per replica (default 4). */
  poolSize?: number;
  connectTimeoutMs?: number;
  /** Any one statement, server-side (default 5000 ms); the client gives up 2 s later. */
  statementTimeoutMs?: number;
  /**
   * This replica's clock (unix ms), only to measure `clockSkewMs`; it never decides expiry. Default
   * Date.now.
   */
  clock?: () => number;
  /**
   * Tests only: stands in for the database server's clock (unix ms). Unset in production, where
   * the database's own `now()` is used.
   */
  databaseClock?: () => number;
  /** `--anchor-floor-max-seeds` (SPEC §7.2; default 1 000 000): seeds with a floor, counted over all replicas. */
  floorCapacity?: number;
}

type PurgeRow = { n: number; now_ms: number };

const types = new pg.TypeOverrides();
types.setTypeParser(20, (v: string) => Number(v)); // int8: unix ms and counts are safe integers

export class PostgresNonceStore implements NonceStore, KelTipStore {
  readonly kind = 'postgres';
  readonly capacity: number;
  /** Statements that inserted a batch, for tests. */
  batches = 0;
  private readonly pool: pg.Pool;
  private readonly purgeIntervalMs: number;
  private estimate: number;
  private queue: Pending[] = [];
  private inFlight: Promise<void> | null = null;
  private purging: Promise<void> | null = null;
  private closed = false;
  private readonly timer: NodeJS.Timeout;
  private readonly clock: () => number;
  private readonly databaseClock: (() => number) | undefined;
  private skew: number;
  private readonly floorCapacity: number;

  private constructor(pool: pg.Pool, o: PostgresNonceStoreOptions, capacity: number, first: PurgeRow, skew: number) {
    this.pool = pool;
    this.capacity = capacity;
    this.purgeIntervalMs = o.purgeIntervalMs ?? 10_000;
    this.clock = o.clock ?? Date.now;
    this.databaseClock = o.databaseClock;
    this.estimate = first.n;
    this.skew = skew;
    this.floorCapacity = checkCapacity(o.floorCapacity ?? DEFAULT_FLOOR_CAPACITY);
    this.timer = setInterval(() => {
      this.purgeNow().catch(() => undefined); // a failed purge is retried at the next tick
    }, this.purgeIntervalMs);
    this.timer.unref();
  }

  /**
   * The database's clock minus this replica's (ms), as of the last purge (at open, then at most
   * `purgeIntervalMs` ago), to within that statement's round trip. Positive: this replica is behind.
   */
  get clockSkewMs(): number {
    return this.skew;
  }

  /** The value for the `dbNow` parameter: null (the server's clock) unless a test stands in for it. */
  private dbClockParam(): number | null {
    return this.databaseClock === undefined ? null : this.databaseClock();
  }

  /** Connect, check durability settings, create the schema, bind the issuer, purge and count. */
  static async open(o: PostgresNonceStoreOptions): Promise<PostgresNonceStore> {
    const capacity = checkCapacity(o.capacity ?? DEFAULT_NONCE_CAPACITY);
    const statementTimeout = o.statementTimeoutMs ?? 5_000;
    const pool = new pg.Pool({
      connectionString: o.url,
      max: o.poolSize ?? 4,
      connectionTimeoutMillis: o.connectTimeoutMs ?? 5_000,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
      application_name: 'token-bridge',
      statement_timeout: statementTimeout,
      query_timeout: statementTimeout + 2_000,
      types,
    });
    pool.on('error', () => undefined); // a broken idle connection is dropped; requests report their own errors
    const where = redact(o.url);
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw new BridgeConfigError('store_unopenable', `cannot connect to the nonce store ${where}: ${(e as Error).message}`);
    }
    let first: PurgeRow;
    let skew: number;
    const clock = o.clock ?? Date.now;
    try {
      const s = (
        await client.query<{ sync: string; fsync: string; recovery: boolean }>(
          "SELECT current_setting('synchronous_commit') AS sync, current_setting('fsync') AS fsync, pg_is_in_recovery() AS recovery",
        )
      ).rows[0]!;
      if (s.recovery)
        throw new BridgeConfigError('store_read_only', `the nonce store ${where} is a read-only standby; point --store at the primary`);
      if (s.sync === 'off' || s.fsync === 'off') {
        throw new BridgeConfigError(
          'store_unsafe',
          `the nonce store ${where} runs with synchronous_commit=${s.sync}, fsync=${s.fsync}: used nonces could be lost and proofs replayed`,
        );
      }
      await client.query('BEGIN');
      await client.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
      await client.query(SCHEMA);
      await client.query("INSERT INTO tb_meta (key, value) VALUES ('schema_version', $1), ('issuer', $2) ON CONFLICT (key) DO NOTHING", [
        String(SCHEMA_VERSION),
        o.issuer,
      ]);
      const meta = new Map(
        (await client.query<{ key: string; value: string }>('SELECT key, value FROM tb_meta')).rows.map((r) => [r.key, r.value]),
      );
      const version = Number(meta.get('schema_version'));
      if (version > SCHEMA_VERSION)
        throw new BridgeConfigError(
          'store_schema',
          `the nonce store ${where} has schema version ${version}; this build knows ${SCHEMA_VERSION}`,
        );
      const bound = meta.get('issuer');
      if (bound !== o.issuer) {
        throw new BridgeConfigError(
          'store_issuer_mismatch',
          `the nonce store ${where} is bound to issuer ${JSON.stringify(bound)}, not ${JSON.stringify(o.issuer)} (one database per issuer)`,
        );
      }
      await client.query('COMMIT');
      const sent = clock();
      first = (await client.query<PurgeRow>(Q.purge, [o.databaseClock?.() ?? null])).rows[0]!;
      skew = first.now_ms - (sent + clock()) / 2;
      client.release();
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release(true);
      await pool.end().catch(() => undefined);
      if (e instanceof BridgeConfigError) throw e;
      throw new BridgeConfigError('store_unopenable', `cannot open the nonce store ${where}: ${(e as Error).message}`);
    }
    return new PostgresNonceStore(pool, o, capacity, first, skew);
  }

  /** An estimate: the table's rows at this replica's last purge (≤ purgeIntervalMs ago) plus its own inserts since. */
  get size(): number {
    return this.estimate;
  }

  /**
   * `now` is ignored: the database's clock decides (see the module comment). With a floor raise
   * (SPEC §7.2) the nonce and the floor go in one statement of their own, not in the batch.
   */
  consume(key: string, iat: number, now: number, raise?: FloorRaise): Promise<ConsumeResult> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('nonce store: closed'));
    if (raise !== undefined) return this.consumeWithRaise(key, iat, raise);
    return new Promise((resolve, reject) => {
      this.queue.push({ key, iat, now, resolve, reject });
      this.pump();
    });
  }

  private async consumeWithRaise(key: string, iat: number, raise: FloorRaise): Promise<ConsumeResult> {
    if (this.estimate + 1 > this.capacity) await this.purgeNow();
    if (this.estimate + 1 > this.capacity) {
      const r = await this.query<{ stale: boolean; live: boolean }>(Q.live, [[key], [iat], POP_MAX_SKEW_SECONDS, this.dbClockParam()]);
      const row = r.rows[0]!;
      return row.stale ? 'stale' : row.live ? 'replayed' : 'full';
    }
    const r = await this.query<{ stale: boolean; live: boolean; room_ok: boolean; floor_ok: boolean; inserted: boolean }>(Q.consumeRaise, [
      key,
      iat,
      POP_MAX_SKEW_SECONDS,
      NONCE_MIN_RETENTION_SECONDS,
      this.dbClockParam(),
      raise.seed,
      raise.idx,
      raise.head,
      this.floorCapacity,
    ]);
    this.batches++;
    const row = r.rows[0]!;
    if (row.inserted) {
      this.estimate++;
      return 'ok';
    }
    if (row.stale) return 'stale';
    // Live in this statement's snapshot, or another request with this very proof won the insert.
    if (row.live || row.floor_ok) return 'replayed';
    if (!row.room_ok) return 'floor_full';
    return 'superseded';
  }

  /** SPEC §7.2: the seed's floor (shared by the replicas). */
  async floor(seed: string): Promise<FloorRow | undefined> {
    if (this.closed) throw new StoreUnavailableError('nonce store: closed');
    const r = await this.query<FloorRow>(Q.floor, [seed]);
    return r.rows[0];
  }

  /** SPEC §7.2 `POST /anchor-floor`: floor := max(floor, raise) in one statement; never lowered; `now` is ignored. */
  async raiseFloor(raise: FloorRaise): Promise<{ result: 'ok' | 'superseded' | 'floor_full'; floor: FloorRow }> {
    if (this.closed) throw new StoreUnavailableError('nonce store: closed');
    const r = await this.query<{ room_ok: boolean; idx: number | null; head: string | null }>(Q.raiseFloor, [
      raise.seed,
      raise.idx,
      raise.head,
      this.dbClockParam(),
      this.floorCapacity,
    ]);
    const row = r.rows[0]!;
    if (row.idx !== null && row.head !== null) return { result: 'ok', floor: { idx: row.idx, head: row.head } };
    if (!row.room_ok) return { result: 'floor_full', floor: { idx: raise.idx, head: raise.head } };
    const now = await this.floor(raise.seed);
    return { result: 'superseded', floor: now ?? { idx: raise.idx, head: raise.head } };
  }

  /** One statement, on the database's clock; `now` is ignored. */
  async peek(key: string, iat: number): Promise<PeekResult> {
    return (await this.peekAt(key, iat)).result;
  }

  /** peek, and the database's clock (unix ms) that statement read: the freshness gate's "now" (G4). */
  async peekAt(key: string, iat: number): Promise<{ result: PeekResult; nowMs: number }> {
    if (this.closed) throw new StoreUnavailableError('nonce store: closed');
    const r = await this.query<{ now_ms: string | number; stale: boolean; live: boolean }>(Q.live, [
      [key],
      [iat],
      POP_MAX_SKEW_SECONDS,
      this.dbClockParam(),
    ]);
    const row = r.rows[0]!;
    return { result: row.stale ? 'stale' : row.live ? 'replayed' : 'unused', nowMs: Number(row.now_ms) };
  }

  /** Send the queue as one batch unless one is in flight (then it goes when that one returns). */
  private pump(): void {
    if (this.inFlight !== null || this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.inFlight = this.runBatch(batch)
      .catch((e: unknown) => {
        const error = mapPgError(e);
        for (const p of batch) p.reject(error);
      })
      .finally(() => {
        this.inFlight = null;
        this.pump();
      });
  }

  private async query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values);
    } catch (e) {
      throw mapPgError(e);
    }
  }

  private purgeNow(): Promise<void> {
    const sent = this.clock();
    this.purging ??= this.query<PurgeRow>(Q.purge, [this.dbClockParam()])
      .then((r) => {
        const row = r.rows[0]!;
        this.estimate = row.n;
        this.skew = row.now_ms - (sent + this.clock()) / 2;
      })
      .finally(() => {
        this.purging = null;
      });
    return this.purging;
  }

  private async runBatch(batch: Pending[]): Promise<void> {
    // One representative per key (the first); the others share its fate.
    const byKey = new Map<string, Pending[]>();
    for (const p of batch) {
      const same = byKey.get(p.key);
      if (same === undefined) byKey.set(p.key, [p]);
      else same.push(p);
    }
    const keys = [...byKey.keys()].sort();
    const iats = (ks: string[]): number[] => ks.map((k) => byKey.get(k)![0]!.iat);
    if (this.estimate + keys.length > this.capacity) await this.purgeNow();
    const room = Math.max(0, this.capacity - this.estimate);
    const admit = keys.slice(0, room);
    const rest = keys.slice(room);
    const result = new Map<string, ConsumeResult>();
    if (admit.length > 0) {
      const r = await this.query<{ key: string; inserted: boolean }>(Q.consume, [
        admit,
        iats(admit),
        POP_MAX_SKEW_SECONDS,
        NONCE_MIN_RETENTION_SECONDS,
        this.dbClockParam(),
      ]);
      this.batches++;
      const fresh = new Map(r.rows.map((row) => [row.key, row.inserted]));
      for (const k of admit) {
        const inserted = fresh.get(k);
        result.set(k, inserted === undefined ? 'stale' : inserted ? 'ok' : 'replayed');
        if (inserted === true) this.estimate++;
      }
    }
    if (rest.length > 0) {
      const r = await this.query<{ key: string; stale: boolean; live: boolean }>(Q.live, [
        rest,
        iats(rest),
        POP_MAX_SKEW_SECONDS,
        this.dbClockParam(),
      ]);
      for (const row of r.rows) result.set(row.key, row.stale ? 'stale' : row.live ? 'replayed' : 'full');
    }
    for (const [k, ps] of byKey) {
      const first = result.get(k)!;
      ps.forEach((p, i) => {
        p.resolve(i === 0 || first !== 'ok' ? first : 'replayed');
      });
    }
  }

  /** SPEC §7.1: every stored KEL tip (shared by the replicas). */
  async kelTips(): Promise<BridgeKelTip[]> {
    const r = await this.query<KelTipRow>('SELECT prefix, s, d, est_s, est_d FROM tb_kel_tips', []);
    return r.rows.map(kelTipFromRow);
  }

  /** SPEC §7.1: raise the rows (never lower them) in one statement. */
  async raiseKelTips(tips: readonly BridgeKelTip[]): Promise<void> {
    if (tips.length === 0) return;
    const sorted = [...tips].sort((a, b) => (a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0));
    await this.query(
      `INSERT INTO tb_kel_tips AS tb_kel_tips (prefix, s, d, est_s, est_d)
         SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::text[])
       ON CONFLICT (prefix) DO UPDATE SET s = excluded.s, d = excluded.d, est_s = excluded.est_s, est_d = excluded.est_d WHERE ${RAISE_WHERE}`,
      [
        sorted.map((t) => t.prefix),
        sorted.map((t) => t.s),
        sorted.map((t) => t.d),
        sorted.map((t) => t.estS ?? null),
        sorted.map((t) => t.estD ?? null),
      ],
    );
  }

  async probe(): Promise<void> {
    if (this.closed) throw new StoreUnavailableError('nonce store: closed');
    await this.query('SELECT 1', []);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.timer);
    while (this.inFlight !== null) await this.inFlight;
    this.closed = true;
    await this.purging?.catch(() => undefined);
    await this.pool.end();
  }
}
