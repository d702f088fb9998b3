/**
 * The cosign role's state in SQLite (SPEC §5): per-origin state (`origins`, compare-and-swap on
 * the stored size, group-committed) and evidence (`evidence`, deduplicated by hash, bounded per
 * origin). Each call is its own durable transaction on the shared write lane.
 *
 * Durable origin states are also kept in memory (a bounded map, most recently used last): this
 * process is the store's only writer (the lock file), so a state learnt from a read or from a
 * committed update, once durable, stays true until this class writes the origin's row again. A
 * cached `getOrigin` costs no statement and does not wait for other commits' fdatasync (issue 28:
 * an add-checkpoint read the state twice, each read waiting for any unsynced commit of either
 * role). Only durable state enters the map, so a reply never shows what a power cut could take back.
 */
import type { Database as Db, Statement } from 'better-sqlite3';
import { StoreUnavailableError } from '../errors.ts';
import { decodeKeySet, encodeKeySet, originFromRow, toBytes, type OriginRow } from '../rows.ts';
import {
  EVIDENCE_LIMIT,
  type CosignStateStorage,
  type EvidenceRecord,
  type ForgottenOrigin,
  type ImportedLog,
  type OriginState,
  type StoredOriginKeys,
} from '../types.ts';
import { guard, type SqliteConnections } from './db.ts';

class CosignQueries {
  readonly getOriginSize: Statement<[string], { size: number }>;
  readonly getOrigin: Statement<[string], OriginRow>;
  readonly putOrigin: Statement<[string, number, Uint8Array, string, string, number, string | null, Uint8Array | null]>;
  readonly originKeys: Statement<[string], { log_keys: string | null; checkpoint: string }>;
  readonly setOriginKeys: Statement<[string, string]>;
  readonly deleteOrigin: Statement<[string], { size: number; checkpoint: string }>;
  readonly deleteEvidence: Statement<[string]>;
  readonly deleteImport: Statement<[string]>;
  readonly hasEvidence: Statement<[string, Uint8Array], { id: number }>;
  readonly putEvidence: Statement<[string, Uint8Array, string, string, number]>;
  readonly evictEvidence: Statement<[string, string, number]>;
  readonly listEvidence: Statement<[string], { hash: Uint8Array | null; note: string; reason: string; at: number }>;
  readonly putImport: Statement<[string, string, number, string, number]>;
  readonly putEmptyOrigin: Statement<[string, Uint8Array, string]>;
  readonly setImportQpd: Statement<[number, string]>;
  readonly listImports: Statement<[], { origin: string; vkeys: string; qpd: number; source: string; imported_at: number }>;
  readonly cosignedSizes: Statement<[], { origin: string; size: number }>;

  constructor(db: Db) {
    this.getOriginSize = db.prepare('SELECT size FROM origins WHERE origin = ?');
    this.getOrigin = db.prepare(
      'SELECT size, root, checkpoint, cosignatures, last_time, log_keys, cosigner_set FROM origins WHERE origin = ?',
    );
    this.putOrigin = db.prepare(
      `INSERT INTO origins (origin, size, root, checkpoint, cosignatures, last_time, log_keys, cosigner_set) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (origin) DO UPDATE SET size = excluded.size, root = excluded.root, checkpoint = excluded.checkpoint,
         cosignatures = excluded.cosignatures, last_time = excluded.last_time, log_keys = excluded.log_keys,
         cosigner_set = excluded.cosigner_set`,
    );
    this.originKeys = db.prepare('SELECT log_keys, checkpoint FROM origins WHERE origin = ?');
    this.setOriginKeys = db.prepare('UPDATE origins SET log_keys = ? WHERE origin = ?');
    this.deleteOrigin = db.prepare('DELETE FROM origins WHERE origin = ? RETURNING size, checkpoint');
    this.deleteEvidence = db.prepare('DELETE FROM evidence WHERE origin = ?');
    this.deleteImport = db.prepare('DELETE FROM imported_logs WHERE origin = ?');
    this.hasEvidence = db.prepare('SELECT id FROM evidence WHERE origin = ? AND hash = ?');
    this.putEvidence = db.prepare('INSERT INTO evidence (origin, hash, note, reason, at) VALUES (?, ?, ?, ?, ?)');
    // Everything older than the newest `limit` rows of the origin (OFFSET limit: the first row to go).
    this.evictEvidence = db.prepare(
      'DELETE FROM evidence WHERE origin = ? AND id <= (SELECT id FROM evidence WHERE origin = ? ORDER BY id DESC LIMIT 1 OFFSET ?)',
    );
    this.listEvidence = db.prepare('SELECT hash, note, reason, at FROM evidence WHERE origin = ? ORDER BY id');
    this.putImport = db.prepare(
      'INSERT INTO imported_logs (origin, vkeys, qpd, source, imported_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (origin) DO NOTHING',
    );
    this.putEmptyOrigin = db.prepare(
      `INSERT INTO origins (origin, size, root, checkpoint, cosignatures, last_time, log_keys) VALUES (?, 0, ?, '', '', 0, ?)
       ON CONFLICT (origin) DO NOTHING`,
    );
    this.setImportQpd = db.prepare('UPDATE imported_logs SET qpd = ? WHERE origin = ?');
    this.listImports = db.prepare('SELECT origin, vkeys, qpd, source, imported_at FROM imported_logs ORDER BY id');
    this.cosignedSizes = db.prepare("SELECT origin, size FROM origins WHERE checkpoint <> ''");
  }
}

