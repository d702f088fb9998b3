/**
 * SQLite driver of the witness store (better-sqlite3, WAL, synchronous=FULL).
 *
 * Two connections: a writer used only inside `transaction` (BEGIN IMMEDIATE … COMMIT, serialized
 * by a mutex), and a reader that sees committed state only. A separate lock file held with an
 * exclusive SQLite lock keeps a second process off the store (fcntl locks vanish with the process,
 * so a crash never leaves a stale lock).
 *
 * The Merkle tree is stored as every complete subtree hash, `tree_nodes(level, idx)`: about 2n
 * rows for n leaves, written O(1) amortized per append (O(log n) worst case), so roots, proofs and
 * tiles are O(log n) point reads or one range read. Nothing ever re-reads all leaves.
 */
import Database from 'better-sqlite3';
import type { Database as Db, Statement } from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { hashChildren, hashLeaf } from '../tlog/hash.ts';
import { treeRoot, inclusionProof, consistencyProof } from '../tlog/merkle.ts';
import type { HashReader } from '../tlog/merkle.ts';
import type { DuplicityProof } from '../anchor/types.ts';
import { Mutex } from './mutex.ts';
import { NodeCache, nodeKey } from './node-cache.ts';
import { decodeStoredProof, encodeStoredAnchor, encodeStoredProof, seedFromRow, toBytes, type SeedRow } from './rows.ts';
import { EVIDENCE_LIMIT, StoreOpenError, StoreUnavailableError } from './types.ts';
import type { EvidenceRecord, OriginState, PartyUsage, SeedRecord, SignedCheckpoint, StoreIdentity, StoreTransaction, TreeHead, WitnessStore } from './types.ts';

const SCHEMA_VERSION = 3;

/** Schema version i + 1 is MIGRATIONS[0..i] (exported for the upgrade tests). */
export const MIGRATIONS: string[] = [
  `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
   CREATE TABLE tree_nodes (level INTEGER NOT NULL, idx INTEGER NOT NULL, hash BLOB NOT NULL, PRIMARY KEY (level, idx)) WITHOUT ROWID;
   CREATE TABLE log_entries (idx INTEGER PRIMARY KEY, entry BLOB NOT NULL);
   CREATE TABLE seeds (seed_id BLOB PRIMARY KEY, owner TEXT NOT NULL, created_at INTEGER NOT NULL, anchor TEXT NOT NULL,
                       cosig_signature BLOB NOT NULL, cosig_time INTEGER NOT NULL, leaf_index INTEGER NOT NULL) WITHOUT ROWID;
   CREATE TABLE duplicities (seed_id BLOB PRIMARY KEY, proof TEXT NOT NULL, leaf_index INTEGER NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;
   CREATE TABLE party_events (id INTEGER PRIMARY KEY, party TEXT NOT NULL, at INTEGER NOT NULL, new_seed INTEGER NOT NULL);
   CREATE INDEX party_events_by_party ON party_events (party, at);`,
  `CREATE TABLE origins (origin TEXT PRIMARY KEY, size INTEGER NOT NULL, root BLOB NOT NULL, checkpoint TEXT NOT NULL,
                         cosignatures TEXT NOT NULL, last_time INTEGER NOT NULL) WITHOUT ROWID;
   CREATE TABLE evidence (id INTEGER PRIMARY KEY, origin TEXT NOT NULL, note TEXT NOT NULL, reason TEXT NOT NULL, at INTEGER NOT NULL);`,
  // Evidence deduplicated by checkpoint hash and bounded per origin (SPEC §5). Rows from earlier
  // versions keep a NULL hash: never deduplicated, the oldest, so evicted first.
  `ALTER TABLE evidence ADD COLUMN hash BLOB;
   CREATE UNIQUE INDEX evidence_by_hash ON evidence (origin, hash);
   CREATE INDEX evidence_by_origin ON evidence (origin, id);`,
];

const UNAVAILABLE = /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN|CORRUPT|NOTADB|BUSY|LOCKED|PROTOCOL|NOMEM|PERM)/;

