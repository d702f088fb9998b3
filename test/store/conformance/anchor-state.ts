/**
 * AnchorStateStorage conformance: seed records, quota windows from party events, duplicity proofs;
 * read-your-writes inside a transaction, committed state only outside.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeDuplicityProof } from '../../../src/anchor/duplicity.ts';
import { encodeDuplicityProof } from '../../../src/anchor/codec.ts';
import { stringifyJson } from '../../../src/encoding/json.ts';
import { fill } from '../../helpers/anchors.ts';
import { anchor, entry, hex, logOf, record, shape, withStore, type StoreFactory } from './helpers.ts';

export function anchorStateConformance(factory: () => StoreFactory): void {
  void test('empty: no seeds, no duplicity proofs', () =>
    withStore(factory, async (s) => {
      assert.deepEqual(await s.anchors.counts(), { seeds: 0, duplicities: 0 });
      assert.equal(await s.anchors.getSeed(fill(1)), undefined);
      assert.equal(await s.anchors.getDuplicity(fill(1)), undefined);
      assert.deepEqual(await s.anchors.listDuplicities(undefined, 10), []);
    }));

  void test('reads outside a transaction see committed state only; reads inside see the transaction’s own writes', () =>
    withStore(factory, async (s) => {
      await logOf(s).transaction(async (tx, batch) => {
        batch.append(entry(0));
        await tx.anchors.putSeed(record(1, 1, 0, 1800000000), true, 'EAlice');
        assert.deepEqual(shape(await tx.anchors.getSeed(fill(1))), shape(record(1, 1, 0, 1800000000)));
        assert.equal(await s.anchors.getSeed(fill(1)), undefined, 'uncommitted seed visible outside the transaction');
        assert.deepEqual(await tx.anchors.partyUsage('EAlice', 1800000000 - 60, 1800000000 - 86400), {
          anchorTimes: [1800000000],
          newSeedTimes: [1800000000],
        });
      });
      assert.deepEqual(shape(await s.anchors.getSeed(fill(1))), shape(record(1, 1, 0, 1800000000)));
    }));

  void test('seeds: replace with a later anchor, owner and creation kept by the caller; quota windows from party events', () =>
    withStore(factory, async (s) => {
      const t = 1800000000;
      const log = logOf(s);
      await log.transaction(async (tx, batch) => {
        batch.append(entry(0));
        batch.append(entry(1));
        await tx.anchors.putSeed(record(1, 1, 0, t - 100_000), true, 'EAlice'); // older than a day
        await tx.anchors.putSeed(record(2, 1, 1, t - 3000), true, 'EAlice');
      });
      await log.transaction(async (tx, batch) => {
        batch.append(entry(2));
        batch.append(entry(3));
        await tx.anchors.putSeed(record(2, 2, 2, t - 30), false, 'EAlice');
        await tx.anchors.putSeed(record(3, 1, 3, t - 10), true, 'EBob');
      });
      assert.deepEqual(shape(await s.anchors.getSeed(fill(2))), shape(record(2, 2, 2, t - 30)));
      assert.deepEqual(await s.anchors.counts(), { seeds: 3, duplicities: 0 });
      await s.transaction(async ({ anchors: a }) => {
        assert.deepEqual(await a.partyUsage('EAlice', t - 60, t - 86400), { anchorTimes: [t - 30], newSeedTimes: [t - 3000] });
        assert.deepEqual(await a.partyUsage('EAlice', t - 200_000, t - 200_000), {
          anchorTimes: [t - 100_000, t - 3000, t - 30],
          newSeedTimes: [t - 100_000, t - 3000],
        });
        assert.deepEqual(await a.partyUsage('EBob', t - 60, t - 86400), { anchorTimes: [t - 10], newSeedTimes: [t - 10] });
        assert.deepEqual(await a.partyUsage('ECarol', t - 60, t - 86400), { anchorTimes: [], newSeedTimes: [] });
      });
    }));

  void test('duplicity proofs: stored once, freeze the seed record, listed in seed order with paging', () =>
    withStore(factory, async (s) => {
      const seeds = [0x30, 0x10, 0x20, 0xf0];
      await logOf(s).transaction(async (tx, batch) => {
        for (const b of seeds) {
          const leaf = batch.append(entry(b));
          await tx.anchors.putSeed(record(b, 1, leaf, 1800000000), true, 'EAlice');
        }
        for (const b of seeds.slice(0, 3)) {
          const proof = makeDuplicityProof(anchor(b, 2, 1), anchor(b, 2, 2));
          const leaf = batch.append(entry(0x100 + b));
          await tx.anchors.putDuplicity(proof, leaf, 1800000000);
          const seen = await tx.anchors.getSeed(fill(b));
          assert.ok(seen?.duplicity !== undefined, 'the transaction sees its own duplicity proof');
        }
      });
      assert.deepEqual(await s.anchors.counts(), { seeds: 4, duplicities: 3 });
      const rec = await s.anchors.getSeed(fill(0x10));
      assert.equal(
        stringifyJson(encodeDuplicityProof(rec!.duplicity!)),
        stringifyJson(encodeDuplicityProof(makeDuplicityProof(anchor(0x10, 2, 1), anchor(0x10, 2, 2)))),
      );
      assert.equal((await s.anchors.getSeed(fill(0xf0)))?.duplicity, undefined);
      const got = await s.anchors.getDuplicity(fill(0x20));
      assert.equal(got?.index, 2);
      const page1 = await s.anchors.listDuplicities(undefined, 2);
      assert.deepEqual(
        page1.map((p) => hex(p.seedId)),
        [hex(fill(0x10)), hex(fill(0x20))],
      );
      const page2 = await s.anchors.listDuplicities(page1[1]!.seedId, 2);
      assert.deepEqual(
        page2.map((p) => hex(p.seedId)),
        [hex(fill(0x30))],
      );
      assert.deepEqual(await s.anchors.listDuplicities(fill(0x30), 2), []);
    }));

  void test('kel_tips: empty at first; raised per prefix, never lowered, same s with another d kept; survives a reopen', () =>
    withStore(factory, async (s0, f, use) => {
      const A = 'E' + 'A'.repeat(43);
      const B = 'E' + 'B'.repeat(43);
      const d = (c: string): string => 'E' + c.repeat(43);
      assert.deepEqual(await s0.anchors.kelTips(), []);
      await s0.anchors.raiseKelTips([]);
      await s0.anchors.raiseKelTips([
        { prefix: A, s: 2, d: d('x') },
        { prefix: B, s: 0, d: d('y') },
      ]);
      assert.deepEqual(await s0.anchors.kelTips(), [
        { prefix: A, s: 2, d: d('x') },
        { prefix: B, s: 0, d: d('y') },
      ]);
      // Lower and equal tips leave the row; a higher one raises it (also twice in one call).
      await s0.anchors.raiseKelTips([
        { prefix: A, s: 1, d: d('l') },
        { prefix: B, s: 0, d: d('z') },
      ]);
      await s0.anchors.raiseKelTips([
        { prefix: B, s: 3, d: d('m') },
        { prefix: B, s: 5, d: d('n') },
      ]);
      const s = use(await f.reopen(s0));
      assert.deepEqual(await s.anchors.kelTips(), [
        { prefix: A, s: 2, d: d('x') },
        { prefix: B, s: 5, d: d('n') },
      ]);
    }));

  void test('kel_tips (rev 4): rows move ahead by (est_s, s): a recovery (lower s, higher est_s) moves the row; a row without est_s is filled at its own tip', () =>
    withStore(factory, async (s0, f, use) => {
      const A = 'E' + 'A'.repeat(43);
      const B = 'E' + 'B'.repeat(43);
      const d = (c: string): string => 'E' + c.repeat(43);
      // A revision-3 row (no est): compared by s alone, filled at the same tip.
      await s0.anchors.raiseKelTips([{ prefix: B, s: 3, d: d('b') }]);
      await s0.anchors.raiseKelTips([{ prefix: B, s: 3, d: d('b'), estS: 1, estD: d('e') }]);
      await s0.anchors.raiseKelTips([{ prefix: A, s: 2, d: d('x'), estS: 0, estD: d('i') }]);
      // Behind (same est_s, lower s) and a fork at the same place (same est_s and s, another d): the row stays.
      await s0.anchors.raiseKelTips([{ prefix: A, s: 1, d: d('l'), estS: 0, estD: d('i') }]);
      await s0.anchors.raiseKelTips([{ prefix: A, s: 2, d: d('y'), estS: 0, estD: d('i') }]);
      assert.deepEqual(await s0.anchors.kelTips(), [
        { prefix: A, s: 2, d: d('x'), estS: 0, estD: d('i') },
        { prefix: B, s: 3, d: d('b'), estS: 1, estD: d('e') },
      ]);
      // The recovery rot at s 1: a lower s, a higher est_s.
      await s0.anchors.raiseKelTips([{ prefix: A, s: 1, d: d('r'), estS: 1, estD: d('r') }]);
      const s = use(await f.reopen(s0));
      assert.deepEqual(await s.anchors.kelTips(), [
        { prefix: A, s: 1, d: d('r'), estS: 1, estD: d('r') },
        { prefix: B, s: 3, d: d('b'), estS: 1, estD: d('e') },
      ]);
    }));
}
