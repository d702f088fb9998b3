/**
 * The store conformance suite: the WitnessStore contract (src/store/types.ts), run unchanged
 * against every driver (test/store/sqlite.test.ts, test/store/postgres.test.ts). The Merkle
 * outputs are compared with the in-memory reference of src/tlog/merkle.ts and tiles.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeDuplicityProof } from '../../src/anchor/duplicity.ts';
import { encodeAnchor, encodeDuplicityProof } from '../../src/anchor/codec.ts';
import { stringifyJson } from '../../src/encoding/json.ts';
import { ProtocolError } from '../../src/errors.ts';
import { EVIDENCE_LIMIT } from '../../src/store/types.ts';
import type { EvidenceRecord, OriginState, SeedRecord, StoreIdentity, WitnessStore } from '../../src/store/types.ts';
import { sha256 } from '../../src/crypto/sha256.ts';
import { EMPTY_ROOT, hashLeaf } from '../../src/tlog/hash.ts';
import { consistencyProof, inclusionProof, memoryHashReader, rootFromLeafHashes } from '../../src/tlog/merkle.ts';
import { buildTile } from '../../src/tlog/tiles.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';

export interface StoreFactory {
  /** A fresh, empty store. */
  fresh(): Promise<WitnessStore>;
  /** Close `store` and open its backing storage again. */
  reopen(store: WitnessStore): Promise<WitnessStore>;
}

const alice = edParty(0x09);
const ID: StoreIdentity = { witnessKey: 'ab'.repeat(32), name: 'witness.test/w1', logOrigin: 'witness.test/w1/anchors' };

const entry = (i: number): Uint8Array => new TextEncoder().encode(`entry ${i} ${'x'.repeat(i % 40)}`);
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

function anchor(seedByte: number, index: number, head = index) {
  return signAnchor(alice, { seedId: fill(seedByte), index, head: fill(head), cumulative: BigInt(index) * 10n ** 20n, timestamp: 1700000000 + index });
}

function record(seedByte: number, index: number, leafIndex: number, at: number, head = index): SeedRecord {
  return {
    seedId: fill(seedByte),
    owner: 'did:keri:EAlice',
    createdAt: 1800000000,
    latest: anchor(seedByte, index, head),
    cosignature: { signature: fill(0x40 + index, 64), timestamp: at, leafIndex },
  };
}

/** A comparable form of a record (Buffer vs Uint8Array and bigint safe). */
function shape(r: SeedRecord | undefined): unknown {
  if (r === undefined) return undefined;
  return {
    seedId: hex(r.seedId),
    owner: r.owner,
    createdAt: r.createdAt,
    latest: stringifyJson(encodeAnchor(r.latest)),
    sig: hex(r.cosignature.signature),
    at: r.cosignature.timestamp,
    leaf: r.cosignature.leafIndex,
    duplicity: r.duplicity === undefined ? null : stringifyJson(encodeDuplicityProof(r.duplicity)),
  };
}

function origin(size: number, lastTime: number, name = 'example.com/log'): OriginState {
  return { origin: name, size, root: fill(size & 0xff), checkpoint: `${name}\n${size}\n`, cosignatures: `— w ${size}\n`, lastTime };
}

async function appendAll(store: WitnessStore, batches: number[]): Promise<Uint8Array[]> {
  const all: Uint8Array[] = [];
  for (const n of batches) {
    const es = Array.from({ length: n }, (_, i) => entry(all.length + i));
    const first = await store.transaction(async (tx) => {
      const f = await tx.appendEntries(es);
      const head = await tx.treeHead();
      assert.equal(head.size, all.length + n);
      return f;
    });
    assert.equal(first, all.length);
    all.push(...es);
  }
  return all;
}

/** Drivers report failures as rejected promises, never as synchronous throws: `fn()` is called directly. */
async function rejectsWithCode(fn: () => Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(fn(), (e: unknown) => {
    assert.ok(e instanceof ProtocolError, `expected a ProtocolError, got ${String(e)}`);
    assert.equal(e.code, code);
    return true;
  });
}

