/**
 * The default nonce store (SPEC §7): `nonces.sqlite` (mode 0600, WAL, synchronous=FULL) in
 * `--data-dir`, so a used nonce survives a crash and fresh proofs are accepted at once after one.
 * Group commit (one transaction per event-loop turn) and an exclusive lock at open (one bridge per
 * data directory, which keeps the entry count exact): docs/bridge.md.
 *
 * Clock: one process owns the file, so the process clock is the database's clock. Each request's
 * `now` (the clock its `iat` was checked with) computes its expiry and rechecks its `iat`; purges
 * use the oldest `now` of the batch. Nothing here mixes two machines' clocks.
 */
import Database from 'better-sqlite3';
import type { Database as Db, Statement } from 'better-sqlite3';
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { StoreUnavailableError } from '../store/errors.ts';
import { BridgeConfigError } from './errors.ts';
import { checkCapacity, DEFAULT_FLOOR_CAPACITY, DEFAULT_NONCE_CAPACITY, floorVerdict } from './nonces.ts';
import type { ConsumeResult, FloorRaise, FloorRow, NonceStore, PeekResult, PendingConsume as Pending } from './nonces.ts';
import { iatFresh, nonceExpiryMs } from './pop.ts';
import { kelTipFromRow, type KelTipRow } from '../store/rows.ts';
import { RAISE_WHERE, SQLITE_KEL_TIPS_SCHEMA, type BridgeKelTip, type KelTipStore } from './kel-tips.ts';

export const NONCES_SQLITE_FILE = 'nonces.sqlite';
const SCHEMA_VERSION = 1;
const SCHEMA = `CREATE TABLE IF NOT EXISTS nonces (key TEXT PRIMARY KEY, expires_at INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS nonces_by_expiry ON nonces (expires_at);
${SQLITE_KEL_TIPS_SCHEMA}
CREATE TABLE IF NOT EXISTS tb_anchor_floor (seed TEXT PRIMARY KEY, idx INTEGER NOT NULL, head TEXT NOT NULL, updated_at INTEGER NOT NULL) WITHOUT ROWID;`;

export interface SqliteNonceStoreOptions {
  capacity?: number;
  /** Delete expired rows at most this often (default 10 000 ms). */
  purgeIntervalMs?: number;
  /** The clock (unix ms) of the idle-time purge; requests bring their own `now`. Default Date.now. */
  clock?: () => number;
  /** `--anchor-floor-max-seeds` (SPEC §7.2; default 1 000 000). */
  floorCapacity?: number;
}

export class SqliteNonceStore implements NonceStore, KelTipStore {
  readonly kind = 'sqlite';
  readonly capacity: number;
  readonly path: string;
  /** Transactions committed (one per batch), for tests and the group-commit claim. */
  commits = 0;
  private readonly db: Db;
  private readonly get: Statement<[string], { expires_at: number }>;
  private readonly put: Statement<[string, number]>;
  private readonly purge: Statement<[number]>;
  private readonly purgeIntervalMs: number;
  private readonly clock: () => number;
  private count: number;
  private floorCount: number;
  private readonly floorCapacity: number;
  private readonly getFloor: Statement<[string], FloorRow>;
  private readonly putFloor: Statement<[string, number, string, number]>;
  private nextPurgeAt = 0;
  private queue: Pending[] = [];
  private scheduled = false;
  private closed = false;
  private readonly timer: NodeJS.Timeout;

  private constructor(path: string, db: Db, capacity: number, purgeIntervalMs: number, clock: () => number, floorCapacity: number) {
    this.path = path;
    this.clock = clock;
    this.db = db;
    this.capacity = capacity;
    this.purgeIntervalMs = purgeIntervalMs;
    this.get = db.prepare('SELECT expires_at FROM nonces WHERE key = ?');
    this.put = db.prepare(
      'INSERT INTO nonces (key, expires_at) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at',
    );
    this.purge = db.prepare('DELETE FROM nonces WHERE expires_at <= ?');
    this.count = (db.prepare('SELECT count(*) AS n FROM nonces').get() as { n: number }).n;
    this.floorCapacity = floorCapacity;
    this.floorCount = (db.prepare('SELECT count(*) AS n FROM tb_anchor_floor').get() as { n: number }).n;
    this.getFloor = db.prepare('SELECT idx, head FROM tb_anchor_floor WHERE seed = ?');
    this.putFloor = db.prepare(
      'INSERT INTO tb_anchor_floor (seed, idx, head, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (seed) DO UPDATE SET idx = excluded.idx, head = excluded.head, updated_at = excluded.updated_at',
    );
    this.timer = setInterval(() => {
      if (this.count > 0) this.schedule();
    }, purgeIntervalMs);
    this.timer.unref();
  }

