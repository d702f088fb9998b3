/**
 * Anchor-chain state in SQLite: seed records (`seeds`), duplicity proofs (`duplicities`) and the
 * party events the quota windows are read from (`party_events`). Written only inside the store's
 * write transaction, next to the log entries of the same batch.
 *
 * A batch's seed upserts and party events are buffered and written as multi-row statements (issue
 * 28: one statement per up to 64 rows instead of two per anchor). The rows, their order and the
 * upsert's conflict handling are those of one statement per anchor: SQLite applies a multi-row
 * VALUES list row by row. The buffer is written before a read of the transaction that could see
 * its rows, before a duplicity proof is written, and before COMMIT (`flush`, called by the store).
 */
import type { Database as Db, Statement } from 'better-sqlite3';
import type { DuplicityProof } from '../../anchor/types.ts';
import { encodeHex } from '../../encoding/hex.ts';
import {
  KEL_TIP_AHEAD,
  decodeStoredProof,
  encodeStoredAnchor,
  encodeStoredProof,
  kelTipFromRow,
  seedFromRow,
  type KelTipRow,
  type SeedRow,
} from '../rows.ts';
import type { AnchorStateStorage, AnchorStateTx, KelTip, PartyUsage, SeedRecord } from '../types.ts';
import { guard, type SqliteConnections } from './db.ts';

/** Rows per multi-row INSERT (7 parameters a row: far below SQLite's 32 766). */
export const ROWS_PER_STATEMENT = 64;

/** `INSERT … VALUES (…), (…) …` for 1..ROWS_PER_STATEMENT rows, each statement prepared at first use. */
class MultiRowInsert {
  private readonly db: Db;
  private readonly head: string;
  private readonly row: string;
  private readonly tail: string;
  readonly width: number;
  private readonly byRows: (Statement<unknown[]> | undefined)[] = [];

  constructor(db: Db, head: string, width: number, tail = '') {
    this.db = db;
    this.head = head;
    this.width = width;
    this.row = `(${Array.from({ length: width }, () => '?').join(', ')})`;
    this.tail = tail;
  }

  private statement(rows: number): Statement<unknown[]> {
    let s = this.byRows[rows];
    if (s === undefined) {
      s = this.db.prepare<unknown[]>(`${this.head} VALUES ${Array.from({ length: rows }, () => this.row).join(', ')} ${this.tail}`);
      this.byRows[rows] = s;
    }
    return s;
  }

  /** Insert the rows whose parameters `params` holds back to back (`width` per row), in order. */
  run(params: unknown[]): void {
    const rows = params.length / this.width;
    for (let at = 0; at < rows; at += ROWS_PER_STATEMENT) {
      const n = Math.min(ROWS_PER_STATEMENT, rows - at);
      const chunk = at === 0 && n === rows ? params : params.slice(at * this.width, (at + n) * this.width);
      this.statement(n).run(...chunk);
    }
  }
}

/** The anchor-state side of a write transaction, with `flush` for the store to call before COMMIT. */
export interface SqliteAnchorStateTx extends AnchorStateTx {
  /** Write the buffered seed upserts and party events (a no-op when there are none). */
  flush(): void;
}

class AnchorQueries {
  readonly getSeed: Statement<[Uint8Array], SeedRow>;
  readonly putSeeds: MultiRowInsert;
  readonly getProof: Statement<[Uint8Array], { proof: string }>;
  readonly putProof: Statement<[Uint8Array, string, number, number]>;
  readonly proofsAfter: Statement<[Uint8Array, number], { proof: string }>;
  readonly partyAnchors: Statement<[string, number], { at: number }>;
  readonly partySeeds: Statement<[string, number], { at: number }>;
  readonly putEvents: MultiRowInsert;
  readonly pruneEvents: Statement<[number]>;
  readonly countSeeds: Statement<[], { n: number }>;
  readonly countProofs: Statement<[], { n: number }>;
  readonly kelTips: Statement<[], KelTipRow>;
  readonly raiseKelTip: Statement<[string, number, string, number | null, string | null]>;

  constructor(db: Db) {
    this.getSeed = db.prepare(
      'SELECT s.*, d.proof AS proof FROM seeds s LEFT JOIN duplicities d ON d.seed_id = s.seed_id WHERE s.seed_id = ?',
    );
    this.putSeeds = new MultiRowInsert(
      db,
      'INSERT INTO seeds (seed_id, owner, created_at, anchor, cosig_signature, cosig_time, leaf_index)',
      7,
      `ON CONFLICT (seed_id) DO UPDATE SET anchor = excluded.anchor, cosig_signature = excluded.cosig_signature,
         cosig_time = excluded.cosig_time, leaf_index = excluded.leaf_index`,
    );
    this.getProof = db.prepare('SELECT proof FROM duplicities WHERE seed_id = ?');
    this.putProof = db.prepare('INSERT INTO duplicities (seed_id, proof, leaf_index, at) VALUES (?, ?, ?, ?)');
    this.proofsAfter = db.prepare('SELECT proof FROM duplicities WHERE seed_id > ? ORDER BY seed_id LIMIT ?');
    this.partyAnchors = db.prepare('SELECT at FROM party_events WHERE party = ? AND at >= ? ORDER BY at');
    this.partySeeds = db.prepare('SELECT at FROM party_events WHERE party = ? AND at >= ? AND new_seed = 1 ORDER BY at');
    this.putEvents = new MultiRowInsert(db, 'INSERT INTO party_events (party, at, new_seed)', 3);
    this.pruneEvents = db.prepare('DELETE FROM party_events WHERE at < ?');
    this.countSeeds = db.prepare('SELECT count(*) AS n FROM seeds');
    this.countProofs = db.prepare('SELECT count(*) AS n FROM duplicities');
    this.kelTips = db.prepare('SELECT prefix, s, d, est_s, est_d FROM kel_tips ORDER BY prefix');
    // Rows only move ahead (SPEC §3.5 rev 4): a higher est_s, or the same est_s and a higher s; a
    // row without est_s (written before revision 4) by s alone, and is filled at its own tip.
    this.raiseKelTip = db.prepare(
      `INSERT INTO kel_tips (prefix, s, d, est_s, est_d) VALUES (?, ?, ?, ?, ?) ON CONFLICT (prefix) DO UPDATE
         SET s = excluded.s, d = excluded.d, est_s = excluded.est_s, est_d = excluded.est_d
         WHERE ${KEL_TIP_AHEAD}`,
    );
  }

