/**
 * WitnessStore conformance (what spans the concerns): identity binding, one transaction over the
 * log and the anchor state (all or nothing), state surviving a reopen, capabilities, close.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeDuplicityProof } from '../../../src/anchor/duplicity.ts';
import { hashLeaf } from '../../../src/tlog/hash.ts';
import { rootFromLeafHashes } from '../../../src/tlog/merkle.ts';
import { fill } from '../../helpers/anchors.ts';
import {
  anchor,
  appendAll,
  entry,
  hex,
  ID,
  logOf,
  origin,
  record,
  rejectsWithCode,
  storedSize,
  withStore,
  type StoreFactory,
} from './helpers.ts';

export function storeLifecycleConformance(factory: () => StoreFactory, expected: { multiWriter: boolean }): void {
  void test('capabilities are declared', () =>
    withStore(factory, (s) => {
      assert.deepEqual({ ...s.capabilities }, expected);
      return Promise.resolve();
    }));

  void test('bindIdentity binds once, accepts the same identity after reopening, refuses another key, name or origin', () =>
    withStore(factory, async (s0, f, use) => {
      await s0.bindIdentity(ID);
      await s0.bindIdentity(ID);
      const s = use(await f.reopen(s0));
      await s.bindIdentity(ID);
      for (const other of [
        { ...ID, witnessKey: 'cd'.repeat(32) },
        { ...ID, name: 'witness.test/w2' },
        { ...ID, logOrigin: 'witness.test/w1/other' },
      ]) {
        await rejectsWithCode(() => s.bindIdentity(other), 'store_identity_mismatch');
      }
    }));

  void test('a transaction is all or nothing: a throw rolls back appends, seeds, proofs and checkpoint; the error passes through', () =>
    withStore(factory, async (s) => {
      await appendAll(s, [5]);
      const before = await s.log.checkpoint();
      const boom = new Error('boom');
      await assert.rejects(
        s.transaction(async (tx) => {
          await tx.log.appendLeaves(5, [entry(5), entry(6)], [{ level: 0, index: 5, hash: hashLeaf(entry(5)) }]);
          await tx.anchors.putSeed(record(1, 1, 5, 1800000000), true, 'EAlice');
          await tx.anchors.putDuplicity(makeDuplicityProof(anchor(2, 1, 1), anchor(2, 1, 2)), 6, 1800000000);
          await tx.log.setCheckpoint({ size: 7, root: fill(7), note: 'note 7\n' });
          throw boom;
        }),
        (e) => e === boom,
      );
      assert.equal(await s.anchors.getSeed(fill(1)), undefined);
      assert.equal(await s.anchors.getDuplicity(fill(2)), undefined);
      assert.equal((await s.log.checkpoint())?.note, before?.note);
      assert.equal(await storedSize(s), 5);
      assert.deepEqual(await s.log.readEntries(5, 2), []);
      const { value } = await logOf(s).transaction((_tx, b) => Promise.resolve(b.append(entry(5))));
      assert.equal(value, 5);
    }));

  void test('state survives close and reopen: log, tree head, seeds, duplicities, checkpoint, origins', () =>
    withStore(factory, async (s0, f, use) => {
      await s0.bindIdentity(ID);
      const all = await appendAll(s0, [3, 4]);
      await s0.transaction(async (tx) => {
        await tx.anchors.putSeed(record(1, 1, 0, 1800000000), true, 'EAlice');
        await tx.anchors.putDuplicity(makeDuplicityProof(anchor(1, 2, 1), anchor(1, 2, 2)), 1, 1800000000);
      });
      await s0.cosign.updateOrigin(0, origin(3, 100));
      const s = use(await f.reopen(s0));
      await s.bindIdentity(ID);
      const cp = await s.log.checkpoint();
      assert.equal(cp?.size, 7);
      assert.equal(hex(cp.root), hex(rootFromLeafHashes(all.map(hashLeaf))));
      assert.ok((await s.anchors.getSeed(fill(1)))?.duplicity);
      assert.equal((await s.cosign.getOrigin('example.com/log'))?.size, 3);
      const { value, checkpoint } = await logOf(s).transaction((_tx, b) => Promise.resolve(b.append(entry(7))));
      assert.equal(value, 7);
      assert.equal(hex(checkpoint!.root), hex(rootFromLeafHashes([...all, entry(7)].map(hashLeaf))));
    }));

  void test('a closed store refuses transactions and reads with store_unavailable; close is idempotent', async () => {
    const s = await factory().fresh();
    await s.close();
    await s.close();
    await rejectsWithCode(() => s.transaction((tx) => tx.log.size()), 'store_unavailable');
    await rejectsWithCode(() => s.log.checkpoint(), 'store_unavailable');
    await rejectsWithCode(() => s.anchors.getSeed(new Uint8Array(32)), 'store_unavailable');
    await rejectsWithCode(() => s.cosign.getOrigin('example.com/log'), 'store_unavailable');
  });
}
