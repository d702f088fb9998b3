/**
 * The witnessed own log's state in SQLite (SPEC §4.1): each peer witness's last cosigned
 * checkpoint (`log_witnesses`), the node-signed notes peers cosigned (`log_cosigned_notes`), their
 * cosignature lines per (size, witness) (`log_cosignatures`) and the published size
 * (`log_published`, only grows). Each call is one durable transaction on the shared write lane.
 */
import type { Database as Db, Statement } from 'better-sqlite3';
import { StoreInvariantError } from '../errors.ts';
import { toBytes } from '../rows.ts';
import {
  LOG_COSIGNATURES_PER_WITNESS,
  type LogCosignatureRecord,
  type LogCosignedCheckpoint,
  type LogWitnessState,
  type LogWitnessStorage,
} from '../types.ts';
import type { SqliteConnections } from './db.ts';

class LogWitnessQueries {
  readonly states: Statement<[], { url: string; size: number; root: Uint8Array; at: number }>;
  readonly putState: Statement<[string, number, Uint8Array, number]>;
  readonly getNote: Statement<[number], { root: Uint8Array; note: string }>;
  readonly putNote: Statement<[number, Uint8Array, string]>;
  readonly putLines: Statement<[number, string, string, number]>;
  readonly lines: Statement<[number], { url: string; lines: string }>;
  readonly sizes: Statement<[number, number], { size: number }>;
  readonly published: Statement<[], { size: number }>;
  readonly setPublished: Statement<[number]>;
  readonly pruneWitness: Statement<[string, number, string, number]>;
  readonly pruneBelow: Statement<[number]>;
  readonly pruneNotesBelow: Statement<[number]>;
  readonly pruneOrphanNotes: Statement<[number]>;

  constructor(db: Db) {
    this.states = db.prepare('SELECT url, size, root, at FROM log_witnesses ORDER BY url');
    this.putState = db.prepare(
      `INSERT INTO log_witnesses (url, size, root, at) VALUES (?, ?, ?, ?)
       ON CONFLICT (url) DO UPDATE SET size = excluded.size, root = excluded.root, at = excluded.at`,
    );
    this.getNote = db.prepare('SELECT root, note FROM log_cosigned_notes WHERE size = ?');
    this.putNote = db.prepare('INSERT INTO log_cosigned_notes (size, root, note) VALUES (?, ?, ?) ON CONFLICT (size) DO NOTHING');
    this.putLines = db.prepare(
      `INSERT INTO log_cosignatures (size, url, lines, at) VALUES (?, ?, ?, ?)
       ON CONFLICT (size, url) DO UPDATE SET lines = excluded.lines, at = excluded.at`,
    );
    this.lines = db.prepare('SELECT url, lines FROM log_cosignatures WHERE size = ? ORDER BY url');
    this.sizes = db.prepare('SELECT DISTINCT size FROM log_cosignatures WHERE size > ? ORDER BY size DESC LIMIT ?');
    this.published = db.prepare('SELECT size FROM log_published WHERE id = 1');
    this.setPublished = db.prepare(
      'INSERT INTO log_published (id, size) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET size = max(log_published.size, excluded.size)',
    );
    // A witness's rows older than its newest `keep`, except the published checkpoint's.
    this.pruneWitness = db.prepare(
      `DELETE FROM log_cosignatures WHERE url = ? AND size <> ? AND size < coalesce(
         (SELECT size FROM log_cosignatures WHERE url = ? ORDER BY size DESC LIMIT 1 OFFSET ?), -1)`,
    );
    this.pruneBelow = db.prepare('DELETE FROM log_cosignatures WHERE size < ?');
    this.pruneNotesBelow = db.prepare('DELETE FROM log_cosigned_notes WHERE size < ?');
    this.pruneOrphanNotes = db.prepare(
      'DELETE FROM log_cosigned_notes WHERE size <> ? AND NOT EXISTS (SELECT 1 FROM log_cosignatures c WHERE c.size = log_cosigned_notes.size)',
    );
  }
}

export class SqliteLogWitness implements LogWitnessStorage {
  private readonly c: SqliteConnections;
  private readonly r: LogWitnessQueries;
  private readonly w: LogWitnessQueries;

  constructor(c: SqliteConnections) {
    this.c = c;
    this.r = new LogWitnessQueries(c.reader);
    this.w = new LogWitnessQueries(c.writer);
  }

  witnessStates(): Promise<LogWitnessState[]> {
    return this.c.read(() => this.r.states.all().map((row) => ({ url: row.url, size: row.size, root: toBytes(row.root), at: row.at })));
  }

  recordCosignature(rec: LogCosignatureRecord): Promise<void> {
    return this.c.write(() => {
      this.c.writer
        .transaction(() => {
          const root = Buffer.from(rec.root);
          this.w.putNote.run(rec.size, root, rec.note);
          const stored = this.w.getNote.get(rec.size);
          if (stored === undefined || !root.equals(toBytes(stored.root)))
            throw new StoreInvariantError(`store: checkpoint ${rec.size} of the own log was recorded with another root`);
          this.w.putState.run(rec.url, rec.size, root, rec.at);
          this.w.putLines.run(rec.size, rec.url, rec.lines, rec.at);
          const published = this.w.published.get()?.size ?? -1;
          if (this.w.pruneWitness.run(rec.url, published, rec.url, LOG_COSIGNATURES_PER_WITNESS - 1).changes > 0)
            this.w.pruneOrphanNotes.run(published);
        })
        .immediate();
    });
  }

  cosigned(size: number): Promise<LogCosignedCheckpoint | undefined> {
    return this.c.read(() => {
      const note = this.r.getNote.get(size);
      if (note === undefined) return undefined;
      const lines = new Map(this.r.lines.all(size).map((row) => [row.url, row.lines]));
      return { size, root: toBytes(note.root), note: note.note, lines };
    });
  }

  cosignedSizes(after: number, limit: number): Promise<number[]> {
    return this.c.read(() => this.r.sizes.all(after, limit).map((row) => row.size));
  }

  published(): Promise<number | undefined> {
    return this.c.read(() => this.r.published.get()?.size);
  }

  publish(size: number): Promise<number> {
    return this.c.write(() =>
      this.c.writer
        .transaction(() => {
          this.w.setPublished.run(size);
          const now = this.w.published.get()!.size;
          this.w.pruneBelow.run(now);
          this.w.pruneNotesBelow.run(now);
          return now;
        })
        .immediate(),
    );
  }
}