  seed(seedId: Uint8Array): SeedRecord | undefined {
    const row = this.getSeed.get(seedId);
    return row === undefined ? undefined : seedFromRow(row);
  }
}

/** Committed anchor state, on the reader connection. */
export class SqliteAnchorState implements AnchorStateStorage {
  private readonly c: SqliteConnections;
  private readonly r: AnchorQueries;
  private readonly w: AnchorQueries;

  constructor(c: SqliteConnections) {
    this.c = c;
    this.r = new AnchorQueries(c.reader);
    this.w = new AnchorQueries(c.writer);
  }

  getSeed(seedId: Uint8Array): Promise<SeedRecord | undefined> {
    return this.c.read(() => this.r.seed(seedId));
  }

  getDuplicity(seedId: Uint8Array): Promise<DuplicityProof | undefined> {
    return this.c.read(() => {
      const row = this.r.getProof.get(seedId);
      return row === undefined ? undefined : decodeStoredProof(row.proof);
    });
  }

  listDuplicities(after: Uint8Array | undefined, limit: number): Promise<DuplicityProof[]> {
    return this.c.read(() => this.r.proofsAfter.all(after ?? new Uint8Array(0), limit).map((r) => decodeStoredProof(r.proof)));
  }

  counts(): Promise<{ seeds: number; duplicities: number }> {
    return this.c.read(() => ({ seeds: this.r.countSeeds.get()?.n ?? 0, duplicities: this.r.countProofs.get()?.n ?? 0 }));
  }

  kelTips(): Promise<KelTip[]> {
    return this.c.read(() => this.r.kelTips.all().map(kelTipFromRow));
  }

  raiseKelTips(tips: readonly KelTip[]): Promise<void> {
    if (tips.length === 0) return Promise.resolve();
    return this.c.write(() => {
      this.c.writer
        .transaction(() => {
          for (const t of tips) this.w.raiseKelTip.run(t.prefix, t.s, t.d, t.estS ?? null, t.estD ?? null);
        })
        .immediate();
    });
  }

  /** Quota windows look back one day at most: drop older party events (inside a write transaction). */
  pruneEvents(before: number): void {
    this.w.pruneEvents.run(before);
  }

  /**
   * The anchor-state side of a write transaction (inside BEGIN IMMEDIATE on the writer). Seed
   * upserts and party events wait in a buffer until a read of this transaction needs them (a seed
   * or a party with buffered rows), a duplicity write, or `flush`; then they go in as multi-row
   * statements, in the order they were put.
   */
  transaction(): SqliteAnchorStateTx {
    const q = this.w;
    let seeds: unknown[] = [];
    let events: unknown[] = [];
    const pendingSeeds = new Set<string>();
    const pendingParties = new Set<string>();
    const flush = (): void => {
      if (seeds.length === 0) return;
      const s = seeds;
      const e = events;
      seeds = [];
      events = [];
      pendingSeeds.clear();
      pendingParties.clear();
      guard(() => {
        q.putSeeds.run(s);
        q.putEvents.run(e);
      });
    };
    return {
      getSeed: (seedId) =>
        Promise.resolve(
          guard(() => {
            if (pendingSeeds.size > 0 && pendingSeeds.has(encodeHex(seedId))) flush();
            return q.seed(seedId);
          }),
        ),
      partyUsage: (party, anchorsSince, newSeedsSince): Promise<PartyUsage> =>
        Promise.resolve(
          guard(() => {
            if (pendingParties.has(party)) flush();
            return {
              anchorTimes: q.partyAnchors.all(party, anchorsSince).map((r) => r.at),
              newSeedTimes: q.partySeeds.all(party, newSeedsSince).map((r) => r.at),
            };
          }),
        ),
      putSeed: (s, isNew, party) => {
        guard(() => {
          seeds.push(
            s.seedId,
            s.owner,
            s.createdAt,
            encodeStoredAnchor(s.latest),
            s.cosignature.signature,
            s.cosignature.timestamp,
            s.cosignature.leafIndex,
          );
          events.push(party, s.cosignature.timestamp, isNew ? 1 : 0);
          pendingSeeds.add(encodeHex(s.seedId));
          pendingParties.add(party);
        });
        return Promise.resolve();
      },
      putDuplicity: (proof, leafIndex, at) => {
        guard(() => {
          flush();
          q.putProof.run(proof.seedId, encodeStoredProof(proof), leafIndex, at);
        });
        return Promise.resolve();
      },
      flush,
    };
  }
}