  /** Open (creating the directory, the file with mode 0600 and the schema); refuses a file in use by another process. */
  static open(path: string, opts: SqliteNonceStoreOptions = {}): SqliteNonceStore {
    const capacity = checkCapacity(opts.capacity ?? DEFAULT_NONCE_CAPACITY);
    let db: Db | undefined;
    try {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      closeSync(openSync(path, 'a', 0o600));
      chmodSync(path, 0o600); // SQLite gives its -wal file the database file's mode
      db = new Database(path, { timeout: 0 });
      db.pragma('locking_mode = EXCLUSIVE'); // before WAL: no shared-memory file, and one process only
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      const version = db.pragma('user_version', { simple: true }) as number;
      if (version > SCHEMA_VERSION)
        throw new BridgeConfigError('nonce_store_schema', `${path} has schema version ${version}; this build knows ${SCHEMA_VERSION}`);
      // The first write takes the exclusive lock, held until close.
      db.transaction(() => {
        db!.exec(SCHEMA);
        db!.pragma(`user_version = ${SCHEMA_VERSION}`);
      }).immediate();
      return new SqliteNonceStore(
        path,
        db,
        capacity,
        opts.purgeIntervalMs ?? 10_000,
        opts.clock ?? Date.now,
        checkCapacity(opts.floorCapacity ?? DEFAULT_FLOOR_CAPACITY),
      );
    } catch (e) {
      db?.close();
      if (e instanceof BridgeConfigError) throw e;
      const code = (e as { code?: unknown }).code;
      if (typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test(code)) {
        throw new BridgeConfigError(
          'nonce_store_locked',
          `the nonce store ${path} is in use by another process (replicas share --store postgres://… instead)`,
        );
      }
      throw new BridgeConfigError('nonce_store_unopenable', `cannot open the nonce store ${path}: ${(e as Error).message}`);
    }
  }

  /** Exact: rows held, expired ones included until the next purge (at most `purgeIntervalMs` later). */
  get size(): number {
    return this.count;
  }

