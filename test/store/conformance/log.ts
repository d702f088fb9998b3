/**
 * LogStorage conformance: the bytes a driver stores and reads back (entries, complete-subtree
 * hashes, the checkpoint), and the log above it (src/log) producing tree heads, proofs and tiles
 * equal to the in-memory reference of src/tlog/merkle.ts and tiles.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EMPTY_ROOT, hashLeaf } from '../../../src/tlog/hash.ts';
import { consistencyProof, inclusionProof, memoryHashReader, rootFromLeafHashes } from '../../../src/tlog/merkle.ts';
import { buildTile } from '../../../src/tlog/tiles.ts';
import { fill } from '../../helpers/anchors.ts';
import { appendAll, entry, hex, logOf, rejectsWithCode, storedSize, withStore, type StoreFactory } from './helpers.ts';

export function logStorageConformance(factory: () => StoreFactory): void {
  void test('an empty log: no checkpoint, size 0, no nodes or entries, the empty root', () =>
    withStore(factory, async (s) => {
      assert.equal(await s.log.checkpoint(), undefined);
      assert.equal(await storedSize(s), 0);
      assert.deepEqual(await s.log.readNodes([{ level: 0, index: 0 }]), []);
      assert.deepEqual(await s.log.readEntries(0, 1), []);
      assert.deepEqual(await s.log.readNodeRange(0, 0, 1), []);
      const log = logOf(s);
      const { batch } = await log.transaction(() => Promise.resolve());
      assert.equal(batch.size, 0);
      assert.equal(hex(batch.head().root), hex(EMPTY_ROOT));
      await rejectsWithCode(() => log.inclusionProof(0, 0), 'index_out_of_range');
      assert.deepEqual(await log.consistencyProof(0, 0), []);
    }));

  void test('bytes round-trip: entries and node hashes come back as written; the size follows', () =>
    withStore(factory, async (s) => {
      const nodes = [
        { level: 0, index: 0, hash: fill(0xa0) },
        { level: 0, index: 1, hash: fill(0xa1) },
        { level: 1, index: 0, hash: fill(0xb0) },
      ];
      await s.transaction(async (tx) => {
        assert.equal(await tx.log.size(), 0);
        await tx.log.appendLeaves(0, [entry(0), entry(1)], nodes);
        assert.equal(await tx.log.size(), 2);
        assert.deepEqual(
          (await tx.log.readNodes([{ level: 1, index: 0 }])).map((n) => hex(n.hash)),
          [hex(fill(0xb0))],
        );
        await tx.log.setCheckpoint({ size: 2, root: fill(0xb0), note: 'cp 2\n' });
      });
      assert.equal(await storedSize(s), 2);
      const got = await s.log.readNodes([
        { level: 1, index: 0 },
        { level: 0, index: 1 },
        { level: 2, index: 0 },
      ]);
      assert.deepEqual(
        got.map((n) => [n.level, n.index, hex(n.hash)]).sort(),
        [
          [0, 1, hex(fill(0xa1))],
          [1, 0, hex(fill(0xb0))],
        ].sort(),
      );
      assert.deepEqual((await s.log.readNodeRange(0, 0, 5)).map(hex), [hex(fill(0xa0)), hex(fill(0xa1))]);
      assert.deepEqual((await s.log.readEntries(0, 5)).map(hex), [hex(entry(0)), hex(entry(1))]);
      const cp = await s.log.checkpoint();
      assert.deepEqual([cp?.size, cp?.note, hex(cp!.root)], [2, 'cp 2\n', hex(fill(0xb0))]);
    }));

  void test('the store refuses an append that does not start at its size, and a checkpoint beyond it', () =>
    withStore(factory, async (s) => {
      await appendAll(s, [3]);
      await rejectsWithCode(() => s.transaction((tx) => tx.log.appendLeaves(2, [entry(9)], [])), 'store_invariant');
      await rejectsWithCode(() => s.transaction((tx) => tx.log.setCheckpoint({ size: 4, root: fill(1), note: 'x\n' })), 'store_invariant');
      assert.equal(await storedSize(s), 3);
    }));

  void test('appends in batches: first indices, tree heads, inclusion and consistency proofs match the reference', () =>
    withStore(factory, async (s) => {
      const batches = [1, 1, 2, 3, 7, 1, 100, 250, 1, 300];
      const all = await appendAll(s, batches);
      const leaves = all.map(hashLeaf);
      const ref = memoryHashReader(leaves);
      const cp = await s.log.checkpoint();
      assert.equal(cp?.size, all.length);
      assert.equal(hex(cp.root), hex(rootFromLeafHashes(leaves)));
      // A log with a cold cache: every node is read from the store.
      const log = logOf(s);
      for (const size of [1, 2, 3, 5, 8, 14, 115, 365, 366, all.length]) {
        for (const index of [0, Math.floor(size / 3), size - 1]) {
          assert.deepEqual(
            (await log.inclusionProof(index, size)).map(hex),
            inclusionProof(index, size, ref).map(hex),
            `inclusion ${index} in ${size}`,
          );
        }
        for (const old of [1, Math.max(1, size >> 1), size]) {
          assert.deepEqual(
            (await log.consistencyProof(old, size)).map(hex),
            consistencyProof(old, size, ref).map(hex),
            `consistency ${old}→${size}`,
          );
        }
      }
    }));

  void test("a batch's own inclusion proofs come from memory and equal the stored ones; a cold log reopens the right edge", () =>
    withStore(factory, async (s) => {
      await appendAll(s, [37]);
      const log = logOf(s); // cold: reads the right edge of 37 from the store
      const { batch, checkpoint } = await log.transaction((_tx, b) => {
        for (let i = 37; i < 50; i++) b.append(entry(i));
        return Promise.resolve();
      });
      const leaves = Array.from({ length: 50 }, (_, i) => hashLeaf(entry(i)));
      assert.equal(hex(checkpoint!.root), hex(rootFromLeafHashes(leaves)));
      for (let i = 37; i < 50; i++) {
        assert.deepEqual(batch.inclusionProof(i)?.map(hex), inclusionProof(i, 50, memoryHashReader(leaves)).map(hex), `leaf ${i}`);
        assert.deepEqual((await logOf(s).inclusionProof(i, 50)).map(hex), inclusionProof(i, 50, memoryHashReader(leaves)).map(hex));
      }
    }));

  void test('tiles and entry bundles: full, partial, level 1; absent widths are a RangeError', () =>
    withStore(factory, async (s) => {
      const all = await appendAll(s, [300, 300, 66]); // 666 = 2 full level-0 tiles + 154
      const ref = memoryHashReader(all.map(hashLeaf));
      const log = logOf(s);
      for (const [level, index, width] of [
        [0, 0, 256],
        [0, 1, 256],
        [0, 2, 154],
        [0, 2, 10],
        [1, 0, 2],
        [1, 0, 1],
      ] as const) {
        assert.equal(
          hex(await log.tile(level, index, width)),
          hex(buildTile({ level, index, width }, ref)),
          `tile ${level}/${index}.p/${width}`,
        );
      }
      assert.deepEqual((await log.entries(2, 154)).map(hex), all.slice(512, 666).map(hex));
      assert.deepEqual((await log.entries(0, 3)).map(hex), all.slice(0, 3).map(hex));
      await assert.rejects(log.tile(0, 2, 155), RangeError);
      await assert.rejects(log.tile(1, 0, 3), RangeError);
      await assert.rejects(log.entries(2, 155), RangeError);
      await assert.rejects(log.entries(3, 1), RangeError);
    }));

  void test('the checkpoint: the first start signs size 0; later batches replace it; reads outside see committed state only', () =>
    withStore(factory, async (s) => {
      const log = logOf(s);
      assert.equal((await log.init()).size, 0);
      assert.equal((await log.init()).size, 0, 'init keeps an existing checkpoint');
      await log.transaction(async (_tx, batch) => {
        for (const i of [0, 1, 2]) batch.append(entry(i));
        assert.equal((await s.log.checkpoint())?.size, 0, 'uncommitted checkpoint visible outside the transaction');
      });
      const cp = await s.log.checkpoint();
      assert.equal(cp?.size, 3);
      assert.match(cp.note, /^witness\.test\/w1\/anchors\n3\n/);
      assert.equal(hex(cp.root), hex(rootFromLeafHashes([0, 1, 2].map((i) => hashLeaf(entry(i))))));
    }));

  void test('transactions on one handle are serialized: concurrent appends form one linear log', () =>
    withStore(factory, async (s) => {
      const log = logOf(s);
      const firsts = await Promise.all(
        Array.from({ length: 20 }, (_, k) =>
          log.transaction(async (_tx, batch) => {
            const size = batch.size;
            await new Promise((r) => setImmediate(r));
            const first = batch.append(entry(1000 + k));
            batch.append(entry(2000 + k));
            assert.equal(first, size);
            return first;
          }),
        ),
      );
      assert.deepEqual(
        firsts.map((r) => r.value).sort((a, b) => a - b),
        Array.from({ length: 20 }, (_, k) => 2 * k),
      );
      assert.equal(await storedSize(s), 40);
    }));
}
