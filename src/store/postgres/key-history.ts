/**
 * The witness key history in PostgreSQL (SPEC §1.2): as the SQLite driver (key-history.ts there).
 * Writes run on the sequencer's connection inside its transaction, so replicas serialize them with
 * log appends; every replica re-reads the committed history before signing a checkpoint.
 */
import type { PoolClient } from 'pg';
import type { KeyHistoryTx, KeyRotationRecord, WitnessKeyRecord, WitnessKeyState } from '../types.ts';
import { query, type PgReader } from './db.ts';

type Row = { key: string; state: string; since: string | number };

export const KEY_HISTORY_SQL = {
  select: 'SELECT key, state, since FROM witness_keys ORDER BY seq',
  upsert: `INSERT INTO witness_keys (key, state, since, seq)
    VALUES ($1, $2, $3, (SELECT coalesce(max(seq), -1) + 1 FROM witness_keys))
    ON CONFLICT (key) DO UPDATE SET state = excluded.state, since = excluded.since`,
  entries: 'SELECT log_index, entry FROM key_rotations ORDER BY log_index',
  addEntry: 'INSERT INTO key_rotations (log_index, entry) VALUES ($1, $2)',
};

export const toKeyRecord = (r: Row): WitnessKeyRecord => ({ key: r.key, state: r.state as WitnessKeyState, since: Number(r.since) });

/** Committed history, oldest first. */
export async function pgKeyHistory(db: PgReader): Promise<WitnessKeyRecord[]> {
  return (await db.read<Row>('keysRead', KEY_HISTORY_SQL.select, [])).rows.map(toKeyRecord);
}

/** Logged rotation entries, oldest first. */
export async function pgKeyRotations(db: PgReader): Promise<KeyRotationRecord[]> {
  const res = await db.read<{ log_index: string | number; entry: string }>('keysEntries', KEY_HISTORY_SQL.entries, []);
  return res.rows.map((r) => ({ logIndex: Number(r.log_index), entry: r.entry }));
}

export class PgKeyHistoryTx implements KeyHistoryTx {
  private readonly client: PoolClient;

  constructor(client: PoolClient) {
    this.client = client;
  }

  async history(): Promise<WitnessKeyRecord[]> {
    return (await query<Row>(this.client, 'keysReadTx', KEY_HISTORY_SQL.select, [])).rows.map(toKeyRecord);
  }

  async setKey(r: WitnessKeyRecord): Promise<void> {
    await query(this.client, 'keysSet', KEY_HISTORY_SQL.upsert, [r.key, r.state, r.since]);
  }

  async addRotationEntry(r: KeyRotationRecord): Promise<void> {
    await query(this.client, 'keysAddEntry', KEY_HISTORY_SQL.addEntry, [r.logIndex, r.entry]);
  }
}
