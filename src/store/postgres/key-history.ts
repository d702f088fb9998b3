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
  cosignature: 'SELECT signature FROM witness_cosignatures WHERE leaf_index = $1 AND key = $2',
  // The first stored value wins: a concurrent writer's row is read back by the same statement.
  putCosignature: `WITH ins AS (INSERT INTO witness_cosignatures (leaf_index, key, signature) VALUES ($1, $2, $3)
                     ON CONFLICT (leaf_index, key) DO NOTHING RETURNING signature)
                   SELECT signature FROM ins UNION ALL
                   SELECT signature FROM witness_cosignatures WHERE leaf_index = $1 AND key = $2`,
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

/** A stored rotation key's cosignature (WitnessStore.witnessCosignature). */
export async function pgWitnessCosignature(db: PgReader, leafIndex: number, key: string): Promise<Uint8Array | undefined> {
  const row = (await db.read<{ signature: Buffer }>('keysCosignature', KEY_HISTORY_SQL.cosignature, [leafIndex, key])).rows[0];
  return row === undefined ? undefined : new Uint8Array(row.signature);
}

/** Store one at first need (autocommit: durable when it returns); the first stored value is returned. */
export async function pgPutWitnessCosignature(db: PgReader, leafIndex: number, key: string, signature: Uint8Array): Promise<Uint8Array> {
  const rows = await db.transaction(
    async (c) =>
      (await query<{ signature: Buffer }>(c, 'keysPutCosignature', KEY_HISTORY_SQL.putCosignature, [leafIndex, key, signature])).rows,
  );
  // No row: another writer's insert raced ours and is not visible to this snapshot (the same bytes).
  return rows[0] === undefined ? signature : new Uint8Array(rows[0].signature);
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
