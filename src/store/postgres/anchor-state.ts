/**
 * Anchor-chain state in PostgreSQL: seed records, duplicity proofs and party events (quota
 * windows). Inside a write transaction the reads go to the sequencer's connection (after the lock,
 * so they see everything committed before) and the writes are buffered, with read-your-writes for
 * getSeed and partyUsage, then flushed with the log in one statement (transaction.ts).
 */
import type { PoolClient } from 'pg';
import type { DuplicityProof } from '../../anchor/types.ts';
import { encodeHex } from '../../encoding/hex.ts';
import { StoreInvariantError } from '../errors.ts';
import { KEL_TIP_AHEAD, decodeStoredProof, kelTipFromRow, seedFromRow, type KelTipRow, type SeedRow } from '../rows.ts';
import type { AnchorStateStorage, AnchorStateTx, KelTip, PartyUsage, SeedRecord } from '../types.ts';
import { query, type PgReader } from './db.ts';

const SQL = {
  getSeed:
    'SELECT s.seed_id, s.owner, s.created_at, s.anchor, s.cosig_signature, s.cosig_time, s.leaf_index, d.proof FROM seeds s LEFT JOIN duplicities d ON d.seed_id = s.seed_id WHERE s.seed_id = $1',
  getProof: 'SELECT proof FROM duplicities WHERE seed_id = $1',
  proofsAfter: 'SELECT proof FROM duplicities WHERE seed_id > $1 ORDER BY seed_id LIMIT $2',
  kelTips: 'SELECT prefix, s, d, est_s, est_d FROM kel_tips ORDER BY prefix',
  // One statement: every row raised or left, atomically; rows only move ahead (KEL_TIP_AHEAD).
  raiseKelTips: `INSERT INTO kel_tips (prefix, s, d, est_s, est_d)
                   SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::text[])
                 ON CONFLICT (prefix) DO UPDATE SET s = excluded.s, d = excluded.d, est_s = excluded.est_s, est_d = excluded.est_d
                 WHERE ${KEL_TIP_AHEAD}`,
  counts: 'SELECT (SELECT count(*) FROM seeds) AS seeds, (SELECT count(*) FROM duplicities) AS duplicities',
  // Grouped by second: a busy party's window is a few dozen rows, not one per anchor.
  partyUsage: `SELECT false AS seed, at, count(*)::integer AS n FROM party_events WHERE party = $1 AND at >= $2 GROUP BY at
               UNION ALL SELECT true, at, count(*)::integer FROM party_events WHERE party = $1 AND at >= $3 AND new_seed GROUP BY at ORDER BY 1, 2`,
};

export class PgAnchorState implements AnchorStateStorage {
  private readonly db: PgReader;

  constructor(db: PgReader) {
    this.db = db;
  }

  async getSeed(seedId: Uint8Array): Promise<SeedRecord | undefined> {
    const row = (await this.db.read<SeedRow>('getSeed', SQL.getSeed, [seedId])).rows[0];
    return row === undefined ? undefined : seedFromRow(row);
  }

  async getDuplicity(seedId: Uint8Array): Promise<DuplicityProof | undefined> {
    const row = (await this.db.read<{ proof: string }>('getProof', SQL.getProof, [seedId])).rows[0];
    return row === undefined ? undefined : decodeStoredProof(row.proof);
  }

  async listDuplicities(after: Uint8Array | undefined, limit: number): Promise<DuplicityProof[]> {
    const res = await this.db.read<{ proof: string }>('proofsAfter', SQL.proofsAfter, [after ?? new Uint8Array(0), limit]);
    return res.rows.map((r) => decodeStoredProof(r.proof));
  }

  async counts(): Promise<{ seeds: number; duplicities: number }> {
    const row = (await this.db.read<{ seeds: number; duplicities: number }>('counts', SQL.counts, [])).rows[0];
    return { seeds: row?.seeds ?? 0, duplicities: row?.duplicities ?? 0 };
  }

  async kelTips(): Promise<KelTip[]> {
    const res = await this.db.read<KelTipRow>('kelTips', SQL.kelTips, []);
    return res.rows.map(kelTipFromRow);
  }