  consume(key: string, iat: number, now: number, raise?: FloorRaise): Promise<ConsumeResult> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('nonce store: closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ key, iat, now, resolve, reject, ...(raise === undefined ? {} : { raise }) });
      this.schedule();
    });
  }

  peek(key: string, iat: number, now: number): Promise<PeekResult> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('nonce store: closed'));
    if (!iatFresh(iat, now)) return Promise.resolve('stale');
    try {
      const row = this.get.get(key);
      return Promise.resolve(row !== undefined && row.expires_at > now ? 'replayed' : 'unused');
    } catch (e) {
      return Promise.reject(new StoreUnavailableError(`nonce store: ${e instanceof Error ? e.message : String(e)}`));
    }
  }

  private schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    setImmediate(() => {
      this.flush();
    });
  }

  /** One transaction for the whole queue; settle every request after COMMIT (or reject all on failure). */
  private flush(): void {
    this.scheduled = false;
    if (this.closed) return;
    const batch = this.queue;
    this.queue = [];
    const results: ConsumeResult[] = [];
    let count = this.count;
    let floorCount = this.floorCount;
    let nextPurgeAt = this.nextPurgeAt;
    try {
      this.db
        .transaction(() => {
          const purge = (now: number): void => {
            count -= this.purge.run(now).changes;
            nextPurgeAt = now + this.purgeIntervalMs;
          };
          const batchNow = batch.reduce((m, p) => Math.min(m, p.now), batch.length === 0 ? this.clock() : Infinity);
          if (batchNow >= nextPurgeAt) purge(batchNow);
          let purgedForRoom = false;
          for (const p of batch) {
            if (!iatFresh(p.iat, p.now)) {
              results.push('stale');
              continue;
            }
            const row = this.get.get(p.key);
            if (row !== undefined && row.expires_at > p.now) {
              results.push('replayed');
              continue;
            }
            if (row === undefined && count >= this.capacity && !purgedForRoom) {
              purge(p.now);
              purgedForRoom = true;
            }
            if (row === undefined && count >= this.capacity) {
              results.push('full');
              continue;
            }
            if (p.raise !== undefined) {
              // SPEC §7.2: the floor raise and the nonce in one transaction, or neither
              const floor = this.getFloor.get(p.raise.seed);
              const verdict = floorVerdict(floor, p.raise);
              if (verdict === 'superseded') {
                results.push('superseded');
                continue;
              }
              if (floor === undefined && floorCount >= this.floorCapacity) {
                results.push('floor_full');
                continue;
              }
              if (verdict === 'raise') {
                this.putFloor.run(p.raise.seed, p.raise.idx, p.raise.head, p.now);
                if (floor === undefined) floorCount++;
              }
            }
            this.put.run(p.key, nonceExpiryMs(p.iat, p.now));
            if (row === undefined) count++;
            results.push('ok');
          }
        })
        .immediate();
    } catch (e) {
      const error = new StoreUnavailableError(`nonce store: ${e instanceof Error ? e.message : String(e)}`);
      for (const p of batch) p.reject(error);
      return;
    }
    this.commits++;
    this.count = count;
    this.floorCount = floorCount;
    this.nextPurgeAt = nextPurgeAt;
    batch.forEach((p, i) => {
      p.resolve(results[i]!);
    });
  }

  /** SPEC §7.2: the seed's floor. */
  floor(seed: string): Promise<FloorRow | undefined> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('nonce store: closed'));
    try {
      return Promise.resolve(this.getFloor.get(seed));
    } catch (e) {
      return Promise.reject(new StoreUnavailableError(`nonce store: ${e instanceof Error ? e.message : String(e)}`));
    }
  }

  /** SPEC §7.2 `POST /anchor-floor`: floor := max(floor, raise), durably, never lowered. */
  raiseFloor(raise: FloorRaise, now: number): Promise<{ result: 'ok' | 'superseded' | 'floor_full'; floor: FloorRow }> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('nonce store: closed'));
    try {
      const out = this.db
        .transaction((): { result: 'ok' | 'superseded' | 'floor_full'; floor: FloorRow } => {
          const row = this.getFloor.get(raise.seed);
          const verdict = floorVerdict(row, raise);
          if (verdict === 'superseded') return { result: 'superseded', floor: row! };
          if (row === undefined && this.floorCount >= this.floorCapacity)
            return { result: 'floor_full', floor: { idx: raise.idx, head: raise.head } };
          if (verdict === 'keep') return { result: 'ok', floor: row! };
          this.putFloor.run(raise.seed, raise.idx, raise.head, now);
          if (row === undefined) this.floorCount++;
          return { result: 'ok', floor: { idx: raise.idx, head: raise.head } };
        })
        .immediate();
      return Promise.resolve(out);
    } catch (e) {
      return Promise.reject(new StoreUnavailableError(`nonce store: ${e instanceof Error ? e.message : String(e)}`));
    }
  }

  /** SPEC §7.1: every stored KEL tip. */
  kelTips(): Promise<BridgeKelTip[]> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('nonce store: closed'));
    try {
      const rows = this.db.prepare('SELECT prefix, s, d, est_s, est_d FROM tb_kel_tips').all() as KelTipRow[];
      return Promise.resolve(rows.map(kelTipFromRow));
    } catch (e) {
      return Promise.reject(new StoreUnavailableError(`nonce store: ${e instanceof Error ? e.message : String(e)}`));
    }
  }

  /** SPEC §7.1: raise the rows (never lower them) in one durable transaction. */
  raiseKelTips(tips: readonly BridgeKelTip[]): Promise<void> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('nonce store: closed'));
    try {
      const put = this.db.prepare(
        `INSERT INTO tb_kel_tips (prefix, s, d, est_s, est_d) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (prefix) DO UPDATE SET s = excluded.s, d = excluded.d, est_s = excluded.est_s, est_d = excluded.est_d WHERE ${RAISE_WHERE}`,
      );
      this.db
        .transaction(() => {
          for (const t of tips) put.run(t.prefix, t.s, t.d, t.estS ?? null, t.estD ?? null);
        })
        .immediate();
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(new StoreUnavailableError(`nonce store: ${e instanceof Error ? e.message : String(e)}`));
    }
  }

  probe(): Promise<void> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('nonce store: closed'));
    try {
      this.db.prepare('SELECT count(*) FROM nonces WHERE 0').get();
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(new StoreUnavailableError(`nonce store: ${e instanceof Error ? e.message : String(e)}`));
    }
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    clearInterval(this.timer);
    if (this.queue.length > 0) this.flush();
    this.closed = true;
    this.db.close();
    return Promise.resolve();
  }
}