/** Map driver faults to StoreUnavailableError (503 store_unavailable); rethrow the rest. */
function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && UNAVAILABLE.test(code)) throw new StoreUnavailableError(`store: ${code}: ${(e as Error).message}`);
    throw e;
  }
}




class Queries {
  readonly getMeta: Statement<[string], { value: string }>;
  readonly setMeta: Statement<[string, string]>;
  readonly getNode: Statement<[number, number], { hash: Uint8Array }>;
  readonly putNode: Statement<[number, number, Uint8Array]>;
  readonly nodeRange: Statement<[number, number, number], { hash: Uint8Array }>;
  readonly putEntry: Statement<[number, Uint8Array]>;
  readonly entryRange: Statement<[number, number], { entry: Uint8Array }>;
  readonly getSeed: Statement<[Uint8Array], SeedRow>;
  readonly putSeed: Statement<[Uint8Array, string, number, string, Uint8Array, number, number]>;
  readonly getProof: Statement<[Uint8Array], { proof: string }>;
  readonly putProof: Statement<[Uint8Array, string, number, number]>;
  readonly proofsAfter: Statement<[Uint8Array, number], { proof: string }>;
  readonly partyAnchors: Statement<[string, number], { at: number }>;
  readonly partySeeds: Statement<[string, number], { at: number }>;
  readonly putEvent: Statement<[string, number, number]>;
  readonly pruneEvents: Statement<[number]>;
  readonly countSeeds: Statement<[], { n: number }>;
  readonly countProofs: Statement<[], { n: number }>;
  readonly getOriginSize: Statement<[string], { size: number }>;
  readonly getOrigin: Statement<[string], { size: number; root: Uint8Array; checkpoint: string; cosignatures: string; last_time: number }>;
  readonly begin: Statement;
  readonly commit: Statement;
  readonly rollback: Statement;
  readonly putOrigin: Statement<[string, number, Uint8Array, string, string, number]>;
  readonly hasEvidence: Statement<[string, Uint8Array], { id: number }>;
  readonly putEvidence: Statement<[string, Uint8Array, string, string, number]>;
  readonly evictEvidence: Statement<[string, string, number]>;
  readonly listEvidence: Statement<[string], { hash: Uint8Array | null; note: string; reason: string; at: number }>;

