/**
 * The witness key history in SQLite (SPEC §1.2, table `witness_keys`): one `current`, at most one
 * `next` (a unique partial index), `retired` keys kept forever; `seq` keeps the recording order.
 * Writes happen inside the store's write transaction only (with the rotation entry they log).
 */
import type { Statement } from 'better-sqlite3';
import type { KeyHistoryTx, KeyRotationRecord, WitnessKeyRecord, WitnessKeyState } from '../types.ts';
import { guard, type SqliteConnections } from './db.ts';

type Row = { key: string; state: string; since: number };

const SELECT = 'SELECT key, state, since FROM witness_keys ORDER BY seq';
const UPSERT = `INSERT INTO witness_keys (key, state, since, seq)
  VALUES (?, ?, ?, (SELECT coalesce(max(seq), -1) + 1 FROM witness_keys))
  ON CONFLICT (key) DO UPDATE SET state = excluded.state, since = excluded.since`;

const toRecord = (r: Row): WitnessKeyRecord => ({ key: r.key, state: r.state as WitnessKeyState, since: r.since });

export class SqliteKeyHistory {
  private readonly c: SqliteConnections;
  private readonly read: Statement<[], Row>;
  private readonly rotations: Statement<[], { log_index: number; entry: string }>;
  private readonly w: { read: Statement<[], Row>; upsert: Statement<[string, string, number]>; addEntry: Statement<[number, string]> };
  private readonly cosignature: Statement<[number, string], { signature: Uint8Array }>;
  private readonly putCosignature: Statement<[number, string, Uint8Array]>;
  private readonly cosignatureW: Statement<[number, string], { signature: Uint8Array }>;

  constructor(c: SqliteConnections) {
    this.c = c;
    this.read = c.reader.prepare(SELECT);
    this.rotations = c.reader.prepare('SELECT log_index, entry FROM key_rotations ORDER BY log_index');
    this.w = {
      read: c.writer.prepare(SELECT),
      upsert: c.writer.prepare(UPSERT),
      addEntry: c.writer.prepare('INSERT INTO key_rotations (log_index, entry) VALUES (?, ?)'),
    };
    const get = 'SELECT signature FROM witness_cosignatures WHERE leaf_index = ? AND key = ?';
    this.cosignature = c.reader.prepare(get);
    this.cosignatureW = c.writer.prepare(get);
    this.putCosignature = c.writer.prepare(
      'INSERT INTO witness_cosignatures (leaf_index, key, signature) VALUES (?, ?, ?) ON CONFLICT (leaf_index, key) DO NOTHING',
    );
  }

  /** A stored rotation key's cosignature (WitnessStore.witnessCosignature). */
  witnessCosignature(leafIndex: number, key: string): Promise<Uint8Array | undefined> {
    return this.c.read(() => {
      const row = this.cosignature.get(leafIndex, key);
      return row === undefined ? undefined : new Uint8Array(row.signature);
    });
  }

  /** Store one at first need, durably (its own transaction); the first stored value is returned. */
  putWitnessCosignature(leafIndex: number, key: string, signature: Uint8Array): Promise<Uint8Array> {
    return this.c.write(() =>
      this.c.writer
        .transaction(() => {
          this.putCosignature.run(leafIndex, key, signature);
          return new Uint8Array(this.cosignatureW.get(leafIndex, key)!.signature);
        })
        .immediate(),
    );
  }

  /** Committed history, oldest first. */
  history(): Promise<WitnessKeyRecord[]> {
    return this.c.read(() => this.read.all().map(toRecord));
  }

  /** Logged rotation entries, oldest first. */
  entries(): Promise<KeyRotationRecord[]> {
    return this.c.read(() => this.rotations.all().map((r) => ({ logIndex: r.log_index, entry: r.entry })));
  }

  /** Inside a write transaction (the writer connection, BEGIN IMMEDIATE already run). */
  transaction(): KeyHistoryTx {
    return {
      history: () => Promise.resolve(guard(() => this.w.read.all().map(toRecord))),
      setKey: (r) => {
        guard(() => this.w.upsert.run(r.key, r.state, r.since));
        return Promise.resolve();
      },
      addRotationEntry: (r) => {
        guard(() => this.w.addEntry.run(r.logIndex, r.entry));
        return Promise.resolve();
      },
    };
  }
}
