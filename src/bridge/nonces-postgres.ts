/**
 * The nonce store in PostgreSQL (`--store postgres://…`, SPEC §7 "Replicas"), shared by several
 * bridge replicas behind one issuer so a proof is accepted once across all of them. Nonces only,
 * never keys. Batched insert-if-absent, issuer binding and the counted capacity: docs/bridge.md.
 */
import pg from 'pg';
import { mapPgError, redact } from '../store/postgres/db.ts';
import { StoreUnavailableError } from '../store/errors.ts';
import { BridgeConfigError } from './errors.ts';
import { checkCapacity, DEFAULT_NONCE_CAPACITY } from './nonces.ts';
import type { ConsumeResult, NonceStore, PendingConsume as Pending } from './nonces.ts';
import { nonceExpiryMs } from './pop.ts';

const SCHEMA_VERSION = 1;
const MIGRATION_LOCK = 0x5442_4d49; // "TBMI"

const SCHEMA = `CREATE TABLE IF NOT EXISTS tb_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS tb_nonces (key text PRIMARY KEY, expires_at bigint NOT NULL);
CREATE INDEX IF NOT EXISTS tb_nonces_by_expiry ON tb_nonces (expires_at);`;

const Q = {
  consume: `INSERT INTO tb_nonces AS n (key, expires_at) SELECT * FROM unnest($1::text[], $2::bigint[])
            ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE n.expires_at <= $3
            RETURNING n.key`,
  live: 'SELECT key FROM tb_nonces WHERE key = ANY($1::text[]) AND expires_at > $2',
  // The outer SELECT sees the table as it was before the DELETE: subtract what it removed.
  purge: `WITH d AS (DELETE FROM tb_nonces WHERE expires_at <= $1 RETURNING 1)
          SELECT (SELECT count(*) FROM tb_nonces) - (SELECT count(*) FROM d) AS n`,
};

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
  /** The clock (unix ms) of the purges at open and on the timer; requests bring their own `now`. Default Date.now. */
  clock?: () => number;
}

const types = new pg.TypeOverrides();
types.setTypeParser(20, (v: string) => Number(v)); // int8: unix ms and counts are safe integers

export class PostgresNonceStore implements NonceStore {
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

  private constructor(pool: pg.Pool, capacity: number, purgeIntervalMs: number, count: number, clock: () => number) {
    this.pool = pool;
    this.capacity = capacity;
    this.purgeIntervalMs = purgeIntervalMs;
    this.estimate = count;
    this.timer = setInterval(() => {
      this.purgeNow(clock()).catch(() => undefined); // a failed purge is retried at the next tick
    }, purgeIntervalMs);
    this.timer.unref();
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
    let count: number;
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
      count = (await client.query<{ n: number }>(Q.purge, [(o.clock ?? Date.now)()])).rows[0]!.n;
      client.release();
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release(true);
      await pool.end().catch(() => undefined);
      if (e instanceof BridgeConfigError) throw e;
      throw new BridgeConfigError('store_unopenable', `cannot open the nonce store ${where}: ${(e as Error).message}`);
    }
    return new PostgresNonceStore(pool, capacity, o.purgeIntervalMs ?? 10_000, count, o.clock ?? Date.now);
  }

  /** An estimate: the table's rows at this replica's last purge (≤ purgeIntervalMs ago) plus its own inserts since. */
  get size(): number {
    return this.estimate;
  }

  consume(key: string, iat: number, now: number): Promise<ConsumeResult> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('nonce store: closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ key, iat, now, resolve, reject });
      this.pump();
    });
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

  private purgeNow(now: number): Promise<void> {
    this.purging ??= this.query<{ n: number }>(Q.purge, [now])
      .then((r) => {
        this.estimate = r.rows[0]!.n;
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
    const now = batch.reduce((m, p) => Math.min(m, p.now), Infinity);
    if (this.estimate + keys.length > this.capacity) await this.purgeNow(now);
    const room = Math.max(0, this.capacity - this.estimate);
    const admit = keys.slice(0, room);
    const rest = keys.slice(room);
    const result = new Map<string, ConsumeResult>();
    if (admit.length > 0) {
      const expiries = admit.map((k) => {
        const p = byKey.get(k)![0]!;
        return nonceExpiryMs(p.iat, p.now);
      });
      const r = await this.query<{ key: string }>(Q.consume, [admit, expiries, now]);
      this.batches++;
      const inserted = new Set(r.rows.map((row) => row.key));
      this.estimate += inserted.size;
      for (const k of admit) result.set(k, inserted.has(k) ? 'ok' : 'replayed');
    }
    if (rest.length > 0) {
      const live = new Set((await this.query<{ key: string }>(Q.live, [rest, now])).rows.map((row) => row.key));
      for (const k of rest) result.set(k, live.has(k) ? 'replayed' : 'full');
    }
    for (const [k, ps] of byKey) {
      const first = result.get(k)!;
      ps.forEach((p, i) => {
        p.resolve(i === 0 || first !== 'ok' ? first : 'replayed');
      });
    }
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