  async raiseKelTips(tips: readonly KelTip[]): Promise<void> {
    if (tips.length === 0) return;
    // A prefix twice in one statement would fail ON CONFLICT: keep each prefix's highest tip.
    const best = new Map<string, KelTip>();
    for (const t of tips) {
      const b = best.get(t.prefix);
      if (b === undefined || (b.estS ?? -1) < (t.estS ?? -1) || ((b.estS ?? -1) === (t.estS ?? -1) && b.s < t.s)) best.set(t.prefix, t);
    }
    const rows = [...best.values()];
    await this.db.read('raiseKelTips', SQL.raiseKelTips, [
      rows.map((t) => t.prefix),
      rows.map((t) => t.s),
      rows.map((t) => t.d),
      rows.map((t) => t.estS ?? null),
      rows.map((t) => t.estD ?? null),
    ]);
  }
}

export interface PendingDuplicity {
  proof: DuplicityProof;
  leafIndex: number;
  at: number;
}

export class PgAnchorTx implements AnchorStateTx {
  private readonly client: PoolClient;
  readonly seeds = new Map<string, SeedRecord>();
  readonly events: { party: string; at: number; newSeed: boolean }[] = [];
  readonly duplicities = new Map<string, PendingDuplicity>();

  constructor(client: PoolClient) {
    this.client = client;
  }

  async getSeed(seedId: Uint8Array): Promise<SeedRecord | undefined> {
    const key = encodeHex(seedId);
    const res = await query<SeedRow>(this.client, 'getSeed', SQL.getSeed, [seedId]);
    const stored = res.rows[0] === undefined ? undefined : seedFromRow(res.rows[0]);
    const record = this.seeds.get(key) ?? stored;
    const dup = this.duplicities.get(key)?.proof ?? stored?.duplicity;
    if (record === undefined) return undefined;
    const out: SeedRecord = { ...record };
    delete out.duplicity;
    if (dup !== undefined) out.duplicity = dup;
    return out;
  }

  async partyUsage(party: string, anchorsSince: number, newSeedsSince: number): Promise<PartyUsage> {
    const anchorTimes: number[] = [];
    const newSeedTimes: number[] = [];
    const res = await query<{ seed: boolean; at: number; n: number }>(this.client, 'partyUsage', SQL.partyUsage, [
      party,
      anchorsSince,
      newSeedsSince,
    ]);
    for (const r of res.rows) {
      const list = r.seed ? newSeedTimes : anchorTimes;
      for (let i = 0; i < r.n; i++) list.push(r.at);
    }
    for (const e of this.events) {
      if (e.party !== party) continue;
      if (e.at >= anchorsSince) anchorTimes.push(e.at);
      if (e.newSeed && e.at >= newSeedsSince) newSeedTimes.push(e.at);
    }
    anchorTimes.sort((a, b) => a - b);
    newSeedTimes.sort((a, b) => a - b);
    return { anchorTimes, newSeedTimes };
  }

  putSeed(record: SeedRecord, isNew: boolean, party: string): Promise<void> {
    const key = encodeHex(record.seedId);
    const prior = this.seeds.get(key);
    if (prior !== undefined && prior.latest.index >= record.latest.index) {
      return Promise.reject(
        new StoreInvariantError(`store: seed ${key} would move from index ${prior.latest.index} to ${record.latest.index}`),
      );
    }
    this.seeds.set(key, record);
    this.events.push({ party, at: record.cosignature.timestamp, newSeed: isNew });
    return Promise.resolve();
  }

  putDuplicity(proof: DuplicityProof, leafIndex: number, at: number): Promise<void> {
    const key = encodeHex(proof.seedId);
    if (this.duplicities.has(key)) return Promise.reject(new StoreInvariantError(`store: a second duplicity proof for seed ${key}`));
    this.duplicities.set(key, { proof, leafIndex, at });
    return Promise.resolve();
  }

  get dirty(): boolean {
    return this.seeds.size > 0 || this.duplicities.size > 0;
  }
}