  constructor(db: Db) {
    this.getMeta = db.prepare('SELECT value FROM meta WHERE key = ?');
    this.setMeta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
    this.getNode = db.prepare('SELECT hash FROM tree_nodes WHERE level = ? AND idx = ?');
    this.putNode = db.prepare('INSERT INTO tree_nodes (level, idx, hash) VALUES (?, ?, ?)');
    this.nodeRange = db.prepare('SELECT hash FROM tree_nodes WHERE level = ? AND idx >= ? AND idx < ? ORDER BY idx');
    this.putEntry = db.prepare('INSERT INTO log_entries (idx, entry) VALUES (?, ?)');
    this.entryRange = db.prepare('SELECT entry FROM log_entries WHERE idx >= ? AND idx < ? ORDER BY idx');
    this.getSeed = db.prepare(
      'SELECT s.*, d.proof AS proof FROM seeds s LEFT JOIN duplicities d ON d.seed_id = s.seed_id WHERE s.seed_id = ?',
    );
    this.putSeed = db.prepare(
      `INSERT INTO seeds (seed_id, owner, created_at, anchor, cosig_signature, cosig_time, leaf_index) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (seed_id) DO UPDATE SET anchor = excluded.anchor, cosig_signature = excluded.cosig_signature,
         cosig_time = excluded.cosig_time, leaf_index = excluded.leaf_index`,
    );
    this.getProof = db.prepare('SELECT proof FROM duplicities WHERE seed_id = ?');
    this.putProof = db.prepare('INSERT INTO duplicities (seed_id, proof, leaf_index, at) VALUES (?, ?, ?, ?)');
    this.proofsAfter = db.prepare('SELECT proof FROM duplicities WHERE seed_id > ? ORDER BY seed_id LIMIT ?');
    this.partyAnchors = db.prepare('SELECT at FROM party_events WHERE party = ? AND at >= ? ORDER BY at');
    this.partySeeds = db.prepare('SELECT at FROM party_events WHERE party = ? AND at >= ? AND new_seed = 1 ORDER BY at');
    this.putEvent = db.prepare('INSERT INTO party_events (party, at, new_seed) VALUES (?, ?, ?)');
    this.pruneEvents = db.prepare('DELETE FROM party_events WHERE at < ?');
    this.countSeeds = db.prepare('SELECT count(*) AS n FROM seeds');
    this.countProofs = db.prepare('SELECT count(*) AS n FROM duplicities');
    this.getOriginSize = db.prepare('SELECT size FROM origins WHERE origin = ?');
    this.getOrigin = db.prepare('SELECT size, root, checkpoint, cosignatures, last_time FROM origins WHERE origin = ?');
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
    this.putOrigin = db.prepare(
      `INSERT INTO origins (origin, size, root, checkpoint, cosignatures, last_time) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (origin) DO UPDATE SET size = excluded.size, root = excluded.root, checkpoint = excluded.checkpoint,
         cosignatures = excluded.cosignatures, last_time = excluded.last_time`,
    );
    this.hasEvidence = db.prepare('SELECT id FROM evidence WHERE origin = ? AND hash = ?');
    this.putEvidence = db.prepare('INSERT INTO evidence (origin, hash, note, reason, at) VALUES (?, ?, ?, ?, ?)');
    // Everything older than the newest `limit` rows of the origin (OFFSET limit: the first row to go).
    this.evictEvidence = db.prepare('DELETE FROM evidence WHERE origin = ? AND id <= (SELECT id FROM evidence WHERE origin = ? ORDER BY id DESC LIMIT 1 OFFSET ?)');
    this.listEvidence = db.prepare('SELECT hash, note, reason, at FROM evidence WHERE origin = ? ORDER BY id');
  }

  seed(seedId: Uint8Array): SeedRecord | undefined {
    const row = this.getSeed.get(seedId);
    return row === undefined ? undefined : seedFromRow(row);
  }

  size(): number {
    const v = this.getMeta.get('tree_size');
    return v === undefined ? 0 : Number(v.value);
  }

