/**
 * The witnessed own log's state in PostgreSQL (SPEC §4.1): as the SQLite driver (log-witness.ts
 * there), on the read pool. Recording a cosignature is one transaction; the published size only
 * grows (GREATEST), so replicas publishing concurrently never move it back.
 */
import { StoreInvariantError } from '../errors.ts';
import { toBytes } from '../rows.ts';
import {
  LOG_COSIGNATURES_PER_WITNESS,
  type LogCosignatureRecord,
  type LogCosignedCheckpoint,
  type LogWitnessState,
  type LogWitnessStorage,
} from '../types.ts';
import { query, type PgReader } from './db.ts';

const SQL = {
  states: 'SELECT url, size, root, at FROM log_witnesses ORDER BY url',
  putNote: `INSERT INTO log_cosigned_notes (size, root, note) VALUES ($1, $2, $3) ON CONFLICT (size) DO NOTHING`,
  getNote: 'SELECT root, note FROM log_cosigned_notes WHERE size = $1',
  putState: `INSERT INTO log_witnesses (url, size, root, at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (url) DO UPDATE SET size = excluded.size, root = excluded.root, at = excluded.at`,
  putLines: `INSERT INTO log_cosignatures (size, url, lines, at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (size, url) DO UPDATE SET lines = excluded.lines, at = excluded.at`,
  // A witness's rows older than its newest `keep`, except the published checkpoint's; then notes
  // left without lines (except the published one).
  prune: `WITH p AS (SELECT coalesce((SELECT size FROM log_published), -1) AS size),
               c AS (SELECT size FROM log_cosignatures WHERE url = $1 ORDER BY size DESC LIMIT 1 OFFSET $2::bigint)
          DELETE FROM log_cosignatures WHERE url = $1 AND size <> (SELECT size FROM p) AND size < coalesce((SELECT size FROM c), -1)`,
  pruneOrphanNotes: `DELETE FROM log_cosigned_notes n WHERE n.size <> coalesce((SELECT size FROM log_published), -1)
                     AND NOT EXISTS (SELECT 1 FROM log_cosignatures c WHERE c.size = n.size)`,
  lines: 'SELECT url, lines FROM log_cosignatures WHERE size = $1 ORDER BY url',
  sizes: 'SELECT DISTINCT size FROM log_cosignatures WHERE size > $1 ORDER BY size DESC LIMIT $2',
  published: 'SELECT size FROM log_published',
  publish: `WITH u AS (INSERT INTO log_published (id, size) VALUES (true, $1)
                       ON CONFLICT (id) DO UPDATE SET size = GREATEST(log_published.size, excluded.size) RETURNING size),
                 l AS (DELETE FROM log_cosignatures WHERE size < (SELECT size FROM u)),
                 n AS (DELETE FROM log_cosigned_notes WHERE size < (SELECT size FROM u))
            SELECT size FROM u`,
};

export class PgLogWitness implements LogWitnessStorage {
  private readonly db: PgReader;

  constructor(db: PgReader) {
    this.db = db;
  }

  async witnessStates(): Promise<LogWitnessState[]> {
    const res = await this.db.read<{ url: string; size: number; root: Uint8Array; at: number }>('lwStates', SQL.states, []);
    return res.rows.map((r) => ({ url: r.url, size: r.size, root: toBytes(r.root), at: r.at }));
  }

  async recordCosignature(rec: LogCosignatureRecord): Promise<void> {
    const root = Buffer.from(rec.root);
    await this.db.transaction(async (client) => {
      await query(client, 'lwPutNote', SQL.putNote, [rec.size, root, rec.note]);
      const stored = (await query<{ root: Uint8Array }>(client, 'lwGetNote', SQL.getNote, [rec.size])).rows[0];
      if (stored === undefined || !root.equals(toBytes(stored.root)))
        throw new StoreInvariantError(`store: checkpoint ${rec.size} of the own log was recorded with another root`);
      await query(client, 'lwPutState', SQL.putState, [rec.url, rec.size, root, rec.at]);
      await query(client, 'lwPutLines', SQL.putLines, [rec.size, rec.url, rec.lines, rec.at]);
      const pruned = await query(client, 'lwPrune', SQL.prune, [rec.url, LOG_COSIGNATURES_PER_WITNESS - 1]);
      if ((pruned.rowCount ?? 0) > 0) await query(client, 'lwPruneNotes', SQL.pruneOrphanNotes, []);
    });
  }

  async cosigned(size: number): Promise<LogCosignedCheckpoint | undefined> {
    const note = (await this.db.read<{ root: Uint8Array; note: string }>('lwGetNote', SQL.getNote, [size])).rows[0];
    if (note === undefined) return undefined;
    const lines = (await this.db.read<{ url: string; lines: string }>('lwLines', SQL.lines, [size])).rows;
    return { size, root: toBytes(note.root), note: note.note, lines: new Map(lines.map((r) => [r.url, r.lines])) };
  }

  async cosignedSizes(after: number, limit: number): Promise<number[]> {
    return (await this.db.read<{ size: number }>('lwSizes', SQL.sizes, [after, limit])).rows.map((r) => r.size);
  }

  async published(): Promise<number | undefined> {
    return (await this.db.read<{ size: number }>('lwPublished', SQL.published, [])).rows[0]?.size;
  }

  async publish(size: number): Promise<number> {
    return (await this.db.read<{ size: number }>('lwPublish', SQL.publish, [size])).rows[0]!.size;
  }
}
