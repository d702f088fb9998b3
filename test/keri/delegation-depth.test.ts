// SPEC §3.5 rule 8 (rev 4), issue 25 item 7: the 4-level delegation bound is counted over the whole
// delegator chain. A delegator whose current copy is refused but whose last accepted state is kept
// is resolved through that state, so it still counts as a level: agents 5 and 6 levels deep stay
// `delegation_too_deep` (before the fix, depth counting stopped at the refused delegator and both
// were accepted). Keys are generated per run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateKels, type KelCache } from '../../src/keri/evaluate.ts';
import type { KelEvaluation, RawKel } from '../../src/keri/types.ts';
import { KelBuilder, generateSigner, signEvent } from '../helpers/kel-builder.ts';

/** root (L0) → L1 → … → L`levels`, each dip anchored by an ixn of its delegator. */
function chain(levels: number): KelBuilder[] {
  const out = [KelBuilder.incept({ signers: [generateSigner()], next: [generateSigner()] })];
  for (let level = 1; level <= levels; level++) {
    const up = out[level - 1]!;
    const b = KelBuilder.incept({ signers: [generateSigner()], next: [generateSigner()], delegator: up.prefix });
    up.interact([b.sealOf(0)]);
    out.push(b);
  }
  return out;
}

function run(kels: RawKel[], cache: KelCache | null): { evaluations: Map<string, KelEvaluation>; cache: KelCache } {
  return evaluateKels(new Map(kels.map((k) => [k.prefix, k])), cache, new Map());
}

/** `b`'s KEL with one more ixn signed by a key that is not its own: the copy is refused (signature_invalid). */
function refusedCopy(b: KelBuilder): RawKel {
  const raw = b.rawKel();
  const ixn = b.interact([]);
  const forged = signEvent(ixn.event, [generateSigner()]);
  return { ...b.rawKel(), attachments: [...raw.attachments, forged], sourceHash: `${raw.sourceHash}-forged` };
}

void test("rule 8: agents 5 and 6 levels deep stay delegation_too_deep when a middle delegator's current copy is refused", () => {
  const c = chain(6);
  const first = run(
    c.map((b) => b.rawKel()),
    null,
  );
  for (let level = 0; level <= 4; level++) assert.equal(first.evaluations.get(c[level]!.prefix)!.status, 'accepted', `level ${level}`);
  for (const level of [5, 6]) {
    const ev = first.evaluations.get(c[level]!.prefix)!;
    assert.equal(ev.reason, 'delegation_too_deep', `level ${level}: ${String(ev.detail)}`);
    assert.equal(ev.state, null);
  }

  // L2's current copy is refused; its last accepted state stays in force (and keeps anchoring L3).
  const second = run(
    c.map((b, level) => (level === 2 ? refusedCopy(b) : b.rawKel())),
    first.cache,
  );
  const l2 = second.evaluations.get(c[2]!.prefix)!;
  assert.equal(l2.status, 'invalid');
  assert.equal(l2.reason, 'signature_invalid');
  assert.notEqual(l2.state, null, 'the last accepted state is kept');
  for (const level of [3, 4]) assert.equal(second.evaluations.get(c[level]!.prefix)!.status, 'accepted', `level ${level}`);
  for (const level of [5, 6]) {
    const ev = second.evaluations.get(c[level]!.prefix)!;
    assert.equal(ev.status, 'invalid', `level ${level} must not be accepted: ${String(ev.detail)}`);
    assert.equal(ev.reason, 'delegation_too_deep', `level ${level}: ${String(ev.detail)}`);
    assert.equal(ev.state, null);
  }
});

void test("rule 8: the agent's direct delegator refused with a kept state still counts: L5 under a refused L4 is too deep", () => {
  const c = chain(5);
  const first = run(
    c.map((b) => b.rawKel()),
    null,
  );
  const second = run(
    c.map((b, level) => (level === 4 ? refusedCopy(b) : b.rawKel())),
    first.cache,
  );
  const l4 = second.evaluations.get(c[4]!.prefix)!;
  assert.equal(l4.reason, 'signature_invalid');
  assert.equal(l4.state!.delegator, c[3]!.prefix);
  const l5 = second.evaluations.get(c[5]!.prefix)!;
  assert.equal(l5.reason, 'delegation_too_deep', String(l5.detail));
  assert.equal(l5.state, null);
});
