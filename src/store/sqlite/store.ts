/**
 * The SQLite driver of the witness store (the default): one file, one writer process. A separate
 * lock file held with an exclusive SQLite lock keeps a second process off the store (fcntl locks
 * vanish with the process, so a crash never leaves a stale lock).
 *
 * A write transaction is BEGIN IMMEDIATE … COMMIT on the writer connection, serialized with the
 * cosign role's writes by one mutex; the log and anchor-state halves (log.ts, anchor-state.ts)
 * write through it, so a batch's seeds and log entries commit together.
 */
import Database from 'better-sqlite3';
import type { Database as Db } from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { StoreOpenError, StoreUnavailableError } from '../errors.ts';
import { bindWitnessKey } from '../key-binding.ts';
import type { StoreCapabilities, StoreIdentity, StoreTransaction, KeyRotationRecord, WitnessKeyRecord, WitnessStore } from '../types.ts';
import { SqliteAnchorState } from './anchor-state.ts';
import { SqliteCosignState } from './cosign-state.ts';
import { guard, openDb, SqliteConnections, startCheckpointer } from './db.ts';
import { SqliteLog } from './log.ts';
import { SqliteLogWitness } from './log-witness.ts';
import { SqliteKelLedger } from './kel-ledger.ts';
import { SqliteKeyHistory } from './key-history.ts';
import { migrate } from './schema.ts';
import { WalSync, type WalFlush } from './wal-sync.ts';

export { MIGRATIONS, SCHEMA_VERSION } from './schema.ts';

const DAY = 86_400;

export class SqliteStore implements WitnessStore {
  readonly capabilities: StoreCapabilities = { multiWriter: false };
  readonly log: SqliteLog;
  readonly anchors: SqliteAnchorState;
  readonly cosign: SqliteCosignState;
  readonly logWitness: SqliteLogWitness;
  readonly kelLedger: SqliteKelLedger;
  private readonly keys: SqliteKeyHistory;
  private readonly c: SqliteConnections;
  private readonly lock: Db;
  private readonly checkpointer: { stop: () => Promise<void> };
  private readonly begin;
  private readonly commit;
  private readonly rollback;

  private constructor(lock: Db, writer: Db, reader: Db, checkpointer: { stop: () => Promise<void> }, sync: WalSync) {
    this.lock = lock;
    this.checkpointer = checkpointer;
    this.c = new SqliteConnections(writer, reader, sync);
    this.log = new SqliteLog(this.c);
    this.anchors = new SqliteAnchorState(this.c);
    this.cosign = new SqliteCosignState(this.c);
    this.logWitness = new SqliteLogWitness(this.c);
    this.kelLedger = new SqliteKelLedger(this.c);
    this.keys = new SqliteKeyHistory(this.c);
    this.begin = writer.prepare('BEGIN IMMEDIATE');
    this.commit = writer.prepare('COMMIT');
    this.rollback = writer.prepare('ROLLBACK');
  }

