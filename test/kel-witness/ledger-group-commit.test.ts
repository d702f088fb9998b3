// src/kel-witness/group-commit.ts without a store: events submitted in one event-loop turn share
// one transaction, in prefix order (arrival order within a prefix); a job that throws fails only
// itself — its group is rerun one job per transaction and the others still commit; and a group
// never exceeds maxGroup.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GroupCommit } from '../../src/kel-witness/group-commit.ts';
import type { TransparencyLog } from '../../src/log/log.ts';
import type { WitnessStore } from '../../src/store/types.ts';

/** A log whose transactions run the caller and record the jobs each one ran ("committed" unless it throws). */
function fakeLog(): { log: TransparencyLog<WitnessStore>; committed: string[][]; aborted: string[][] } {
  const committed: string[][] = [];
  const aborted: string[][] = [];
  const log = {
    async transaction<T>(fn: (tx: { ran: string[] }, batch: unknown) => Promise<T>) {
      const tx = { ran: [] as string[] };
      try {
        const value = await fn(tx, {});
        committed.push(tx.ran);
        return { value, checkpoint: undefined, batch: {} };
      } catch (e) {
        aborted.push(tx.ran);
        throw e;
      }
    },
  } as unknown as TransparencyLog<WitnessStore>;
  return { log, committed, aborted };
}

const job =
  (name: string, fail = false) =>
  (tx: unknown) => {
    (tx as { ran: string[] }).ran.push(name);
    return fail ? Promise.reject(new Error(`${name} failed`)) : Promise.resolve(name);
  };

void test('group commit: one turn, one transaction, prefix order; a failing job fails alone', async () => {
  const { log, committed, aborted } = fakeLog();
  const sizes: number[] = [];
  const g = new GroupCommit(log, 32, (n) => sizes.push(n));
  const all = await Promise.all([g.submit('P2', job('P2/a')), g.submit('P1', job('P1/a')), g.submit('P2', job('P2/b'))]);
  assert.deepEqual(all, ['P2/a', 'P1/a', 'P2/b']);
  assert.deepEqual(committed, [['P1/a', 'P2/a', 'P2/b']], 'one transaction, prefixes in order, arrival order within one');
  assert.deepEqual(sizes, [3]);

  committed.length = 0;
  const outcomes = await Promise.allSettled([g.submit('A', job('A')), g.submit('B', job('B', true)), g.submit('C', job('C'))]);
  assert.deepEqual(
    outcomes.map((o) => o.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  assert.deepEqual(aborted, [['A', 'B'], ['B']], 'the group aborted at B, then B alone');
  assert.deepEqual(committed, [['A'], ['C']], 'the others committed one per transaction');
});

void test('group commit: groups are at most maxGroup; maxGroup 1 is one transaction per job', async () => {
  const { log, committed } = fakeLog();
  const g = new GroupCommit(log, 2);
  await Promise.all(['a', 'b', 'c', 'd', 'e'].map((k) => g.submit(k, job(k))));
  assert.deepEqual(committed, [['a', 'b'], ['c', 'd'], ['e']]);
  const one = fakeLog();
  const g1 = new GroupCommit(one.log, 1);
  await Promise.all(['a', 'b'].map((k) => g1.submit(k, job(k))));
  assert.deepEqual(one.committed, [['a'], ['b']]);
});