/** Register the suite (call inside a describe). `factory()` is read when each test runs. */
export function storeConformance(factory: () => StoreFactory): void {
  /** Run `fn` on a fresh store and close it after (or the one `use` last handed over, after a reopen). */
  const withStore = async (fn: (s: WitnessStore, f: StoreFactory, use: (s: WitnessStore) => WitnessStore) => Promise<void>): Promise<void> => {
    const f = factory();
    let s = await f.fresh();
    try {
      await fn(s, f, (next) => (s = next));
    } finally {
      await s.close();
    }
  };

  void test('an empty store: no checkpoint, no seeds, no origins, an empty tree head', () =>
    withStore(async (s) => {
      assert.equal(await s.checkpoint(), undefined);
      assert.deepEqual(await s.counts(), { seeds: 0, duplicities: 0 });
      assert.equal(await s.getSeed(fill(1)), undefined);
      assert.equal(await s.getDuplicity(fill(1)), undefined);
      assert.deepEqual(await s.listDuplicities(undefined, 10), []);
      assert.equal(await s.getOrigin('example.com/log'), undefined);
      const head = await s.transaction((tx) => tx.treeHead());
      assert.equal(head.size, 0);
      assert.equal(hex(head.root), hex(EMPTY_ROOT));
      await rejectsWithCode(() => s.inclusionProof(0, 0), 'index_out_of_range');
      assert.deepEqual(await s.consistencyProof(0, 0), []);
    }));

  void test('bindIdentity binds once, accepts the same identity after reopening, refuses another key, name or origin', () =>
    withStore(async (s0, f, use) => {
      await s0.bindIdentity(ID);
      await s0.bindIdentity(ID);
      const s = use(await f.reopen(s0));
      await s.bindIdentity(ID);
      for (const other of [{ ...ID, witnessKey: 'cd'.repeat(32) }, { ...ID, name: 'witness.test/w2' }, { ...ID, logOrigin: 'witness.test/w1/other' }]) {
        await rejectsWithCode(() => s.bindIdentity(other), 'store_identity_mismatch');
      }
    }));

  void test('appends in batches: first indices, tree heads, inclusion and consistency proofs match the reference', () =>
    withStore(async (s) => {
      const batches = [1, 1, 2, 3, 7, 1, 100, 250, 1, 300];
      const all = await appendAll(s, batches);
      const leaves = all.map(hashLeaf);
      const ref = memoryHashReader(leaves);
      const head = await s.transaction((tx) => tx.treeHead());
      assert.equal(head.size, all.length);
      assert.equal(hex(head.root), hex(rootFromLeafHashes(leaves)));
      // every intermediate size was a valid head; proofs against several of them
      for (const size of [1, 2, 3, 5, 8, 14, 115, 365, 366, all.length]) {
        for (const index of [0, Math.floor(size / 3), size - 1]) {
          assert.deepEqual((await s.inclusionProof(index, size)).map(hex), inclusionProof(index, size, ref).map(hex), `inclusion ${index} in ${size}`);
        }
        for (const old of [1, Math.max(1, size >> 1), size]) {
          assert.deepEqual((await s.consistencyProof(old, size)).map(hex), consistencyProof(old, size, ref).map(hex), `consistency ${old}→${size}`);
        }
      }
    }));

  void test('tiles and entry bundles: full, partial, level 1; absent widths are a RangeError', () =>
    withStore(async (s) => {
      const all = await appendAll(s, [300, 300, 66]); // 666 = 2 full level-0 tiles + 154
      const ref = memoryHashReader(all.map(hashLeaf));
      for (const [level, index, width] of [
        [0, 0, 256],
        [0, 1, 256],
        [0, 2, 154],
        [0, 2, 10],
        [1, 0, 2],
        [1, 0, 1],
      ] as const) {
        assert.equal(hex(await s.tile(level, index, width)), hex(buildTile({ level, index, width }, ref)), `tile ${level}/${index}.p/${width}`);
      }
      assert.deepEqual((await s.entries(2, 154)).map(hex), all.slice(512, 666).map(hex));
      assert.deepEqual((await s.entries(0, 3)).map(hex), all.slice(0, 3).map(hex));
      await assert.rejects(s.tile(0, 2, 155), RangeError);
      await assert.rejects(s.tile(1, 0, 3), RangeError);
      await assert.rejects(s.entries(2, 155), RangeError);
      await assert.rejects(s.entries(3, 1), RangeError);
    }));

  void test('a transaction is all or nothing: a throw rolls back appends, seeds, proofs and checkpoint; the error passes through', () =>
    withStore(async (s) => {
      await appendAll(s, [5]);
      const boom = new Error('boom');
      await assert.rejects(
        s.transaction(async (tx) => {
          await tx.appendEntries([entry(5), entry(6)]);
          await tx.putSeed(record(1, 1, 5, 1800000000), true, 'EAlice');
          await tx.putDuplicity(makeDuplicityProof(anchor(2, 1, 1), anchor(2, 1, 2)), 6, 1800000000);
          await tx.setCheckpoint({ size: 7, root: fill(7), note: 'note 7\n' });
          throw boom;
        }),
        (e) => e === boom,
      );
      assert.equal(await s.getSeed(fill(1)), undefined);
      assert.equal(await s.getDuplicity(fill(2)), undefined);
      assert.equal(await s.checkpoint(), undefined);
      assert.equal((await s.transaction((tx) => tx.treeHead())).size, 5);
      assert.equal(await s.transaction((tx) => tx.appendEntries([entry(5)])), 5);
    }));

  void test('reads outside a transaction see committed state only; reads inside see the transaction’s own writes', () =>
    withStore(async (s) => {
      await s.transaction(async (tx) => {
        await tx.appendEntries([entry(0)]);
        await tx.putSeed(record(1, 1, 0, 1800000000), true, 'EAlice');
        assert.deepEqual(shape(await tx.getSeed(fill(1))), shape(record(1, 1, 0, 1800000000)));
        assert.equal(await s.getSeed(fill(1)), undefined, 'uncommitted seed visible outside the transaction');
        assert.deepEqual(await tx.partyUsage('EAlice', 1800000000 - 60, 1800000000 - 86400), { anchorTimes: [1800000000], newSeedTimes: [1800000000] });
        await tx.setCheckpoint({ size: 1, root: fill(9), note: 'note 1\n' });
        assert.equal(await s.checkpoint(), undefined, 'uncommitted checkpoint visible outside the transaction');
      });
      assert.deepEqual(shape(await s.getSeed(fill(1))), shape(record(1, 1, 0, 1800000000)));
      const cp = await s.checkpoint();
      assert.equal(cp?.size, 1);
      assert.equal(cp.note, 'note 1\n');
      assert.equal(hex(cp.root), hex(fill(9)));
    }));

  void test('seeds: replace with a later anchor, owner and creation kept by the caller; quota windows from party events', () =>
    withStore(async (s) => {
      const t = 1800000000;
      await s.transaction(async (tx) => {
        await tx.appendEntries([entry(0), entry(1)]);
        await tx.putSeed(record(1, 1, 0, t - 100_000), true, 'EAlice'); // older than a day
        await tx.putSeed(record(2, 1, 1, t - 3000), true, 'EAlice');
      });
      await s.transaction(async (tx) => {
        await tx.appendEntries([entry(2), entry(3)]);
        await tx.putSeed(record(2, 2, 2, t - 30), false, 'EAlice');
        await tx.putSeed(record(3, 1, 3, t - 10), true, 'EBob');
      });
      assert.deepEqual(shape(await s.getSeed(fill(2))), shape(record(2, 2, 2, t - 30)));
      assert.deepEqual(await s.counts(), { seeds: 3, duplicities: 0 });
      await s.transaction(async (tx) => {
        assert.deepEqual(await tx.partyUsage('EAlice', t - 60, t - 86400), { anchorTimes: [t - 30], newSeedTimes: [t - 3000] });
        assert.deepEqual(await tx.partyUsage('EAlice', t - 200_000, t - 200_000), { anchorTimes: [t - 100_000, t - 3000, t - 30], newSeedTimes: [t - 100_000, t - 3000] });
        assert.deepEqual(await tx.partyUsage('EBob', t - 60, t - 86400), { anchorTimes: [t - 10], newSeedTimes: [t - 10] });
        assert.deepEqual(await tx.partyUsage('ECarol', t - 60, t - 86400), { anchorTimes: [], newSeedTimes: [] });
      });
    }));

  void test('duplicity proofs: stored once, freeze the seed record, listed in seed order with paging', () =>
    withStore(async (s) => {
      const seeds = [0x30, 0x10, 0x20, 0xf0];
      await s.transaction(async (tx) => {
        for (const b of seeds) {
          const leaf = await tx.appendEntries([entry(b)]);
          await tx.putSeed(record(b, 1, leaf, 1800000000), true, 'EAlice');
        }
        for (const b of seeds.slice(0, 3)) {
          const proof = makeDuplicityProof(anchor(b, 2, 1), anchor(b, 2, 2));
          const leaf = await tx.appendEntries([entry(0x100 + b)]);
          await tx.putDuplicity(proof, leaf, 1800000000);
          const seen = await tx.getSeed(fill(b));
          assert.ok(seen?.duplicity !== undefined, 'the transaction sees its own duplicity proof');
        }
      });
      assert.deepEqual(await s.counts(), { seeds: 4, duplicities: 3 });
      const rec = await s.getSeed(fill(0x10));
      assert.equal(stringifyJson(encodeDuplicityProof(rec!.duplicity!)), stringifyJson(encodeDuplicityProof(makeDuplicityProof(anchor(0x10, 2, 1), anchor(0x10, 2, 2)))));
      assert.equal((await s.getSeed(fill(0xf0)))?.duplicity, undefined);
      const got = await s.getDuplicity(fill(0x20));
      assert.equal(got?.index, 2);
      const page1 = await s.listDuplicities(undefined, 2);
      assert.deepEqual(page1.map((p) => hex(p.seedId)), [hex(fill(0x10)), hex(fill(0x20))]);
      const page2 = await s.listDuplicities(page1[1]!.seedId, 2);
      assert.deepEqual(page2.map((p) => hex(p.seedId)), [hex(fill(0x30))]);
      assert.deepEqual(await s.listDuplicities(fill(0x30), 2), []);
    }));

  void test('the checkpoint: stored in the transaction, replaced by later ones', () =>
    withStore(async (s) => {
      await s.transaction(async (tx) => {
        await tx.setCheckpoint({ ...(await tx.treeHead()), note: 'cp 0\n' });
      });
      assert.equal((await s.checkpoint())?.size, 0);
      await s.transaction(async (tx) => {
        await tx.appendEntries([entry(0), entry(1), entry(2)]);
        await tx.setCheckpoint({ ...(await tx.treeHead()), note: 'cp 3\n' });
      });
      const cp = await s.checkpoint();
      assert.equal(cp?.note, 'cp 3\n');
      assert.equal(hex(cp.root), hex(rootFromLeafHashes([0, 1, 2].map((i) => hashLeaf(entry(i))))));
    }));

  void test('transactions on one handle are serialized: concurrent appends form one linear log', () =>
    withStore(async (s) => {
      const firsts = await Promise.all(
        Array.from({ length: 20 }, (_, k) =>
          s.transaction(async (tx) => {
            const size = (await tx.treeHead()).size;
            await new Promise((r) => setImmediate(r));
            const first = await tx.appendEntries([entry(1000 + k), entry(2000 + k)]);
            assert.equal(first, size);
            return first;
          }),
        ),
      );
      assert.deepEqual([...firsts].sort((a, b) => a - b), Array.from({ length: 20 }, (_, k) => 2 * k));
      assert.equal((await s.transaction((tx) => tx.treeHead())).size, 40);
    }));

  void test('cosign origins: compare-and-swap on the stored size; exactly one of concurrent swaps wins', () =>
    withStore(async (s) => {
      assert.equal(await s.updateOrigin(5, origin(6, 100)), false, 'expected size 5 of a never-cosigned origin');
      assert.equal(await s.updateOrigin(0, origin(3, 100)), true);
      assert.equal(await s.updateOrigin(0, origin(4, 100)), false, 'stale expected size 0');
      assert.equal(await s.updateOrigin(3, origin(5, 101)), true);
      const st = await s.getOrigin('example.com/log');
      assert.equal(st?.size, 5);
      assert.equal(st.lastTime, 101);
      assert.equal(hex(st.root), hex(fill(5)));
      assert.equal(st.checkpoint, 'example.com/log\n5\n');
      assert.equal(st.cosignatures, '— w 5\n');
      const results = await Promise.all(Array.from({ length: 12 }, (_, k) => s.updateOrigin(5, origin(6 + k, 102))));
      assert.equal(results.filter(Boolean).length, 1);
      const winner = results.indexOf(true);
      assert.equal((await s.getOrigin('example.com/log'))?.size, 6 + winner);
      // other origins are independent
      assert.equal(await s.updateOrigin(0, origin(1, 100, 'example.com/other')), true);
    }));

  void test('cosign evidence: one row per (origin, hash), listed oldest first, bounded per origin with the oldest evicted; survives reopening', () =>
    withStore(async (s0, f, use) => {
      const log = 'example.com/log';
      const other = 'example.com/other';
      const ev = (o: string, n: number, note = `${o}\n${n}\n`) => ({ origin: o, hash: fill(n), note, reason: `reason ${n}`, at: 1800000000 + n });
      const shapeOf = (rows: EvidenceRecord[]) => rows.map((r) => [r.origin, r.hash === undefined ? null : hex(r.hash), r.note, r.reason, r.at]);
      const want = (o: string, ns: number[]) => ns.map((n) => [o, hex(fill(n)), `${o}\n${n}\n`, `reason ${n}`, 1800000000 + n]);
      assert.deepEqual(await s0.listEvidence(log), []);
      assert.deepEqual(await s0.recordEvidence(ev(log, 1)), { added: true, evicted: 0 });
      // The same hash again, whatever the note and reason: nothing written.
      assert.deepEqual(await s0.recordEvidence({ ...ev(log, 1, 'another note\n'), reason: 'again', at: 1 }), { added: false, evicted: 0 });
      // The same hash under another origin is another row.
      assert.deepEqual(await s0.recordEvidence(ev(other, 1)), { added: true, evicted: 0 });
      assert.deepEqual(shapeOf(await s0.listEvidence(log)), want(log, [1]));
      // Bound 3: the fourth row evicts the oldest; a bound of 1 keeps only the newest.
      assert.deepEqual(await s0.recordEvidence(ev(log, 2), 3), { added: true, evicted: 0 });
      assert.deepEqual(await s0.recordEvidence(ev(log, 3), 3), { added: true, evicted: 0 });
      assert.deepEqual(await s0.recordEvidence(ev(log, 4), 3), { added: true, evicted: 1 });
      assert.deepEqual(shapeOf(await s0.listEvidence(log)), want(log, [2, 3, 4]));
      assert.deepEqual(await s0.recordEvidence(ev(log, 3), 3), { added: false, evicted: 0 });
      assert.deepEqual(await s0.recordEvidence(ev(log, 5), 1), { added: true, evicted: 3 });
      assert.deepEqual(shapeOf(await s0.listEvidence(log)), want(log, [5]));
      await assert.rejects(s0.recordEvidence(ev(log, 6), 0), RangeError);
      const s = use(await f.reopen(s0));
      assert.deepEqual(shapeOf(await s.listEvidence(log)), want(log, [5]));
      assert.deepEqual(shapeOf(await s.listEvidence(other)), want(other, [1]), 'another origin is bounded on its own');
      assert.deepEqual(await s.recordEvidence(ev(log, 5)), { added: false, evicted: 0 }, 'deduplication survives reopening');
    }));

  void test('cosign evidence: the default bound is EVIDENCE_LIMIT = 1 000 rows per origin', () =>
    withStore(async (s) => {
      assert.equal(EVIDENCE_LIMIT, 1000);
      const ev = (n: number) => ({ origin: 'example.com/log', hash: sha256(new TextEncoder().encode(String(n))), note: `n ${n}\n`, reason: 'r', at: n });
      for (let n = 0; n < EVIDENCE_LIMIT; n++) assert.deepEqual(await s.recordEvidence(ev(n)), { added: true, evicted: 0 });
      assert.deepEqual(await s.recordEvidence(ev(EVIDENCE_LIMIT)), { added: true, evicted: 1 });
      const rows = await s.listEvidence('example.com/log');
      assert.equal(rows.length, EVIDENCE_LIMIT);
      assert.equal(rows[0]!.note, 'n 1\n');
      assert.equal(rows.at(-1)!.note, `n ${EVIDENCE_LIMIT}\n`);
    }));

  void test('state survives close and reopen: log, tree head, seeds, duplicities, checkpoint, origins', () =>
    withStore(async (s0, f, use) => {
      await s0.bindIdentity(ID);
      const all = await appendAll(s0, [3, 4]);
      await s0.transaction(async (tx) => {
        await tx.putSeed(record(1, 1, 0, 1800000000), true, 'EAlice');
        await tx.putDuplicity(makeDuplicityProof(anchor(1, 2, 1), anchor(1, 2, 2)), 1, 1800000000);
        await tx.setCheckpoint({ ...(await tx.treeHead()), note: 'cp 7\n' });
      });
      await s0.updateOrigin(0, origin(3, 100));
      const s = use(await f.reopen(s0));
      await s.bindIdentity(ID);
      assert.equal((await s.checkpoint())?.note, 'cp 7\n');
      const head = await s.transaction((tx) => tx.treeHead());
      assert.equal(hex(head.root), hex(rootFromLeafHashes(all.map(hashLeaf))));
      assert.ok((await s.getSeed(fill(1)))?.duplicity);
      assert.equal((await s.getOrigin('example.com/log'))?.size, 3);
      assert.equal(await s.transaction((tx) => tx.appendEntries([entry(7)])), 7);
    }));

  void test('a closed store refuses transactions and reads with store_unavailable; close is idempotent', async () => {
    const s = await factory().fresh();
    await s.close();
    await s.close();
    await rejectsWithCode(() => s.transaction((tx) => tx.treeHead()), 'store_unavailable');
    await rejectsWithCode(() => s.checkpoint(), 'store_unavailable');
    await rejectsWithCode(() => s.getSeed(new Uint8Array(32)), 'store_unavailable');
  });
}