  /**
   * Complete-subtree hashes never change once written, so `cache` (committed nodes only) may
   * answer first; `pending` holds this transaction's own writes. A reader on committed state
   * (`fill`) adds what it reads to the cache.
   */
  reader(cache: NodeCache, pending?: Map<number, Uint8Array>, fill = false): HashReader {
    return (level, index) => {
      const key = nodeKey(level, index);
      const hit = pending?.get(key) ?? cache.get(level, index);
      if (hit !== undefined) return hit;
      const row = this.getNode.get(level, index);
      if (row === undefined) throw new StoreUnavailableError(`store: missing tree node (${level}, ${index})`);
      const h = toBytes(row.hash);
      if (fill) cache.setKey(key, h);
      return h;
    };
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

function startCheckpointer(path: string): { stop: () => Promise<void> } {
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

function openDb(path: string): Db {
  // A short busy timeout: the checkpointer may hold the WAL index briefly.
  const db = new Database(path, { timeout: 2000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('wal_autocheckpoint = 0');
  db.pragma('foreign_keys = ON');
  db.defaultSafeIntegers(false);
  return db;
}

export class SqliteStore implements WitnessStore {
  private readonly writer: Db;
  private readonly reader: Db;
  private readonly lock: Db;
  private readonly w: Queries;
  private readonly r: Queries;
  private readonly mutex = new Mutex();
  private closed = false;
  /** 65 536 nodes ≈ 6 MiB: the right edge of the tree and recent proofs stay in memory. */
  private readonly nodes = new NodeCache(65_536);
  private readonly originQueue: { expectedSize: number; next: OriginState; resolve: (ok: boolean) => void; reject: (e: unknown) => void }[] = [];

  private readonly checkpointer: { stop: () => Promise<void> };

  private constructor(lock: Db, writer: Db, reader: Db, checkpointer: { stop: () => Promise<void> }) {
    this.checkpointer = checkpointer;
    this.lock = lock;
    this.writer = writer;
    this.reader = reader;
    this.w = new Queries(writer);
    this.r = new Queries(reader);
  }

  /** Open (creating parents and schema); refuses a store locked by another process. */
  static open(path: string): SqliteStore {
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
      const version = writer.pragma('user_version', { simple: true }) as number;
      if (version > SCHEMA_VERSION) {
        throw new StoreOpenError('store_schema', `the store ${path} has schema version ${version}; this build knows ${SCHEMA_VERSION}`);
      }
      for (let v = version; v < SCHEMA_VERSION; v++) {
        writer.transaction(() => {
          writer.exec(MIGRATIONS[v]!);
          writer.pragma(`user_version = ${v + 1}`);
        }).immediate();
      }
      // On a read-only file system SQLite silently falls back to a read-only connection, which could
      // never write again, not even once the file system is writable: refuse it with a no-op write.
      writer.pragma(`user_version = ${SCHEMA_VERSION}`);
      const reader = openDb(path);
      return new SqliteStore(lock, writer, reader, startCheckpointer(path));
    } catch (e) {
      lock.close();
      if (e instanceof StoreOpenError) throw e;
      throw new StoreOpenError('store_unopenable', `cannot open the store ${path}: ${(e as Error).message}`);
    }
  }

  async bindIdentity(id: StoreIdentity): Promise<void> {
    await this.transaction(async () => {
      const fields: [keyof StoreIdentity, string][] = [
        ['witnessKey', 'witness_key'],
        ['name', 'name'],
        ['logOrigin', 'log_origin'],
      ];
      for (const [field, key] of fields) {
        const stored = this.w.getMeta.get(key)?.value;
        if (stored === undefined) this.w.setMeta.run(key, id[field]);
        else if (stored !== id[field]) {
          throw new StoreOpenError('store_identity_mismatch', `the store is bound to ${key} ${JSON.stringify(stored)}, not ${JSON.stringify(id[field])}`);
        }
      }
      return Promise.resolve();
    });
  }

  async transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    return this.mutex.run(async () => {
      if (this.closed) throw new StoreUnavailableError('store: closed');
      guard(() => this.w.begin.run());
      let done = false;
      const pending = new Map<number, Uint8Array>();
      try {
        const result = await fn(this.tx(pending));
        guard(() => this.w.commit.run());
        done = true;
        // Committed: the new nodes may now be served from memory.
        for (const [k, v] of pending) this.nodes.setKey(k, v);
        return result;
      } finally {
        if (!done && this.writer.inTransaction) {
          try {
            this.w.rollback.run();
          } catch {
            // A failed rollback leaves SQLite to roll back the journal on next open.
          }
        }
      }
    });
  }

  private tx(pending: Map<number, Uint8Array>): StoreTransaction {
    const q = this.w;
    const putNode = (level: number, index: number, h: Uint8Array): void => {
      q.putNode.run(level, index, h);
      pending.set(nodeKey(level, index), h);
    };
    let appended = 0;
    const base = q.size();
    return {
      getSeed: (seedId) => Promise.resolve(guard(() => q.seed(seedId))),
      partyUsage: (party, anchorsSince, newSeedsSince): Promise<PartyUsage> =>
        Promise.resolve(
          guard(() => ({
            anchorTimes: q.partyAnchors.all(party, anchorsSince).map((r) => r.at),
            newSeedTimes: q.partySeeds.all(party, newSeedsSince).map((r) => r.at),
          })),
        ),
      putSeed: (s, isNew, party) => {
        guard(() => {
          q.putSeed.run(s.seedId, s.owner, s.createdAt, encodeStoredAnchor(s.latest), s.cosignature.signature, s.cosignature.timestamp, s.cosignature.leafIndex);
          q.putEvent.run(party, s.cosignature.timestamp, isNew ? 1 : 0);
        });
        return Promise.resolve();
      },
      putDuplicity: (proof, leafIndex, at) => {
        guard(() => q.putProof.run(proof.seedId, encodeStoredProof(proof), leafIndex, at));
        return Promise.resolve();
      },
      appendEntries: (entries) =>
        Promise.resolve(
          guard(() => {
            const first = base + appended;
            const read = q.reader(this.nodes, pending);
            for (const entry of entries) {
              const i = base + appended;
              q.putEntry.run(i, entry);
              let h = hashLeaf(entry);
              putNode(0, i, h);
              // Each time i completes a subtree (odd index at that level), store its parent.
              let level = 0;
              let j = i;
              while (j % 2 === 1) {
                h = hashChildren(read(level, j - 1), h);
                level++;
                j = (j - 1) / 2;
                putNode(level, j, h);
              }
              appended++;
            }
            q.setMeta.run('tree_size', String(base + appended));
            return first;
          }),
        ),
      treeHead: (): Promise<TreeHead> =>
        Promise.resolve(guard(() => ({ size: base + appended, root: treeRoot(base + appended, q.reader(this.nodes, pending)) }))),
      setCheckpoint: (c) => {
        guard(() => {
          q.setMeta.run('checkpoint', c.note);
          q.setMeta.run('checkpoint_size', String(c.size));
          q.setMeta.run('checkpoint_root', Buffer.from(c.root).toString('hex'));
          // Quota windows look back one day at most; keep the event table bounded.
          if (c.size % 1024 === 0) q.pruneEvents.run(Math.floor(Date.now() / 1000) - 2 * 86400);
        });
        return Promise.resolve();
      },
    };
  }

  /** A read on committed state: driver faults and use after close reject with store_unavailable. */
  private read<T>(fn: () => T): Promise<T> {
    try {
      if (this.closed) throw new StoreUnavailableError('store: closed');
      return Promise.resolve(guard(fn));
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
  }

  getSeed(seedId: Uint8Array): Promise<SeedRecord | undefined> {
    return this.read(() => this.r.seed(seedId));
  }

  getDuplicity(seedId: Uint8Array): Promise<DuplicityProof | undefined> {
    return this.read(() => {
      const row = this.r.getProof.get(seedId);
      return row === undefined ? undefined : decodeStoredProof(row.proof);
    });
  }

  listDuplicities(after: Uint8Array | undefined, limit: number): Promise<DuplicityProof[]> {
    return this.read(() => this.r.proofsAfter.all(after ?? new Uint8Array(0), limit).map((r) => decodeStoredProof(r.proof)));
  }

  counts(): Promise<{ seeds: number; duplicities: number }> {
    return this.read(() => ({ seeds: this.r.countSeeds.get()?.n ?? 0, duplicities: this.r.countProofs.get()?.n ?? 0 }));
  }

  checkpoint(): Promise<SignedCheckpoint | undefined> {
    return this.read(() => {
      const note = this.r.getMeta.get('checkpoint')?.value;
      const size = this.r.getMeta.get('checkpoint_size')?.value;
      const root = this.r.getMeta.get('checkpoint_root')?.value;
      if (note === undefined || size === undefined || root === undefined) return undefined;
      return { note, size: Number(size), root: new Uint8Array(Buffer.from(root, 'hex')) };
    });
  }

  inclusionProof(index: number, size: number): Promise<Uint8Array[]> {
    return this.read(() => inclusionProof(index, size, this.r.reader(this.nodes, undefined, true)));
  }

  consistencyProof(oldSize: number, newSize: number): Promise<Uint8Array[]> {
    return this.read(() => consistencyProof(oldSize, newSize, this.r.reader(this.nodes, undefined, true)));
  }

  tile(level: number, index: number, width: number): Promise<Uint8Array> {
    return this.read(() => {
      const start = index * 256;
      const rows = this.r.nodeRange.all(level * 8, start, start + width);
      if (rows.length !== width) throw new RangeError('tile not available at that width');
      return Buffer.concat(rows.map((r) => toBytes(r.hash)));
    });
  }

  entries(index: number, width: number): Promise<Uint8Array[]> {
    return this.read(() => {
      const start = index * 256;
      const rows = this.r.entryRange.all(start, start + width);
      if (rows.length !== width) throw new RangeError('entry bundle not available at that width');
      return rows.map((r) => toBytes(r.entry));
    });
  }

  getOrigin(origin: string): Promise<OriginState | undefined> {
    return this.read(() => {
      const row = this.r.getOrigin.get(origin);
      if (row === undefined) return undefined;
      return { origin, size: row.size, root: toBytes(row.root), checkpoint: row.checkpoint, cosignatures: row.cosignatures, lastTime: row.last_time };
    });
  }

  /**
   * Compare-and-swap of an origin's state, group-committed: calls that arrive while a commit is
   * running share the next transaction (one fsync), each checked in call order against the state
   * the earlier ones left, each with its own result.
   */
  updateOrigin(expectedSize: number, next: OriginState): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.originQueue.push({ expectedSize, next, resolve, reject });
      // setImmediate: let the I/O callbacks of this turn queue their updates into the same commit.
      if (this.originQueue.length === 1) setImmediate(() => void this.mutex.run(() => this.flushOrigins()));
    });
  }

  private flushOrigins(): Promise<void> {
    const batch = this.originQueue.splice(0);
    try {
      if (this.closed) throw new StoreUnavailableError('store: closed');
      const results = guard(() =>
        this.writer
          .transaction(() =>
            batch.map(({ expectedSize, next }) => {
              const row = this.w.getOriginSize.get(next.origin);
              if ((row?.size ?? 0) !== expectedSize) return false;
              this.w.putOrigin.run(next.origin, next.size, next.root, next.checkpoint, next.cosignatures, next.lastTime);
              return true;
            }),
          )
          .immediate(),
      );
      batch.forEach((b, i) => {
        b.resolve(results[i]!);
      });
    } catch (e) {
      for (const b of batch) b.reject(e);
    }
    return Promise.resolve();
  }

  /** A known hash costs one read and no write; a new row, its eviction and the commit are one transaction. */
  recordEvidence(e: Omit<EvidenceRecord, 'hash'> & { hash: Uint8Array }, limit = EVIDENCE_LIMIT): Promise<{ added: boolean; evicted: number }> {
    if (!Number.isSafeInteger(limit) || limit < 1) return Promise.reject(new RangeError(`evidence limit ${limit}: a positive integer is required`));
    return this.mutex.run(() => {
      if (this.closed) throw new StoreUnavailableError('store: closed');
      const result = guard(() => {
        if (this.w.hasEvidence.get(e.origin, e.hash) !== undefined) return { added: false, evicted: 0 };
        return this.writer
          .transaction(() => {
            this.w.putEvidence.run(e.origin, e.hash, e.note, e.reason, e.at);
            return { added: true, evicted: this.w.evictEvidence.run(e.origin, e.origin, limit).changes };
          })
          .immediate();
      });
      return Promise.resolve(result);
    });
  }

  listEvidence(origin: string): Promise<EvidenceRecord[]> {
    return this.read(() =>
      this.r.listEvidence.all(origin).map((row) => ({ origin, hash: row.hash === null ? undefined : toBytes(row.hash), note: row.note, reason: row.reason, at: row.at })),
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.checkpointer.stop();
    await this.mutex.run(() => {
      this.closed = true;
      try {
        this.writer.pragma('wal_checkpoint(TRUNCATE)');
      } catch {
        // The WAL is replayed at the next open anyway.
      }
      this.reader.close();
      this.writer.close();
      this.lock.close();
      return Promise.resolve();
    });
  }
}
