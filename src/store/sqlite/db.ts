/**
 * The SQLite store's connections (better-sqlite3, WAL, synchronous=FULL): a writer used only
 * inside write transactions (serialized by a mutex), a reader that sees committed state only, and
 * a worker thread that checkpoints the WAL. Every concern (log.ts, anchor-state.ts,
 * cosign-state.ts) prepares its statements on these and reports driver faults through `guard`.
 */
import Database from 'better-sqlite3';
import type { Database as Db } from 'better-sqlite3';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { StoreUnavailableError } from '../errors.ts';
import { Mutex } from '../mutex.ts';

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
  closed = false;

  constructor(writer: Db, reader: Db) {
    this.writer = writer;
    this.reader = reader;
  }

  /** A read on committed state: driver faults and use after close reject with store_unavailable. */
  read<T>(fn: () => T): Promise<T> {
    try {
      if (this.closed) throw new StoreUnavailableError('store: closed');
      return Promise.resolve(guard(fn));
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
  }

  /** A write lane turn: refused after close. */
  write<T>(fn: () => T): Promise<T> {
    return this.mutex.run(() => {
      if (this.closed) throw new StoreUnavailableError('store: closed');
      return Promise.resolve(guard(fn));
    });
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
