// Issue 28: the SQLite driver writes a batch's seed upserts and party events as multi-row
// statements (src/store/sqlite/anchor-state.ts) instead of two statements per anchor. The tables
// must end up exactly as the per-row statements left them (same rows, same party_events ids, the
// upsert keeping owner and created_at of the first insert), reads inside the transaction must see
// the buffered rows, and a failed transaction must leave nothing. The reference here is a plain
// database fed the previous per-row statements, operation for operation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Anchor } from '../../src/anchor/types.ts';
import { encodeStoredAnchor, seedFromRow, type SeedRow } from '../../src/store/rows.ts';
import { ROWS_PER_STATEMENT } from '../../src/store/sqlite/anchor-state.ts';
import { MIGRATIONS, SqliteStore } from '../../src/store/sqlite/store.ts';
import type { SeedRecord } from '../../src/store/types.ts';
import { tempDir } from '../helpers/tmp.ts';

const PARTIES = ['did:keri:EAlice', 'did:keri:EBob', 'did:keri:ECarol'];

function randomRecord(seedId: Uint8Array, index: number, at: number, leafIndex: number): SeedRecord {
  const latest: Anchor = {
    seedId,
    index,
    head: randomBytes(32),
    cumulative: BigInt(index) * 10n ** 20n,
    timestamp: at - randomInt(100),
    witnessSet: { said: 'EWitnessSet', threshold: 1 },
    sigParty: { curve: 'ed25519', publicKey: randomBytes(32), signature: randomBytes(64) },
  };
  return {
    seedId,
    owner: PARTIES[randomInt(PARTIES.length)]!,
    createdAt: at - randomInt(1000),
    latest,
    cosignature: { signature: randomBytes(64), timestamp: at, leafIndex },
  };
}

/** The previous driver's statements, one per row. */
function reference(path: string) {
  const db = new Database(path);
  for (const m of MIGRATIONS) db.exec(m);
  const putSeed = db.prepare(
    `INSERT INTO seeds (seed_id, owner, created_at, anchor, cosig_signature, cosig_time, leaf_index) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (seed_id) DO UPDATE SET anchor = excluded.anchor, cosig_signature = excluded.cosig_signature,
       cosig_time = excluded.cosig_time, leaf_index = excluded.leaf_index`,
  );
  const putEvent = db.prepare('INSERT INTO party_events (party, at, new_seed) VALUES (?, ?, ?)');
  const getSeed = db.prepare<[Uint8Array], SeedRow>(
    'SELECT s.*, d.proof AS proof FROM seeds s LEFT JOIN duplicities d ON d.seed_id = s.seed_id WHERE s.seed_id = ?',
  );
  const times = db.prepare<[string, number], { at: number }>('SELECT at FROM party_events WHERE party = ? AND at >= ? ORDER BY at');
  return {
    db,
    put(s: SeedRecord, isNew: boolean, party: string): void {
      putSeed.run(
        s.seedId,
        s.owner,
        s.createdAt,
        encodeStoredAnchor(s.latest),
        s.cosignature.signature,
        s.cosignature.timestamp,
        s.cosignature.leafIndex,
      );
      putEvent.run(party, s.cosignature.timestamp, isNew ? 1 : 0);
    },
    seed(seedId: Uint8Array): SeedRecord | undefined {
      const row = getSeed.get(seedId);
      return row === undefined ? undefined : seedFromRow(row);
    },
    anchorTimes: (party: string, since: number): number[] => times.all(party, since).map((r) => r.at),
  };
}

function dump(db: Database.Database): unknown {
  return {
    seeds: db.prepare('SELECT * FROM seeds ORDER BY seed_id').all(),
    events: db.prepare('SELECT * FROM party_events ORDER BY id').all(),
  };
}

void test(`SQLite seed rows: batches written as multi-row statements (${ROWS_PER_STATEMENT} rows each) leave the tables as one statement per row did, with reads inside the transaction seeing the buffered rows`, async () => {
  const tmp = tempDir('aw-seed-rows-');
  const store = SqliteStore.open(join(tmp.dir, 'witness.db'));
  const ref = reference(join(tmp.dir, 'reference.db'));
  let open = true;
  try {
    const seeds = Array.from({ length: 40 }, () => randomBytes(32)); // few seeds: conflicts within and across statements
    const index = new Map<number, number>();
    let leaf = 0;
    let at = 1800000000;
    let reads = 0;
    for (let t = 0; t < 40; t++) {
      // sizes around the statement boundary and far past it
      const size =
        t < 6
          ? [1, ROWS_PER_STATEMENT - 1, ROWS_PER_STATEMENT, ROWS_PER_STATEMENT + 1, 2 * ROWS_PER_STATEMENT + 5, 0][t]!
          : randomInt(0, 300);
      const fail = t >= 6 && randomInt(6) === 0; // a batch that fails after its writes: nothing of it may stay
      const ops: (() => void)[] = [];
      const refOps: (() => void)[] = [];
      try {
        await store.transaction(async ({ anchors }) => {
          for (let i = 0; i < size; i++) {
            at += randomInt(2);
            const n = randomInt(seeds.length);
            const ix = (index.get(n) ?? 0) + 1;
            const rec = randomRecord(seeds[n]!, ix, at, leaf++);
            const isNew = ix === 1;
            const party = PARTIES[randomInt(PARTIES.length)]!;
            await anchors.putSeed(rec, isNew, party);
            refOps.push(() => {
              ref.put(rec, isNew, party);
            });
            ops.push(() => index.set(n, ix));
            if (randomInt(25) === 0) {
              // A read in the middle of the batch: the reference at the same point, with what came before.
              reads++;
              const probe = seeds[randomInt(seeds.length)]!;
              const p = PARTIES[randomInt(PARTIES.length)]!;
              ref.db.exec('SAVEPOINT probe');
              for (const op of refOps) op();
              const want = { seed: ref.seed(probe), times: ref.anchorTimes(p, at - 60) };
              ref.db.exec('ROLLBACK TO probe; RELEASE probe');
              const usage = await anchors.partyUsage(p, at - 60, at - 86400);
              assert.deepEqual({ seed: await anchors.getSeed(probe), times: usage.anchorTimes }, want);
            }
          }
          if (fail) throw new Error('batch failed');
        });
        assert.equal(fail, false);
        ref.db.transaction(() => {
          for (const op of refOps) op();
        })();
        for (const op of ops) op();
      } catch (e) {
        if (!fail) throw e;
        assert.equal((e as Error).message, 'batch failed');
      }
    }
    assert.ok(reads > 5, `reads inside transactions: ${reads}`);
    await store.close();
    open = false;
    const mine = new Database(join(tmp.dir, 'witness.db'), { readonly: true });
    try {
      const got = dump(mine) as { seeds: unknown[]; events: unknown[] };
      assert.deepEqual(got, dump(ref.db));
      assert.ok(got.seeds.length > 30 && got.events.length > 1000, `${got.seeds.length} seeds, ${got.events.length} events`);
    } finally {
      mine.close();
    }
  } finally {
    if (open) await store.close();
    ref.db.close();
    tmp.cleanup();
  }
});
