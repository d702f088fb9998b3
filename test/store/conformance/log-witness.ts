/** LogWitnessStorage conformance: peers' state, cosignature lines, the published size (SPEC §4.1). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LOG_COSIGNATURES_PER_WITNESS, type LogCosignatureRecord } from '../../../src/store/types.ts';
import { fill } from '../../helpers/anchors.ts';
import { hex, withStore, type StoreFactory } from './helpers.ts';

const W1 = 'http://w1.test/';
const W2 = 'http://w2.test/';

const rec = (url: string, size: number, at = 1800000000 + size, root = fill(size & 0xff)): LogCosignatureRecord => ({
  url,
  size,
  root,
  at,
  note: `own.test/log\n${size}\n\n— own.test/log sig${size}\n`,
  lines: `— ${url} line${size}\n`,
});

export function logWitnessConformance(factory: () => StoreFactory): void {
  void test('log witnesses: states, lines per (size, witness) and notes; survive reopening', () =>
    withStore(factory, async (s0, f, use) => {
      const lw0 = s0.logWitness;
      assert.deepEqual(await lw0.witnessStates(), []);
      assert.equal(await lw0.published(), undefined);
      assert.equal(await lw0.cosigned(3), undefined);
      await lw0.recordCosignature(rec(W1, 3));
      await lw0.recordCosignature(rec(W2, 3));
      await lw0.recordCosignature(rec(W1, 5));
      // The same (size, witness) again replaces its lines.
      await lw0.recordCosignature({ ...rec(W1, 5), lines: '— w1 again\n' });
      // Another root for a recorded size is an invariant violation; nothing is written.
      await assert.rejects(
        lw0.recordCosignature(rec(W2, 5, 1, fill(0xee))),
        (e: unknown) => (e as { code?: string }).code === 'store_invariant',
      );
      const lw = use(await f.reopen(s0)).logWitness;
      const states = (await lw.witnessStates()).map((st) => [st.url, st.size, hex(st.root), st.at]);
      assert.deepEqual(states, [
        [W1, 5, hex(fill(5)), 1800000005],
        [W2, 3, hex(fill(3)), 1800000003],
      ]);
      const c3 = await lw.cosigned(3);
      assert.equal(c3?.note, rec(W1, 3).note);
      assert.equal(hex(c3.root), hex(fill(3)));
      assert.deepEqual(
        [...c3.lines],
        [
          [W1, `— ${W1} line3\n`],
          [W2, `— ${W2} line3\n`],
        ],
      );
      assert.deepEqual([...(await lw.cosigned(5))!.lines], [[W1, '— w1 again\n']]);
      assert.deepEqual(await lw.cosignedSizes(0, 10), [5, 3]);
      assert.deepEqual(await lw.cosignedSizes(3, 10), [5]);
      assert.deepEqual(await lw.cosignedSizes(0, 1), [5]);
    }));

  void test('log witnesses: the published size only grows, persists, and prunes older rows', () =>
    withStore(factory, async (s0, f, use) => {
      const lw0 = s0.logWitness;
      for (const size of [2, 4, 6]) await lw0.recordCosignature(rec(W1, size));
      assert.equal(await lw0.publish(4), 4);
      assert.equal(await lw0.publish(2), 4, 'never decreases');
      assert.equal(await lw0.cosigned(2), undefined, 'rows below the published size are pruned');
      assert.ok((await lw0.cosigned(4)) !== undefined);
      const lw = use(await f.reopen(s0)).logWitness;
      assert.equal(await lw.published(), 4);
      assert.equal(await lw.publish(6), 6);
      assert.equal(await lw.published(), 6);
      assert.deepEqual(await lw.cosignedSizes(0, 10), [6]);
    }));

  void test(`log witnesses: at most ${LOG_COSIGNATURES_PER_WITNESS} rows per witness, the published one kept`, () =>
    withStore(factory, async ({ logWitness: lw }) => {
      await lw.recordCosignature(rec(W1, 1));
      await lw.recordCosignature(rec(W2, 1));
      await lw.publish(1);
      const n = LOG_COSIGNATURES_PER_WITNESS + 5;
      for (let size = 2; size < 2 + n; size++) await lw.recordCosignature(rec(W1, size));
      const sizes = await lw.cosignedSizes(0, 10_000);
      // W1's newest rows, and size 1 (published, W2's row and W1's kept).
      assert.equal(sizes.length, LOG_COSIGNATURES_PER_WITNESS + 1);
      assert.equal(sizes[0], 1 + n);
      assert.equal(sizes.at(-1), 1);
      assert.deepEqual([...(await lw.cosigned(1))!.lines.keys()], [W1, W2]);
      assert.equal(await lw.cosigned(2), undefined, 'pruned with its note');
    }));
}
