/**
 * Anchor-chain state in SQLite: seed records (`seeds`), duplicity proofs (`duplicities`) and the
 * party events the quota windows are read from (`party_events`). Written only inside the store's
 * write transaction, next to the log entries of the same batch.
 */
import type { Database as Db, Statement } from 'better-sqlite3';
import type { DuplicityProof } from '../../anchor/types.ts';
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

class AnchorQueries {
  readonly getSeed: Statement<[Uint8Array], SeedRow>;
  readonly putSeed: Statement<[Uint8Array, string, number, string, Uint8Array, number, number]>;
  readonly getProof: Statement<[Uint8Array], { proof: string }>;
  readonly putProof: Statement<[Uint8Array, string, number, number]>;
  readonly proofsAfter: Statement<[Uint8Array, number], { proof: string }>;
  readonly partyAnchors: Statement<[string, number], { at: number }>;
  readonly partySeeds: Statement<[string, number], { at: number }>;
  readonly putEvent: Statement<[string, number, number]>;
  readonly pruneEvents: Statement<[number]>;
  readonly countSeeds: Statement<[], { n: number }>;
  readonly countProofs: Statement<[], { n: number }>;
  readonly kelTips: Statement<[], KelTipRow>;
  readonly raiseKelTip: Statement<[string, number, string, number | null, string | null]>;

  constructor(db: Db) {
    this.getSeed = db.prepare(
      'SELECT s.*, d.proof AS proof FROM seeds s LEFT JOIN duplicities d ON d.seed_id = s.seed_id WHERE s.seed_id = ?',
    );
    this.putSeed = db.prepare(
      `INSERT INTO seeds (seed_id, owner, created_at, anchor, cosig_signature, cosig_time, leaf_index) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (seed_id) DO UPDATE SET anchor = excluded.anchor, cosig_signature = excluded.cosig_signature,
         cosig_time = excluded.cosig_time, leaf_index = excluded.leaf_index`,
    );
    this.getProof = db.prepare('SELECT proof FROM duplicities WHERE seed_id = ?');
    this.putProof = db.prepare('INSERT INTO duplicities (seed_id, proof, leaf_index, at) VALUES (?, ?, ?, ?)');
    this.proofsAfter = db.prepare('SELECT proof FROM duplicities WHERE seed_id > ? ORDER BY seed_id LIMIT ?');
    this.partyAnchors = db.prepare('SELECT at FROM party_events WHERE party = ? AND at >= ? ORDER BY at');
    this.partySeeds = db.prepare('SELECT at FROM party_events WHERE party = ? AND at >= ? AND new_seed = 1 ORDER BY at');
    this.putEvent = db.prepare('INSERT INTO party_events (party, at, new_seed) VALUES (?, ?, ?)');
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

  /** The anchor-state side of a write transaction (inside BEGIN IMMEDIATE on the writer). */
  transaction(): AnchorStateTx {
    const q = this.w;
    return {
      getSeed: (seedId) => Promise.resolve(guard(() => q.seed(seedId))),
      partyUsage: (party, anchorsSince, newSeedsSince): Promise<PartyUsage> =>
        Promise.resolve(
          guard(() => ({
            anchorTimes: q.partyAnchors.all(party, anchorsSince).map((r) => r.at),
            newSeedTimes: q.partySeeds.all(party, newSeedsSince).map((r) => r.at),
          })),
        ),
      putSeed: (s, isNew, party) => {
        guard(() => {
          q.putSeed.run(
            s.seedId,
            s.owner,
            s.createdAt,
            encodeStoredAnchor(s.latest),
            s.cosignature.signature,
            s.cosignature.timestamp,
            s.cosignature.leafIndex,
          );
          q.putEvent.run(party, s.cosignature.timestamp, isNew ? 1 : 0);
        });
        return Promise.resolve();
      },
      putDuplicity: (proof, leafIndex, at) => {
        guard(() => q.putProof.run(proof.seedId, encodeStoredProof(proof), leafIndex, at));
        return Promise.resolve();
      },
    };
  }
}
