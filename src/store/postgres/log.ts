/**
 * The log's bytes in PostgreSQL: entries (`log_entries`), complete-subtree hashes (`tree_nodes`),
 * the log size and the signed checkpoint (`log_head`). Hashes arrive computed (src/log); nothing
 * here hashes or signs. Inside a write transaction the writes are buffered and flushed with the
 * anchor state in one statement (transaction.ts).
 */
import type { PoolClient } from 'pg';
import { nodeKey } from '../../tlog/frontier.ts';
import { StoreInvariantError } from '../errors.ts';
import { toBytes } from '../rows.ts';
import type { LogStorage, LogStorageTx, NodeRef, SignedCheckpoint, StoredNode } from '../types.ts';
import { query, type PgReader } from './db.ts';

export const LOG_SQL = {
  checkpoint: 'SELECT checkpoint, checkpoint_size, checkpoint_root FROM log_head',
  nodes:
    'SELECT t.level, t.idx, t.hash FROM tree_nodes t JOIN unnest($1::smallint[], $2::bigint[]) AS w(level, idx) ON t.level = w.level AND t.idx = w.idx',
  nodeRange: 'SELECT hash FROM tree_nodes WHERE level = $1 AND idx >= $2 AND idx < $3 ORDER BY idx',
  entryRange: 'SELECT entry FROM log_entries WHERE idx >= $1 AND idx < $2 ORDER BY idx',
};

function nodeRows(rows: { level: number; idx: number | string; hash: unknown }[]): StoredNode[] {
  return rows.map((r) => ({ level: r.level, index: Number(r.idx), hash: toBytes(r.hash) }));
}

export class PgLog implements LogStorage {
  private readonly db: PgReader;

  constructor(db: PgReader) {
    this.db = db;
  }

  async checkpoint(): Promise<SignedCheckpoint | undefined> {
    type Row = { checkpoint: string | null; checkpoint_size: number | null; checkpoint_root: Uint8Array | null };
    const row = (await this.db.read<Row>('checkpoint', LOG_SQL.checkpoint, [])).rows[0];
    if (row === undefined || row.checkpoint === null || row.checkpoint_size === null || row.checkpoint_root === null) return undefined;
    return { note: row.checkpoint, size: row.checkpoint_size, root: toBytes(row.checkpoint_root) };
  }

  async readNodes(refs: readonly NodeRef[]): Promise<StoredNode[]> {
    if (refs.length === 0) return [];
    const res = await this.db.read<{ level: number; idx: number; hash: Uint8Array }>('nodes', LOG_SQL.nodes, [
      refs.map((n) => n.level),
      refs.map((n) => n.index),
    ]);
    return nodeRows(res.rows);
  }

  async readNodeRange(level: number, start: number, count: number): Promise<Uint8Array[]> {
    const rows = (await this.db.read<{ hash: Uint8Array }>('nodeRange', LOG_SQL.nodeRange, [level, start, start + count])).rows;
    return rows.map((r) => toBytes(r.hash));
  }

  async readEntries(start: number, count: number): Promise<Uint8Array[]> {
    const rows = (await this.db.read<{ entry: Uint8Array }>('entryRange', LOG_SQL.entryRange, [start, start + count])).rows;
    return rows.map((r) => toBytes(r.entry));
  }
}

/**
 * The log side of a write transaction: the size and right edge were read with the sequencer lock
 * (transaction.ts), so reading the frontier needs no further round trip.
 */
export class PgLogTx implements LogStorageTx {
  private readonly client: PoolClient;
  readonly baseSize: number;
  /** Nodes read with the lock (the right edge of `baseSize`), by nodeKey. */
  private readonly edge = new Map<number, Uint8Array>();
  readonly entries: Uint8Array[] = [];
  readonly nodes: StoredNode[] = [];
  checkpoint: SignedCheckpoint | undefined;

  constructor(client: PoolClient, baseSize: number, edge: StoredNode[]) {
    this.client = client;
    this.baseSize = baseSize;
    for (const n of edge) this.edge.set(nodeKey(n.level, n.index), n.hash);
  }

  static parseEdge(rows: { level: number; idx: number | string; hash: unknown }[]): StoredNode[] {
    return nodeRows(rows);
  }

  get currentSize(): number {
    return this.baseSize + this.entries.length;
  }

  size(): Promise<number> {
    return Promise.resolve(this.currentSize);
  }

  async readNodes(refs: readonly NodeRef[]): Promise<StoredNode[]> {
    const out: StoredNode[] = [];
    const absent: NodeRef[] = [];
    for (const r of refs) {
      const h = this.edge.get(nodeKey(r.level, r.index)) ?? this.nodes.find((n) => n.level === r.level && n.index === r.index)?.hash;
      if (h === undefined) absent.push(r);
      else out.push({ level: r.level, index: r.index, hash: h });
    }
    if (absent.length > 0) {
      const res = await query<{ level: number; idx: number; hash: Uint8Array }>(this.client, 'nodes', LOG_SQL.nodes, [
        absent.map((n) => n.level),
        absent.map((n) => n.index),
      ]);
      out.push(...nodeRows(res.rows));
    }
    return out;
  }

  appendLeaves(start: number, entries: readonly Uint8Array[], nodes: readonly StoredNode[]): Promise<void> {
    if (start !== this.currentSize)
      return Promise.reject(new StoreInvariantError(`store: append at ${start} to a log of size ${this.currentSize}`));
    for (const e of entries) this.entries.push(e);
    for (const n of nodes) this.nodes.push(n);
    return Promise.resolve();
  }

  setCheckpoint(checkpoint: SignedCheckpoint): Promise<void> {
    if (checkpoint.size > this.currentSize) return Promise.reject(new StoreInvariantError('store: checkpoint beyond the tree size'));
    this.checkpoint = checkpoint;
    return Promise.resolve();
  }

  get dirty(): boolean {
    return this.entries.length > 0 || this.checkpoint !== undefined;
  }
}
