/**
 * The log's bytes in SQLite: entries (`log_entries`), complete-subtree hashes (`tree_nodes`), the
 * log size and the signed checkpoint (`meta`). Hashes arrive computed (src/log); nothing here
 * hashes or signs.
 */
import type { Database as Db, Statement } from 'better-sqlite3';
import { StoreInvariantError } from '../errors.ts';
import { toBytes } from '../rows.ts';
import type { LogStorage, LogStorageTx, NodeRef, SignedCheckpoint, StoredNode } from '../types.ts';
import { guard, type SqliteConnections } from './db.ts';

class LogQueries {
  readonly getMeta: Statement<[string], { value: string }>;
  readonly setMeta: Statement<[string, string]>;
  readonly getNode: Statement<[number, number], { hash: Uint8Array }>;
  readonly putNode: Statement<[number, number, Uint8Array]>;
  readonly nodeRange: Statement<[number, number, number], { hash: Uint8Array }>;
  readonly putEntry: Statement<[number, Uint8Array]>;
  readonly entryRange: Statement<[number, number], { entry: Uint8Array }>;

  constructor(db: Db) {
    this.getMeta = db.prepare('SELECT value FROM meta WHERE key = ?');
    this.setMeta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
    this.getNode = db.prepare('SELECT hash FROM tree_nodes WHERE level = ? AND idx = ?');
    this.putNode = db.prepare('INSERT INTO tree_nodes (level, idx, hash) VALUES (?, ?, ?)');
    this.nodeRange = db.prepare('SELECT hash FROM tree_nodes WHERE level = ? AND idx >= ? AND idx < ? ORDER BY idx');
    this.putEntry = db.prepare('INSERT INTO log_entries (idx, entry) VALUES (?, ?)');
    this.entryRange = db.prepare('SELECT entry FROM log_entries WHERE idx >= ? AND idx < ? ORDER BY idx');
  }

  size(): number {
    const v = this.getMeta.get('tree_size');
    return v === undefined ? 0 : Number(v.value);
  }

  nodes(refs: readonly NodeRef[]): StoredNode[] {
    const out: StoredNode[] = [];
    for (const { level, index } of refs) {
      const row = this.getNode.get(level, index);
      if (row !== undefined) out.push({ level, index, hash: toBytes(row.hash) });
    }
    return out;
  }
}

/** Committed log state, on the reader connection. */
export class SqliteLog implements LogStorage {
  private readonly c: SqliteConnections;
  private readonly r: LogQueries;
  /** Writer-side statements, handed to each transaction. */
  readonly w: LogQueries;

  constructor(c: SqliteConnections) {
    this.c = c;
    this.r = new LogQueries(c.reader);
    this.w = new LogQueries(c.writer);
  }

  checkpoint(): Promise<SignedCheckpoint | undefined> {
    return this.c.read(() => {
      const note = this.r.getMeta.get('checkpoint')?.value;
      const size = this.r.getMeta.get('checkpoint_size')?.value;
      const root = this.r.getMeta.get('checkpoint_root')?.value;
      if (note === undefined || size === undefined || root === undefined) return undefined;
      return { note, size: Number(size), root: new Uint8Array(Buffer.from(root, 'hex')) };
    });
  }

  readNodes(refs: readonly NodeRef[]): Promise<StoredNode[]> {
    return this.c.read(() => this.r.nodes(refs));
  }

  readNodeRange(level: number, start: number, count: number): Promise<Uint8Array[]> {
    return this.c.read(() => this.r.nodeRange.all(level, start, start + count).map((r) => toBytes(r.hash)));
  }

  readEntries(start: number, count: number): Promise<Uint8Array[]> {
    return this.c.read(() => this.r.entryRange.all(start, start + count).map((r) => toBytes(r.entry)));
  }

  /** The log side of a write transaction (inside BEGIN IMMEDIATE on the writer). */
  transaction(): SqliteLogTx {
    return new SqliteLogTx(this.w);
  }
}

export class SqliteLogTx implements LogStorageTx {
  private readonly q: LogQueries;
  /** The log size as of the last read or append of this transaction. */
  private known: number | undefined;
  /** The size when the transaction first looked (for the party-event pruning schedule). */
  baseSize: number | undefined;

  constructor(q: LogQueries) {
    this.q = q;
  }

  private current(): number {
    if (this.known === undefined) {
      this.known = this.q.size();
      this.baseSize = this.known;
    }
    return this.known;
  }

  size(): Promise<number> {
    return Promise.resolve(guard(() => this.current()));
  }

  readNodes(refs: readonly NodeRef[]): Promise<StoredNode[]> {
    return Promise.resolve(guard(() => this.q.nodes(refs)));
  }

  appendLeaves(start: number, entries: readonly Uint8Array[], nodes: readonly StoredNode[]): Promise<void> {
    // A throw in the executor rejects: failures are never synchronous.
    return new Promise((resolve) => {
      guard(() => {
        const size = this.current();
        if (start !== size) throw new StoreInvariantError(`store: append at ${start} to a log of size ${size}`);
        for (let i = 0; i < entries.length; i++) this.q.putEntry.run(start + i, entries[i]!);
        for (const n of nodes) this.q.putNode.run(n.level, n.index, n.hash);
        this.known = start + entries.length;
        this.q.setMeta.run('tree_size', String(this.known));
      });
      resolve();
    });
  }

  setCheckpoint(c: SignedCheckpoint): Promise<void> {
    return new Promise((resolve) => {
      guard(() => {
        if (c.size > this.current()) throw new StoreInvariantError('store: checkpoint beyond the tree size');
        this.q.setMeta.run('checkpoint', c.note);
        this.q.setMeta.run('checkpoint_size', String(c.size));
        this.q.setMeta.run('checkpoint_root', Buffer.from(c.root).toString('hex'));
      });
      resolve();
    });
  }
}
