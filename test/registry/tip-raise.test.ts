// SPEC §3.5 rev 4: the one tip-raise rule the witness (src/registry/live.ts) and the bridge
// (src/bridge/roots-kel.ts) share (src/registry/tip-raise.ts). Rows move only ahead: a recovery
// (higher est_s, lower s) moves the row; an older copy (lower s, same est_s) never does.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rowAhead, rowMovesTo, tipsToRaise } from '../../src/registry/tip-raise.ts';
import type { KelEvaluation } from '../../src/keri/types.ts';
import type { KelTip } from '../../src/store/types.ts';

const row = { s: 2, d: 'ixn2', estS: 0, estD: 'icp' };
const recovery = { s: 1, d: 'rot', estS: 1, estD: 'rot' };
const older = { s: 1, d: 'ixn1', estS: 0, estD: 'icp' };

void test('a recovery (est_s 1 at s 1) moves a row (est_s 0 at s 2); an older copy does not; the same tip does not', () => {
  assert.equal(rowMovesTo(row, recovery), true);
  assert.equal(rowMovesTo(row, older), false);
  assert.equal(rowMovesTo(row, row), false);
  assert.equal(rowMovesTo(undefined, older), true);
});

void test('a revision-3 row (no est_s) is compared by s and filled at its own tip', () => {
  assert.equal(rowMovesTo({ s: 2, d: 'ixn2' }, row), true);
  assert.equal(rowMovesTo({ s: 2, d: 'ixn2' }, recovery), false);
  assert.equal(rowMovesTo({ s: 2, d: 'ixn2' }, { s: 2, d: 'other', estS: 0, estD: 'icp' }), false);
});

void test('registry_behind: a row ahead by est_s, or by s at the same est_s, or another SAID at the same place', () => {
  assert.equal(rowAhead(recovery, row), true, 'the recovered row is ahead of the old state (s 2)');
  assert.equal(rowAhead(row, recovery), false);
  assert.equal(rowAhead(row, older), true);
  assert.equal(rowAhead(row, { ...row, d: 'fork' }), true);
  assert.equal(rowAhead(row, null), true);
  assert.equal(rowAhead(undefined, null), false);
});

void test('tipsToRaise raises only the rows that move, and updates the map', () => {
  const state = (s: number, d: string, estS: number, estD: string) => ({ s, d, estS, estD }) as unknown as KelEvaluation['state'];
  const evaluations = [
    { prefix: 'A', state: state(1, 'rot', 1, 'rot') },
    { prefix: 'B', state: state(1, 'ixn1', 0, 'icp') },
    { prefix: 'C', state: null },
  ] as unknown as KelEvaluation[];
  const tips = new Map<string, KelTip>([
    ['A', { prefix: 'A', ...row }],
    ['B', { prefix: 'B', ...row }],
  ]);
  const raised = tipsToRaise(evaluations, tips);
  assert.deepEqual(raised, [{ prefix: 'A', ...recovery }]);
  assert.deepEqual(tips.get('A'), { prefix: 'A', ...recovery });
  assert.deepEqual(tips.get('B'), { prefix: 'B', ...row });
});
