/**
 * The SQLite store's connections (better-sqlite3, WAL): a writer used only inside write
 * transactions (serialized by a mutex; synchronous=NORMAL, its commits made durable by WalSync's
 * fdatasync off the event loop before anything built on them is released), a reader that sees
 * committed state only (its results released once what it could see is durable), and a worker
 * thread that checkpoints the WAL (synchronous=FULL). Every concern (log.ts, anchor-state.ts,
 * cosign-state.ts) prepares its statements on these and reports driver faults through `guard`.
 */
import Database from 'better-sqlite3';
import type { Database as Db } from 'better-sqlite3';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { StoreUnavailableError } from '../errors.ts';
import { Mutex } from '../mutex.ts';
import { WalSync } from './wal-sync.ts';

const UNAVAILABLE = /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN|CORRUPT|NOTADB|BUSY|LOCKED|PROTOCOL|NOMEM|PERM)/;

/** Map driver faults to StoreUnavailableError (503 store_unavailable); rethrow the rest. */
export function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && UNAVAILABLE.test(code)) throw new StoreUnavailableError(`store: ${code}: ${(e as Error).message}`);
    throw e;
  }
}

export function openDb(path: string): Db {
  // A short busy timeout: the checkpointer may hold the WAL index briefly.
  const db = new Database(path, { timeout: 2000 });
  db.pragma('journal_mode = WAL');
  // The writer switches to NORMAL once migrated (SqliteStore.open): WalSync syncs its commits.
  db.pragma('synchronous = FULL');
  db.pragma('wal_autocheckpoint = 0');
  db.pragma('foreign_keys = ON');
  db.defaultSafeIntegers(false);
  return db;
}

/** The connections every concern shares, and the one write lane. */
export class SqliteConnections {
  readonly writer: Db;
  readonly reader: Db;
  /** Write transactions (the log and anchor state, cosign CAS batches, evidence) one at a time. */
  readonly mutex = new Mutex();
  /** The writer's commits made durable (fdatasync of the WAL on the thread pool, grouped). */
  readonly sync: WalSync;
  closed = false;

  constructor(writer: Db, reader: Db, sync: WalSync) {
    this.writer = writer;
    this.reader = reader;
    this.sync = sync;
  }

  /**
   * A read on committed state, released once every commit it could have seen is durable (a reply
   * never shows state a power cut could take back). Driver faults and use after close reject
   * with store_unavailable.
   */
  read<T>(fn: () => T): Promise<T> {
    try {
      if (this.closed) throw new StoreUnavailableError('store: closed');
      this.sync.check();
      return this.sync.settle(guard(fn));
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
  }

  /** A write lane turn (its own transaction or a single statement): resolved once durable; refused after close. */
  async write<T>(fn: () => T): Promise<T> {
    const { value, gen } = await this.mutex.run(() => {
      if (this.closed) throw new StoreUnavailableError('store: closed');
      this.sync.check();
      // A throw rolls the turn back (better-sqlite3 transactions; a failed single statement commits nothing).
      return Promise.resolve({ value: guard(fn), gen: this.sync.committed() });
    });
    await this.sync.durable(gen);
    return value;
  }
}

/**
 * WAL checkpoints run on a worker thread with its own connection (PASSIVE: never blocks the
 * writer), so the event loop never stalls copying pages into the database file; the connections
 * of the event loop have automatic checkpoints off. The driver module is resolved here and handed
 * to the worker, so this also works from the single-file bundle.
 */
const CHECKPOINT_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
let db = null;
parentPort.on('message', (m) => {
  if (m === 'stop') { if (db !== null) db.close(); parentPort.close(); return; }
  try {
    if (db === null) {
      db = new Database(workerData.path, { timeout: 1000, fileMustExist: true });
      db.pragma('synchronous = FULL');
    }
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch { /* retried at the next tick */ }
});
`;
const CHECKPOINT_INTERVAL_MS = 500;

export function startCheckpointer(path: string): { stop: () => Promise<void> } {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(CHECKPOINT_WORKER, { eval: true, workerData: { driver, path } });
  worker.unref();
  worker.on('error', () => {
    // A checkpointer that dies only means a longer WAL; the writer's close checkpoints it.
  });
  const tick = setInterval(() => {
    worker.postMessage('tick');
  }, CHECKPOINT_INTERVAL_MS);
  tick.unref();
  return {
    stop: async () => {
      clearInterval(tick);
      worker.ref(); // keep the process alive until the worker has closed its connection
      const exited = new Promise((r) => worker.once('exit', r));
      worker.postMessage('stop');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 2000)))]);
      clearTimeout(timer);
      await worker.terminate();
    },
  };
}