/** Origin states kept in memory (about 0.5 KiB each with Ed25519 lines, 4 KiB with an ML-DSA-44 line). */
export const ORIGIN_CACHE_SIZE = 4096;

interface QueuedUpdate {
  expectedSize: number;
  next: OriginState;
  resolve: (ok: boolean) => void;
  reject: (e: unknown) => void;
}

export class SqliteCosignState implements CosignStateStorage {
  private readonly c: SqliteConnections;
  private readonly r: CosignQueries;
  private readonly w: CosignQueries;
  private readonly queue: QueuedUpdate[] = [];
  /** Durable states by origin (null: no cosigned state), most recently used last. */
  private readonly cache = new Map<string, OriginState | null>();
  /** Commits that may change origin rows, counted; and the count at each origin's latest one. */
  private writes = 0;
  private readonly touched = new Map<string, number>();

  constructor(c: SqliteConnections) {
    this.c = c;
    this.r = new CosignQueries(c.reader);
    this.w = new CosignQueries(c.writer);
  }

  getOrigin(origin: string): Promise<OriginState | undefined> {
    const hit = this.cache.get(origin);
    if (hit !== undefined && !this.c.closed) {
      try {
        this.c.sync.check();
      } catch (e) {
        return Promise.reject(e instanceof Error ? e : new Error(String(e)));
      }
      this.remember(origin, hit);
      return Promise.resolve(hit ?? undefined);
    }
    const seen = this.writes;
    return this.c
      .read(() => originFromRow(origin, this.r.getOrigin.get(origin)))
      .then((state) => {
        // Released once durable; still the row's state unless a commit touched the origin meanwhile.
        if (this.unchangedSince(origin, seen)) this.remember(origin, state ?? null);
        return state;
      });
  }

  private unchangedSince(origin: string, seen: number): boolean {
    return (this.touched.get(origin) ?? 0) <= seen;
  }

