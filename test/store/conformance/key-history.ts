/**
 * Witness key history conformance (SPEC §1.2): the first bind records `current`; a transaction
 * records `next` and moves keys between states (all or nothing with the log); the history survives
 * a reopen in recording order; one current and one next at most; bindIdentity refuses a key the
 * history never recorded and lets recorded ones through to the rotation rule.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { entry, ID, logOf, rejectsWithCode, storedSize, withStore, type StoreFactory } from './helpers.ts';

const K1 = ID.witnessKey;
const K2 = 'cd'.repeat(32);
const K3 = 'ef'.repeat(32);

export function keyHistoryConformance(factory: () => StoreFactory): void {
  void test('the first bind records the key as current; a next key and a completion are recorded in order and survive a reopen', () =>
    withStore(factory, async (s0, f, use) => {
      assert.deepEqual(await s0.keyHistory(), []);
      await s0.bindIdentity(ID);
      const first = await s0.keyHistory();
      assert.deepEqual(
        first.map((r) => [r.key, r.state]),
        [[K1, 'current']],
      );
      await s0.transaction(async (tx) => {
        await tx.keys.setKey({ key: K2, state: 'next', since: 1_800_000_000 });
        await tx.keys.addRotationEntry({ logIndex: 0, entry: '{"stage":"announce"}' });
        assert.deepEqual(
          (await tx.keys.history()).map((r) => r.state),
          ['current', 'next'],
          'a transaction sees its own writes',
        );
      });
      assert.deepEqual(await s0.keyHistory(), [first[0], { key: K2, state: 'next', since: 1_800_000_000 }]);
      const s = use(await f.reopen(s0));
      assert.deepEqual(await s.keyRotations(), [{ logIndex: 0, entry: '{"stage":"announce"}' }]);
      await s.bindIdentity({ ...ID, witnessKey: K2 }); // a recorded key passes to the rotation rule
      await s.transaction(async (tx) => {
        await tx.keys.setKey({ key: K1, state: 'retired', since: 1_800_100_000 });
        await tx.keys.setKey({ key: K2, state: 'current', since: 1_800_100_000 });
      });
      assert.deepEqual(await s.keyHistory(), [
        { key: K1, state: 'retired', since: 1_800_100_000 },
        { key: K2, state: 'current', since: 1_800_100_000 },
      ]);
      await rejectsWithCode(() => s.bindIdentity({ ...ID, witnessKey: K3 }), 'store_identity_mismatch');
    }));

  void test('a rolled-back transaction records no key; two next keys at once are refused by the store', () =>
    withStore(factory, async (s) => {
      await s.bindIdentity(ID);
      const before = await storedSize(s);
      await assert.rejects(
        logOf(s).transaction(async (tx, batch) => {
          batch.append(entry(1));
          await tx.keys.setKey({ key: K2, state: 'next', since: 1 });
          await tx.keys.addRotationEntry({ logIndex: before, entry: '{}' });
          throw new Error('boom');
        }),
        /boom/,
      );
      assert.equal(await storedSize(s), before);
      assert.deepEqual(
        (await s.keyHistory()).map((r) => r.key),
        [K1],
      );
      assert.deepEqual(await s.keyRotations(), []);
      await assert.rejects(
        s.transaction(async (tx) => {
          await tx.keys.setKey({ key: K2, state: 'next', since: 1 });
          await tx.keys.setKey({ key: K3, state: 'next', since: 1 });
        }),
      );
      assert.deepEqual(
        (await s.keyHistory()).map((r) => r.key),
        [K1],
      );
    }));

  void test('a rotation key cosignature is stored at first need: the first value wins and survives a reopen', () =>
    withStore(factory, async (s0, f, use) => {
      await s0.bindIdentity(ID);
      assert.equal(await s0.witnessCosignature(7, K2), undefined);
      const sig = new Uint8Array(64).fill(0x5a);
      assert.deepEqual(await s0.putWitnessCosignature(7, K2, sig), sig);
      assert.deepEqual(await s0.putWitnessCosignature(7, K2, new Uint8Array(64).fill(0x11)), sig, 'the first stored value is kept');
      assert.equal(await s0.witnessCosignature(7, K3), undefined, 'per key');
      assert.equal(await s0.witnessCosignature(8, K2), undefined, 'per leaf');
      const s = use(await f.reopen(s0));
      assert.deepEqual(await s.witnessCosignature(7, K2), sig);
    }));
}
