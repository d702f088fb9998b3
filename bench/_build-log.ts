/**
 * A bench fixture builder: grows the witness's own log in a SQLite store file straight to a given
 * size, leaving exactly the rows TransparencyLog would leave after appending the same entries —
 * `log_entries`, every complete-subtree hash in `tree_nodes` (inserted in the same creation order),
 * `meta` tree_size and the checkpoint signed by the log's signer over the new head — but in large
 * transactions with multi-row inserts, and with the fixture-only settings below. The hashes come
 * from the project's own Frontier (src/tlog/frontier.ts): there is no second hashing code here.
 *
 * FIXTURE ONLY: while building, the file has `journal_mode = OFF` and `synchronous = OFF` (no
 * rollback journal, no fsync: a crash mid-build leaves a corrupt file, which is fine for a bench
 * fixture and never fine for a witness). At the end the file is put back in WAL mode and fsynced;
 * the witness then opens it with its own settings (src/store/sqlite/db.ts). Not for src/: a
 * witness only ever appends through TransparencyLog.
 *
 * test/bench/build-log.test.ts checks the result against TransparencyLog row for row.
 */
import Database from 'better-sqlite3';
import type { Database as Db, Statement } from 'better-sqlite3';
import { closeSync, fsyncSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type { LogSigner } from '../src/log/signer.ts';
import { migrate } from '../src/store/sqlite/schema.ts';
import type { SignedCheckpoint, StoredNode } from '../src/store/types.ts';
import { Frontier, frontierRefs } from '../src/tlog/frontier.ts';

export interface BuildLogOptions {
  /** The store file (the witness's `<data-dir>/witness.db`); created with the store's schema if absent. */
  path: string;
  /** The log's signer: origin `<name>/anchors`, the witness key (as the witness builds it). */
  signer: LogSigner;
  /** Grow the log to this many entries (nothing is appended if it already has as many). */
  target: number;
  /** The entry at log index `index`. */
  entry: (index: number) => Uint8Array;
  /** Entries per transaction (default 100 000; memory grows with it: about 1 KiB per entry). */
  chunk?: number;
  /** Called after each committed chunk with the log size (and the size the build started from). */
  progress?: (size: number, from: number) => void;
}

export interface BuildLogResult {
  /** The log size before and after. */
  from: number;
  size: number;
  /** The checkpoint stored at the end (undefined when nothing was appended). */
  checkpoint: SignedCheckpoint | undefined;
}

/** Rows per multi-row INSERT (3 parameters a row stays far below SQLite's 32 766). */
const ROWS = 256;

class Writer {
  private readonly entries: Statement;
  private readonly entriesOne: Statement;
  private readonly nodes: Statement;
  private readonly nodesOne: Statement;
  readonly setMeta: Statement<[string, string]>;
  readonly getMeta: Statement<[string], { value: string }>;
  readonly getNode: Statement<[number, number], { hash: Uint8Array }>;

  constructor(db: Db) {
    const tuples = (t: string) => Array.from({ length: ROWS }, () => t).join(', ');
    this.entries = db.prepare(`INSERT INTO log_entries (idx, entry) VALUES ${tuples('(?, ?)')}`);
    this.entriesOne = db.prepare('INSERT INTO log_entries (idx, entry) VALUES (?, ?)');
    this.nodes = db.prepare(`INSERT INTO tree_nodes (level, idx, hash) VALUES ${tuples('(?, ?, ?)')}`);
    this.nodesOne = db.prepare('INSERT INTO tree_nodes (level, idx, hash) VALUES (?, ?, ?)');
    // The same statements as src/store/sqlite/log.ts.
    this.setMeta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
    this.getMeta = db.prepare('SELECT value FROM meta WHERE key = ?');
    this.getNode = db.prepare('SELECT hash FROM tree_nodes WHERE level = ? AND idx = ?');
  }

  /** Entries [start, start + entries.length). */
  putEntries(start: number, entries: readonly Uint8Array[]): void {
    const params: unknown[] = [];
    let i = 0;
    for (; i + ROWS <= entries.length; i += ROWS) {
      params.length = 0;
      for (let j = i; j < i + ROWS; j++) params.push(start + j, entries[j]);
      this.entries.run(params);
    }
    for (; i < entries.length; i++) this.entriesOne.run(start + i, entries[i]);
  }

  /** Nodes in the order given (TransparencyLog's creation order). */
  putNodes(nodes: readonly StoredNode[]): void {
    const params: unknown[] = [];
    let i = 0;
    for (; i + ROWS <= nodes.length; i += ROWS) {
      params.length = 0;
      for (let j = i; j < i + ROWS; j++) {
        const n = nodes[j]!;
        params.push(n.level, n.index, n.hash);
      }
      this.nodes.run(params);
    }
    for (; i < nodes.length; i++) this.nodesOne.run(nodes[i]!.level, nodes[i]!.index, nodes[i]!.hash);
  }
}

/**
 * Grow the log in `path` to `target` entries. The file must not be open elsewhere (a running
 * witness holds it: the exclusive lock taken here makes the build fail rather than race it).
 */
export function buildLog(opts: BuildLogOptions): BuildLogResult {
  const chunk = opts.chunk ?? 100_000;
  mkdirSync(dirname(opts.path), { recursive: true });
  const db = new Database(opts.path, { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.defaultSafeIntegers(false);
    // A store from the witness is in WAL mode with its WAL checkpointed at close; leaving WAL
    // checkpoints anything left over first.
    db.pragma('journal_mode = OFF'); // fixture only (see the top of this file)
    db.pragma('synchronous = OFF'); // fixture only
    db.pragma('cache_size = -262144'); // 256 MiB of page cache for the build
    migrate(db, opts.path);
    const w = new Writer(db);

    const from = Number(w.getMeta.get('tree_size')?.value ?? 0);
    const edge = frontierRefs(from).map(({ level, index }) => {
      const row = w.getNode.get(level, index);
      if (row === undefined) throw new Error(`build-log: ${opts.path} lacks tree node ${level}/${index} on the right edge of size ${from}`);
      return { level, index, hash: new Uint8Array(row.hash) };
    });

    let size = from;
    let frontier = new Frontier(size, edge);
    const appendChunk = db.transaction((n: number) => {
      frontier = new Frontier(size, frontier.nodes());
      for (let i = 0; i < n; i++) frontier.append(opts.entry(size + i));
      w.putEntries(size, frontier.newEntries);
      w.putNodes(frontier.newNodes);
      w.setMeta.run('tree_size', String(size + n));
    });
    while (size < opts.target) {
      const n = Math.min(chunk, opts.target - size);
      appendChunk(n);
      size += n;
      opts.progress?.(size, from);
    }

    let checkpoint: SignedCheckpoint | undefined;
    if (size > from) {
      // What SqliteLogTx.setCheckpoint stores, over the head TransparencyLog would have signed.
      checkpoint = opts.signer.sign({ size, root: frontier.root() });
      const c = checkpoint;
      db.transaction(() => {
        w.setMeta.run('checkpoint', c.note);
        w.setMeta.run('checkpoint_size', String(c.size));
        w.setMeta.run('checkpoint_root', Buffer.from(c.root).toString('hex'));
      })();
    }
    // Back to the store's own journal mode before anyone else opens the file.
    db.pragma('journal_mode = WAL');
    db.close();
    const fd = openSync(opts.path, 'r+');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return { from, size, checkpoint };
  } catch (e) {
    if (db.open) db.close();
    throw e;
  }
}