  private remember(origin: string, state: OriginState | null): void {
    this.cache.delete(origin);
    this.cache.set(origin, state);
    if (this.cache.size > ORIGIN_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
  }

  /** A commit is about to change these origins' rows (in the same turn); its count. */
  private forget(origins: readonly string[]): number {
    const n = ++this.writes;
    for (const o of origins) {
      this.touched.set(o, n);
      this.cache.delete(o);
    }
    return n;
  }

  /**
   * Compare-and-swap of an origin's state, group-committed: calls that arrive while a commit is
   * running share the next transaction (one fsync), each checked in call order against the state
   * the earlier ones left, each with its own result once the commit is durable.
   */
  updateOrigin(expectedSize: number, next: OriginState): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ expectedSize, next, resolve, reject });
      // setImmediate: let the I/O callbacks of this turn queue their updates into the same commit.
      if (this.queue.length === 1) setImmediate(() => void this.c.mutex.run(() => this.flush()));
    });
  }

  private flush(): Promise<void> {
    const batch = this.queue.splice(0);
    try {
      if (this.c.closed) throw new StoreUnavailableError('store: closed');
      this.c.sync.check();
      const n = this.forget(batch.map((b) => b.next.origin));
      const results = guard(() =>
        this.c.writer
          .transaction(() =>
            batch.map(({ expectedSize, next }) => {
              const row = this.w.getOriginSize.get(next.origin);
              if ((row?.size ?? 0) !== expectedSize) return false;
              this.w.putOrigin.run(
                next.origin,
                next.size,
                next.root,
                next.checkpoint,
                next.cosignatures,
                next.lastTime,
                encodeKeySet(next.logKeys),
                next.cosignerSet ?? null,
              );
              return true;
            }),
          )
          .immediate(),
      );
      // The lane is free again; each caller hears its result once the commit is durable.
      void this.c.sync.durable(this.c.sync.committed()).then(
        () => {
          batch.forEach((b, i) => {
            // Learnt before the caller hears it: the origin's next read under its lock sees it.
            if (results[i] === true && this.touched.get(b.next.origin) === n) this.remember(b.next.origin, b.next);
            b.resolve(results[i]!);
          });
        },
        (e: unknown) => {
          for (const b of batch) b.reject(e);
        },
      );
    } catch (e) {
      for (const b of batch) b.reject(e);
    }
    return Promise.resolve();
  }

  /** A known hash costs one read and no write; a new row, its eviction and the commit are one transaction. */
  recordEvidence(
    e: Omit<EvidenceRecord, 'hash'> & { hash: Uint8Array },
    limit = EVIDENCE_LIMIT,
  ): Promise<{ added: boolean; evicted: number }> {
    if (!Number.isSafeInteger(limit) || limit < 1)
      return Promise.reject(new RangeError(`evidence limit ${limit}: a positive integer is required`));
    return this.c.write(() => {
      if (this.w.hasEvidence.get(e.origin, e.hash) !== undefined) return { added: false, evicted: 0 };
      return this.c.writer
        .transaction(() => {
          this.w.putEvidence.run(e.origin, e.hash, e.note, e.reason, e.at);
          return { added: true, evicted: this.w.evictEvidence.run(e.origin, e.origin, limit).changes };
        })
        .immediate();
    });
  }

  listEvidence(origin: string): Promise<EvidenceRecord[]> {
    return this.c.read(() =>
      this.r.listEvidence.all(origin).map((row) => ({
        origin,
        hash: row.hash === null ? undefined : toBytes(row.hash),
        note: row.note,
        reason: row.reason,
        at: row.at,
      })),
    );
  }

  importLogs(logs: readonly ImportedLog[], emptyRoot: Uint8Array): Promise<string[]> {
    if (logs.length === 0) return Promise.resolve([]);
    return this.c.write(() => {
      this.forget(logs.map((l) => l.origin));
      return this.c.writer
        .transaction(() => {
          const added: string[] = [];
          for (const l of logs) {
            if (this.w.putImport.run(l.origin, l.vkeys.join('\n'), l.qpd, l.source, l.importedAt).changes === 0) continue;
            this.w.putEmptyOrigin.run(l.origin, emptyRoot, l.vkeys.join('\n'));
            added.push(l.origin);
          }
          return added;
        })
        .immediate();
    });
  }

  setImportedQpd(changes: readonly { origin: string; qpd: number }[]): Promise<void> {
    if (changes.length === 0) return Promise.resolve();
    return this.c.write(() => {
      this.c.writer
        .transaction(() => {
          for (const c of changes) this.w.setImportQpd.run(c.qpd, c.origin);
        })
        .immediate();
    });
  }

  listImportedLogs(): Promise<ImportedLog[]> {
    return this.c.read(() =>
      this.r.listImports.all().map((r) => ({
        origin: r.origin,
        vkeys: r.vkeys.split('\n'),
        qpd: r.qpd,
        source: r.source,
        importedAt: r.imported_at,
      })),
    );
  }

  cosignedSizes(): Promise<Map<string, number>> {
    return this.c.read(() => new Map(this.r.cosignedSizes.all().map((r) => [r.origin, r.size])));
  }

  originKeys(origins: readonly string[]): Promise<Map<string, StoredOriginKeys>> {
    return this.c.read(() => {
      const out = new Map<string, StoredOriginKeys>();
      for (const o of origins) {
        const row = this.r.originKeys.get(o);
        if (row !== undefined) out.set(o, { keys: decodeKeySet(row.log_keys), cosigned: row.checkpoint !== '' });
      }
      return out;
    });
  }

  setOriginKeys(origin: string, keys: readonly string[]): Promise<boolean> {
    return this.c.write(() => {
      this.forget([origin]);
      return this.w.setOriginKeys.run(keys.join('\n'), origin).changes === 1;
    });
  }

  forgetOrigin(origin: string): Promise<ForgottenOrigin> {
    return this.c.write(() => {
      this.forget([origin]);
      return this.c.writer
        .transaction((): ForgottenOrigin => {
          const row = this.w.deleteOrigin.get(origin);
          return {
            state: row !== undefined,
            cosignedSize: row === undefined || row.checkpoint === '' ? undefined : row.size,
            evidence: this.w.deleteEvidence.run(origin).changes,
            imported: this.w.deleteImport.run(origin).changes === 1,
          };
        })
        .immediate();
    });
  }
}