  /**
   * Open (creating parents and schema); refuses a store locked by another process. `flush`
   * replaces the WAL's fdatasync (tests: a slow or failing disk).
   */
  static open(path: string, opts: { flush?: WalFlush } = {}): SqliteStore {
    mkdirSync(dirname(path), { recursive: true });
    let lock: Db;
    try {
      lock = new Database(`${path}.lock`, { timeout: 0 });
      lock.pragma('locking_mode = EXCLUSIVE');
      lock.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS holder (pid INTEGER); COMMIT;');
    } catch (e) {
      const code = (e as { code?: string }).code ?? '';
      if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
        throw new StoreOpenError('store_locked', `the store ${path} is in use by another process`);
      }
      throw new StoreOpenError('store_unopenable', `cannot open the store ${path}: ${(e as Error).message}`);
    }
    try {
      const writer = openDb(path);
      migrate(writer, path);
      // From here on the writer's COMMIT does not fsync; WalSync does, off the event loop.
      writer.pragma('synchronous = NORMAL');
      const reader = openDb(path);
      const sync = new WalSync(`${resolve(path)}-wal`, opts.flush);
      return new SqliteStore(lock, writer, reader, startCheckpointer(path), sync);
    } catch (e) {
      lock.close();
      if (e instanceof StoreOpenError) throw e;
      throw new StoreOpenError('store_unopenable', `cannot open the store ${path}: ${(e as Error).message}`);
    }
  }

  async bindIdentity(id: StoreIdentity): Promise<void> {
    await this.transaction((tx) => {
      const fields: [keyof StoreIdentity, string][] = [
        ['name', 'name'],
        ['logOrigin', 'log_origin'],
      ];
      for (const [field, key] of fields) {
        const stored = this.log.w.getMeta.get(key)?.value;
        if (stored === undefined) this.log.w.setMeta.run(key, id[field]);
        else if (stored !== id[field]) {
          throw new StoreOpenError(
            'store_identity_mismatch',
            `the store is bound to ${key} ${JSON.stringify(stored)}, not ${JSON.stringify(id[field])}`,
          );
        }
      }
      return bindWitnessKey(tx.keys, id.witnessKey, () => {
        if (this.log.w.getMeta.get('witness_key') === undefined) this.log.w.setMeta.run('witness_key', id.witnessKey);
      });
    });
  }

  keyHistory(): Promise<WitnessKeyRecord[]> {
    return this.keys.history();
  }

  keyRotations(): Promise<KeyRotationRecord[]> {
    return this.keys.entries();
  }

  witnessCosignature(leafIndex: number, key: string): Promise<Uint8Array | undefined> {
    return this.keys.witnessCosignature(leafIndex, key);
  }

  putWitnessCosignature(leafIndex: number, key: string, signature: Uint8Array): Promise<Uint8Array> {
    return this.keys.putWitnessCosignature(leafIndex, key, signature);
  }

  /**
   * BEGIN IMMEDIATE … COMMIT in the write lane. The lane is free again as soon as COMMIT returns;
   * the promise resolves once the commit is durable (WalSync: an fdatasync of the WAL that began
   * after the COMMIT has completed), so no reply is built on a commit a power cut could undo.
   */
  async transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    const { result, gen } = await this.c.mutex.run(async () => {
      if (this.c.closed) throw new StoreUnavailableError('store: closed');
      this.c.sync.check();
      guard(() => this.begin.run());
      let done = false;
      try {
        const log = this.log.transaction();
        const result = await fn({
          log,
          anchors: this.anchors.transaction(),
          kel: this.kelLedger.transaction(),
          keys: this.keys.transaction(),
        });
        // Quota windows look back one day at most: prune older events each time the log crosses a multiple of 1024.
        const base = log.baseSize;
        if (base !== undefined && Math.floor((await log.size()) / 1024) > Math.floor(base / 1024)) {
          guard(() => {
            this.anchors.pruneEvents(Math.floor(Date.now() / 1000) - 2 * DAY);
          });
        }
        guard(() => this.commit.run());
        done = true;
        return { result, gen: this.c.sync.committed() };
      } finally {
        if (!done && this.c.writer.inTransaction) {
          try {
            this.rollback.run();
          } catch {
            // A failed rollback leaves SQLite to roll back the journal on next open.
          }
        }
      }
    });
    await this.c.sync.durable(gen);
    return result;
  }

  async close(): Promise<void> {
    if (this.c.closed) return;
    await this.checkpointer.stop();
    await this.c.mutex.run(async () => {
      this.c.closed = true;
      await this.c.sync.durable().catch(() => undefined); // the last commits' replies are waiting on it
      try {
        this.c.writer.pragma('synchronous = FULL');
        this.c.writer.pragma('wal_checkpoint(TRUNCATE)');
      } catch {
        // The WAL is replayed at the next open anyway.
      }
      this.c.sync.close();
      this.c.reader.close();
      this.c.writer.close();
      this.lock.close();
    });
  }
}
