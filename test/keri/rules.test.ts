// SPEC §3.5 verification rules 1–8, one refusal per reason, on KELs made with real keys by the
// test builder (test/helpers/kel-builder.ts), plus the order in which reasons win.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateKels } from '../../src/keri/evaluate.ts';
import { KEL_REASONS } from '../../src/keri/errors.ts';
import { signatureCounters } from '../../src/keri/signatures.ts';
import type { KelEvaluation, RawKel } from '../../src/keri/types.ts';
import { KelBuilder, commitmentTo, finalizeEvent, signEvent, signer, type KelSigner } from '../helpers/kel-builder.ts';

let n = 0;
function rawOf(prefix: string, events: Record<string, unknown>[], attachments: string[]): RawKel {
  return { prefix, events, attachments, bytes: 0, sourceHash: `rules-${n++}`, source: 'test' };
}

function evaluate(...kels: RawKel[]): Map<string, KelEvaluation> {
  return evaluateKels(new Map(kels.map((k) => [k.prefix, k])), null, new Map()).evaluations;
}

/** The KEL of `b` with event `seq` replaced by `members` (re-SAIDed, re-signed by `signers`); later events dropped. */
function replaced(b: KelBuilder, seq: number, members: Record<string, unknown>, signers: readonly KelSigner[], resaid = true): RawKel {
  const base = { ...b.events[seq]!, ...members };
  const event = resaid ? finalizeEvent(base) : base;
  const attachment = signEvent(event, signers);
  return rawOf(b.prefix, [...b.events.slice(0, seq), event], [...b.attachments.slice(0, seq), attachment]);
}

function refused(kel: RawKel, reason: string, seq: number | null, ...others: RawKel[]): KelEvaluation {
  const ev = evaluate(kel, ...others).get(kel.prefix)!;
  assert.equal(ev.status, 'invalid', `expected ${reason}, got ${ev.status}`);
  assert.equal(ev.reason, reason, String(ev.detail));
  assert.equal(ev.seq, seq, `${reason}: ${String(ev.detail)}`);
  assert.equal(ev.state, null);
  return ev;
}

const k = (label: string, curve: 'ed25519' | 'p256' = 'ed25519'): KelSigner => signer(label, curve);

/** icp(a0; next a1) → ixn → rot(a1; next a2). */
function simpleKel(tag = 'a'): KelBuilder {
  const b = KelBuilder.incept({ signers: [k(`${tag}0`)], next: [k(`${tag}1`)] });
  b.interact([{ d: 'EAnything' }]);
  b.rotate({ signers: [k(`${tag}1`)], next: [k(`${tag}2`)] });
  return b;
}

void test('a well-formed KEL (Ed25519 and P-256 keys, multi-key thresholds, backers) is accepted with its state', () => {
  const b = KelBuilder.incept({
    signers: [k('m0'), k('m1', 'p256'), k('m2')],
    next: [k('n0', 'p256'), k('n1'), k('n2')],
    kt: 2,
    nt: 2,
    backers: [k('w0').key.qb64.replace(/^D/, 'B')],
    bt: 1,
  });
  b.interact([{ i: b.prefix, s: '0', d: b.tip }]);
  b.rotate({ signers: [k('n1'), k('n0', 'p256')], next: [k('o0')], kt: 1, add: [k('w1').key.qb64.replace(/^D/, 'B')], bt: 2 });
  const ev = evaluate(b.rawKel()).get(b.prefix)!;
  assert.equal(ev.status, 'accepted', String(ev.detail));
  assert.equal(ev.state!.s, 2);
  assert.deepEqual(
    ev.state!.keys.map((x) => x.curve),
    ['ed25519', 'p256'],
  );
  assert.equal(ev.state!.kt, 1);
  assert.deepEqual(ev.state!.n, [commitmentTo(k('o0'))]);
  assert.equal(ev.reason, null);
});

void test('rule 1: oversize and malformed sources and events', () => {
  const b = simpleKel();
  const good = b.rawKel();
  refused({ ...good, attachments: good.attachments.slice(1) }, 'malformed', null);
  refused({ ...good, events: [], attachments: [] }, 'malformed', null);
  const ev0 = b.events[0]!;
  refused({ ...good, events: [{ ...ev0, x: 'legacy' }, ...good.events.slice(1)] }, 'malformed', 0);
  const noA = Object.fromEntries(Object.entries(ev0).filter(([m]) => m !== 'a'));
  refused({ ...good, events: [noA, ...good.events.slice(1)] }, 'malformed', 0);
  refused({ ...good, events: [{ ...ev0, s: 0 }, ...good.events.slice(1)] }, 'malformed', 0);
  refused({ ...good, events: [{ ...ev0, s: '00' }, ...good.events.slice(1)] }, 'malformed', 0);
  refused({ ...good, events: [{ ...ev0, k: ['Dw' + (ev0.k as string[])[0]!.slice(2)] }, ...good.events.slice(1)] }, 'malformed', 0);
  refused({ ...good, events: [{ ...ev0, c: ['XX'] }, ...good.events.slice(1)] }, 'malformed', 0);
  refused({ ...good, events: [{ ...ev0, a: [{ i: b.prefix, x: '0' }] }, ...good.events.slice(1)] }, 'malformed', 0);
  refused({ ...good, events: [{ ...ev0, a: [{ d: 'quote"' }] }, ...good.events.slice(1)] }, 'malformed', 0);
  refused({ ...good, events: [{ ...ev0, t: 'vrc' }, ...good.events.slice(1)] }, 'malformed', 0);
  refused({ ...good, attachments: [good.attachments[0]! + 'X', ...good.attachments.slice(1)] }, 'malformed', 0);
  refused({ ...good, attachments: ['-B' + good.attachments[0]!.slice(2), ...good.attachments.slice(1)] }, 'malformed', 0);
  // A -G couple on an ixn.
  refused(
    { ...good, attachments: [good.attachments[0]!, good.attachments[1]! + '-GAB0AAAAAAAAAAAAAAAAAAAAAAB' + b.tip, good.attachments[2]!] },
    'malformed',
    1,
  );
  // More than 64 KiB in one event (256 seals of 300 characters).
  const big = { ...b.events[1]!, a: Array.from({ length: 256 }, () => ({ d: 'x'.repeat(300) })) };
  refused(rawOf(b.prefix, [ev0, big], [good.attachments[0]!, good.attachments[1]!]), 'malformed', 1);
  // A source the reader could not take apart carries its defect.
  refused({ ...good, defect: { reason: 'oversize', detail: 'too big' } }, 'oversize', null);
});

void test('rule 2: version, SAID, sequence, prefix, chain, second inception', () => {
  const b = simpleKel();
  const ixn = b.events[1]!;
  refused(replaced(b, 1, { v: 'KERI10JSON000001_' }, [k('a0')], false), 'version_mismatch', 1);
  refused(replaced(b, 1, { a: [{ d: 'EAnythinG' }] }, [k('a0')], false), 'said_mismatch', 1);
  refused(replaced(b, 1, { s: '2' }, [k('a0')]), 'sequence_invalid', 1);
  refused(replaced(b, 1, { i: simpleKel('z').prefix }, [k('a0')]), 'prefix_mismatch', 1);
  refused(replaced(b, 1, { p: ixn.d }, [k('a0')]), 'chain_broken', 1);
  const dup = finalizeEvent({ ...b.events[0]!, s: '1', i: b.prefix });
  refused(rawOf(b.prefix, [b.events[0]!, dup], [b.attachments[0]!, signEvent(dup, [k('a0')])]), 'multiple_inceptions', 1);
  // The KEL's prefix (file stem / ref) must be every event's i.
  refused({ ...b.rawKel(), prefix: simpleKel('y').prefix }, 'prefix_mismatch', 0);
});

void test('rule 3: inception and self-certifying prefix', () => {
  const b = simpleKel();
  // A KEL that begins with its ixn (s = 0, i = the prefix).
  const ixn = finalizeEvent({ ...b.events[1]!, s: '0' });
  refused(rawOf(b.prefix, [ixn], [signEvent(ixn, [k('a0')])]), 'not_inception', 0);
  // i is another E… value: the SAID (which hashes a placeholder for i) still matches, the prefix does not.
  const other = simpleKel('q').prefix;
  const icp = { ...b.events[0]!, i: other };
  refused(rawOf(other, [icp], [b.attachments[0]!]), 'prefix_invalid', 0);
  // Basic prefixes: i must be the only key; B (non-transferable) needs n = [].
  const basic = KelBuilder.incept({ signers: [k('b0')], next: [k('b1')], basic: true });
  assert.equal(evaluate(basic.rawKel()).get(basic.prefix)!.status, 'accepted');
  const two = finalizeEvent({ ...basic.events[0]!, k: [k('b0').key.qb64, k('b2').key.qb64], kt: '1' });
  refused(rawOf(basic.prefix, [two], [signEvent(two, [k('b0'), k('b2')])]), 'prefix_invalid', 0);
  const nonTransferable = { ...k('b0'), key: { ...k('b0').key, qb64: k('b0').key.qb64.replace(/^D/, 'B') } };
  const bn = finalizeEvent({ ...basic.events[0]!, i: nonTransferable.key.qb64, k: [nonTransferable.key.qb64] });
  refused(rawOf(nonTransferable.key.qb64, [bn], [signEvent(bn, [nonTransferable])]), 'prefix_invalid', 0);
  const root = simpleKel('r');
  const basicDip = finalizeEvent({ ...basic.events[0]!, t: 'dip', di: root.prefix });
  refused(rawOf(basic.prefix, [basicDip], [signEvent(basicDip, [k('b0')])]), 'prefix_invalid', 0, root.rawKel());
});

void test('rule 4: thresholds, duplicate keys, backers', () => {
  const inc = (members: Record<string, unknown>, signers: KelSigner[] = [k('t0')]): RawKel => {
    const e = finalizeEvent({
      t: 'icp',
      s: '0',
      kt: '1',
      k: [k('t0').key.qb64],
      nt: '1',
      n: [commitmentTo(k('t1'))],
      bt: '0',
      b: [],
      c: [],
      a: [],
      ...members,
    });
    return rawOf(e.i as string, [e], [signEvent(e, signers)]);
  };
  refused(inc({ kt: '0' }), 'threshold_invalid', 0);
  refused(inc({ kt: '2' }), 'threshold_invalid', 0);
  refused(inc({ kt: ['1/2', '1/2'] }), 'threshold_invalid', 0);
  refused(inc({ nt: '2' }), 'threshold_invalid', 0);
  refused(inc({ nt: '0' }), 'threshold_invalid', 0);
  refused(inc({ n: [], nt: '1' }), 'threshold_invalid', 0);
  refused(inc({ k: [k('t0').key.qb64, k('t0').key.qb64] }, [k('t0'), k('t0')]), 'threshold_invalid', 0);
  refused(inc({ bt: '1' }), 'threshold_invalid', 0);
  const w = k('w0').key.qb64.replace(/^D/, 'B');
  refused(inc({ b: [w, w], bt: '1' }), 'threshold_invalid', 0);
  refused(inc({ b: [w], bt: '2' }), 'threshold_invalid', 0);
  // A rotation may only cut current backers and add new ones.
  const b = KelBuilder.incept({ signers: [k('u0')], next: [k('u1')], backers: [w] });
  b.rotate({ signers: [k('u1')], next: [k('u2')], cut: [k('w9').key.qb64.replace(/^D/, 'B')], bt: 1 });
  refused(b.rawKel(), 'threshold_invalid', 1);
  const c = KelBuilder.incept({ signers: [k('u0')], next: [k('u1')], backers: [w] });
  c.rotate({ signers: [k('u1')], next: [k('u2')], add: [w], bt: 1 });
  refused(c.rawKel(), 'threshold_invalid', 1);
});

void test('rule 5: signatures must reach kt under the right keys', () => {
  const b = simpleKel();
  refused(replaced(b, 1, {}, [k('intruder')]), 'signature_invalid', 1);
  refused({ ...b.rawKel(), attachments: ['-AAA', ...b.attachments.slice(1)] }, 'signature_invalid', 0);
  refused({ ...b.rawKel(), attachments: ['', ...b.attachments.slice(1)] }, 'signature_invalid', 0);
  // The same signature twice at one index counts once.
  const m = KelBuilder.incept({ signers: [k('s0'), k('s1')], next: [k('s2')], kt: 2 });
  const one = signEvent(m.events[0]!, [k('s0')]);
  const twice = `-AAC${one.slice(4)}${one.slice(4)}`;
  refused({ ...m.rawKel(), attachments: [twice] }, 'signature_invalid', 0);
  // A signature by the right key at an index beyond the keys refuses the event (keripy).
  const shifted = signEvent(m.events[0]!, [k('s0'), k('s0'), k('s1')]);
  refused({ ...m.rawKel(), attachments: [`-AAB${shifted.slice(4 + 88 * 2)}`] }, 'signature_invalid', 0);
});

void test('rule 6: a rotation must reveal the prior next keys (prior nt)', () => {
  const b = KelBuilder.incept({ signers: [k('p0')], next: [k('p1')] });
  b.rotate({ signers: [k('other')], next: [k('p2')] });
  refused(b.rawKel(), 'prior_next_unmet', 1);
  // Current-only codes (B) reveal nothing.
  const c = KelBuilder.incept({ signers: [k('p0')], next: [k('p1')] });
  const rot = c.rotate({ signers: [k('p1')], next: [k('p2')] });
  const currentOnly = signEvent(rot.event, [k('p1')], { ondex: [null] });
  assert.ok(currentOnly.startsWith('-AABB'));
  refused({ ...c.rawKel(), attachments: [c.attachments[0]!, currentOnly] }, 'prior_next_unmet', 1);
  // 2 of 3 committed keys with nt 2: one revealed is not enough.
  const d = KelBuilder.incept({ signers: [k('p0')], next: [k('q0'), k('q1'), k('q2')], nt: 2 });
  d.rotate({ signers: [k('q1'), k('new')], next: [k('q3')], kt: 1 });
  refused(d.rawKel(), 'prior_next_unmet', 1);
  const e = KelBuilder.incept({ signers: [k('p0')], next: [k('q0'), k('q1'), k('q2')], nt: 2 });
  e.rotate({ signers: [k('q2'), k('q0')], next: [k('q3')], kt: 1 });
  assert.equal(evaluate(e.rawKel()).get(e.prefix)!.status, 'accepted');
});

void test('rule 7: non-transferable, abandoned, establishment-only, rotation types', () => {
  const nt = KelBuilder.incept({ signers: [k('v0')], next: [] });
  nt.interact([]);
  refused(nt.rawKel(), 'non_transferable', 1);

  const ab = KelBuilder.incept({ signers: [k('v0')], next: [k('v1')] });
  ab.rotate({ signers: [k('v1')], next: [] });
  const abandoned = evaluate(ab.rawKel()).get(ab.prefix)!;
  assert.equal(abandoned.status, 'accepted');
  assert.equal(abandoned.state!.abandoned, true);
  ab.interact([], [k('v1')]);
  refused(ab.rawKel(), 'abandoned', 2);

  const eo = KelBuilder.incept({ signers: [k('v0')], next: [k('v1')], config: ['EO'] });
  eo.rotate({ signers: [k('v1')], next: [k('v2')] });
  assert.equal(evaluate(eo.rawKel()).get(eo.prefix)!.status, 'accepted');
  eo.interact([]);
  refused(eo.rawKel(), 'establishment_only', 2);

  // drt in a KEL begun by icp.
  const plain = KelBuilder.incept({ signers: [k('v0')], next: [k('v1')] });
  const rot = plain.rotate({ signers: [k('v1')], next: [k('v2')] });
  const drt = finalizeEvent({ ...rot.event, t: 'drt' });
  refused(rawOf(plain.prefix, [plain.events[0]!, drt], [plain.attachments[0]!, signEvent(drt, [k('v1')])]), 'rotation_type_invalid', 1);

  // rot in a delegated KEL; a drt whose di is not the dip's.
  const root = simpleKel('root');
  const agent = KelBuilder.incept({ signers: [k('g0')], next: [k('g1')], delegator: root.prefix });
  root.interact([agent.sealOf(0)]);
  const drt2 = agent.rotate({ signers: [k('g1')], next: [k('g2')] });
  root.interact([agent.sealOf(1)]);
  assert.equal(evaluate(root.rawKel(), agent.rawKel()).get(agent.prefix)!.status, 'accepted');
  const asRot = finalizeEvent({ ...drt2.event, t: 'rot' });
  refused(
    rawOf(agent.prefix, [agent.events[0]!, asRot], [agent.attachments[0]!, signEvent(asRot, [k('g1')])]),
    'rotation_type_invalid',
    1,
    root.rawKel(),
  );
  const wrongDi = finalizeEvent({ ...drt2.event, di: simpleKel('elsewhere').prefix });
  refused(
    rawOf(agent.prefix, [agent.events[0]!, wrongDi], [agent.attachments[0]!, signEvent(wrongDi, [k('g1')])]),
    'rotation_type_invalid',
    1,
    root.rawKel(),
  );
  const rightDi = finalizeEvent({ ...drt2.event, di: root.prefix });
  assert.equal(
    evaluate(root.rawKel(), rawOf(agent.prefix, [agent.events[0]!, rightDi], [agent.attachments[0]!, signEvent(rightDi, [k('g1')])])).get(
      agent.prefix,
    )!.status,
    'pending',
    'the upstream form (with di) is accepted, pending its own anchor',
  );
});

void test('rule 8: delegator missing, invalid, DND, too deep; a chain of 4 levels is accepted', () => {
  const root = simpleKel('root');
  const agent = KelBuilder.incept({ signers: [k('g0')], next: [k('g1')], delegator: root.prefix });
  root.interact([agent.sealOf(0)]);
  refused(agent.rawKel(), 'delegator_missing', 0);
  const brokenRoot = { ...root.rawKel(), attachments: ['', ...root.attachments.slice(1)] };
  refused(agent.rawKel(), 'delegator_invalid', 0, brokenRoot);

  const dnd = KelBuilder.incept({ signers: [k('d0')], next: [k('d1')], config: ['DND'] });
  const a2 = KelBuilder.incept({ signers: [k('g0')], next: [k('g1')], delegator: dnd.prefix });
  dnd.interact([a2.sealOf(0)]);
  refused(a2.rawKel(), 'delegator_dnd', 0, dnd.rawKel());

  // root → L1 → L2 → L3 → L4 accepted (4 levels); L5 is too deep.
  const chain: KelBuilder[] = [KelBuilder.incept({ signers: [k('c0')], next: [k('c0n')] })];
  for (let level = 1; level <= 5; level++) {
    const up = chain[level - 1]!;
    const b = KelBuilder.incept({ signers: [k(`c${level}`)], next: [k(`c${level}n`)], delegator: up.prefix });
    up.interact([b.sealOf(0)]);
    chain.push(b);
  }
  const out = evaluate(...chain.map((b) => b.rawKel()));
  for (let level = 0; level <= 4; level++)
    assert.equal(out.get(chain[level]!.prefix)!.status, 'accepted', `level ${level}: ${String(out.get(chain[level]!.prefix)!.detail)}`);
  const deep = out.get(chain[5]!.prefix)!;
  assert.equal(deep.reason, 'delegation_too_deep');
  assert.equal(deep.state, null);
});

void test('rule 8: an unanchored dip is pending without state; an anchor in a rot counts; a seal for another s does not', () => {
  const root = KelBuilder.incept({ signers: [k('r0')], next: [k('r1')] });
  const agent = KelBuilder.incept({ signers: [k('g0')], next: [k('g1')], delegator: root.prefix });
  let out = evaluate(root.rawKel(), agent.rawKel());
  assert.equal(out.get(agent.prefix)!.status, 'pending');
  assert.equal(out.get(agent.prefix)!.state, null);
  root.interact([{ i: agent.prefix, s: '1', d: agent.tip }]);
  out = evaluate(root.rawKel(), agent.rawKel());
  assert.equal(out.get(agent.prefix)!.status, 'pending');
  root.rotate({ signers: [k('r1')], next: [k('r2')], seals: [agent.sealOf(0)] });
  out = evaluate(root.rawKel(), agent.rawKel());
  assert.equal(out.get(agent.prefix)!.status, 'accepted');
  assert.equal(out.get(agent.prefix)!.state!.delegator, root.prefix);
  // A revocation seal in an ixn of the root.
  root.interact([{ d: agent.prefix }], [k('r1')]);
  assert.equal(evaluate(root.rawKel(), agent.rawKel()).get(agent.prefix)!.state!.revoked, true);
});

void test('reasons are reported in rule order, then by sequence number', () => {
  const b = simpleKel();
  // Event 1's signature is bad (rule 5), event 2's SAID is bad (rule 2): rule 2 wins.
  const badSig = signEvent(b.events[1]!, [k('intruder')]);
  const badSaid = { ...b.events[2]!, n: [commitmentTo(k('elsewhere'))] };
  refused(rawOf(b.prefix, [b.events[0]!, b.events[1]!, badSaid], [b.attachments[0]!, badSig, b.attachments[2]!]), 'said_mismatch', 2);
  // Rule 7 at event 1 (ixn after a non-transferable icp) and rule 5 at event 2: rule 5 wins.
  const nt = KelBuilder.incept({ signers: [k('v0')], next: [] });
  nt.interact([]);
  nt.interact([]);
  refused(
    { ...nt.rawKel(), attachments: [nt.attachments[0]!, nt.attachments[1]!, signEvent(nt.events[2]!, [k('intruder')])] },
    'signature_invalid',
    2,
  );
  // Two signature failures: the lower sequence number.
  refused({ ...b.rawKel(), attachments: [b.attachments[0]!, badSig, signEvent(b.events[2]!, [k('intruder')])] }, 'signature_invalid', 1);
});

void test('every reason of the closed union is produced by a test of this suite or the vectors', () => {
  // Kept honest by hand: the list must match KEL_REASONS exactly.
  assert.deepEqual([...KEL_REASONS].sort(), [
    'abandoned',
    'chain_broken',
    'delegation_too_deep',
    'delegator_dnd',
    'delegator_invalid',
    'delegator_missing',
    'establishment_only',
    'fork',
    'malformed',
    'multiple_inceptions',
    'non_transferable',
    'not_inception',
    'oversize',
    'prefix_invalid',
    'prefix_mismatch',
    'prior_next_unmet',
    'rollback',
    'rotation_type_invalid',
    'said_mismatch',
    'sequence_invalid',
    'signature_invalid',
    'source_error',
    'source_seal_mismatch',
    'threshold_invalid',
    'version_mismatch',
  ]);
});

void test('hostile signature lists: more than 2 per key is malformed before any verification; nothing verified after a decided failure', () => {
  const b = KelBuilder.incept({ signers: [k('x0')], next: [k('x1')] });
  for (let i = 0; i < 5; i++) b.interact([]);
  const good = b.rawKel();
  // 200 copies of a bad signature at index 0, then the good one: malformed (rule 1), nothing verified.
  const bad = signEvent(b.events[1]!, [k('intruder')]).slice(4);
  const real = b.attachments[1]!.slice(4);
  let before = signatureCounters.verified;
  refused({ ...good, attachments: [good.attachments[0]!, `-ADJ${bad.repeat(200)}${real}`, ...good.attachments.slice(2)] }, 'malformed', 1);
  assert.equal(signatureCounters.verified - before, 0);
  // Within the bound, a bad signature then the good one at the same index counts (keripy).
  assert.equal(
    evaluate({ ...good, attachments: [good.attachments[0]!, `-AAC${bad}${real}`, ...good.attachments.slice(2)] }).get(b.prefix)!.status,
    'accepted',
  );
  // Event 1 carries only a bad signature: events 0 and 1 are verified once each; events 2–5 not at
  // all (their rules 5 and 6 lose to event 1's).
  before = signatureCounters.verified;
  const ev = refused(
    { ...good, attachments: [good.attachments[0]!, `-AAC${bad}${bad}`, ...good.attachments.slice(2)] },
    'signature_invalid',
    1,
  );
  assert.match(String(ev.detail), /^0 /);
  assert.equal(signatureCounters.verified - before, 1 + 2);
  before = signatureCounters.verified;
  assert.equal(evaluate(good).get(b.prefix)!.status, 'accepted');
  assert.equal(signatureCounters.verified - before, 6);
});

void test("rule 8: only the delegator's ACCEPTED events anchor: a seal after the delegator's own pending drt does not count yet", () => {
  const top = KelBuilder.incept({ signers: [k('top0')], next: [k('top1')] });
  const mid = KelBuilder.incept({ signers: [k('mid0')], next: [k('mid1')], delegator: top.prefix });
  top.interact([mid.sealOf(0)]);
  mid.rotate({ signers: [k('mid1')], next: [k('mid2')] }); // mid's drt, not yet anchored by top
  const agent = KelBuilder.incept({ signers: [k('ag0')], next: [k('ag1')], delegator: mid.prefix });
  mid.interact([agent.sealOf(0)]); // signed by mid's new key, after the pending drt
  let out = evaluate(top.rawKel(), mid.rawKel(), agent.rawKel());
  assert.equal(out.get(mid.prefix)!.status, 'pending');
  assert.equal(out.get(mid.prefix)!.state!.s, 0);
  assert.equal(out.get(agent.prefix)!.status, 'pending', String(out.get(agent.prefix)!.detail));
  assert.equal(out.get(agent.prefix)!.state, null);
  top.interact([mid.sealOf(1)]);
  out = evaluate(top.rawKel(), mid.rawKel(), agent.rawKel());
  assert.equal(out.get(mid.prefix)!.status, 'accepted');
  assert.equal(out.get(agent.prefix)!.status, 'accepted');
  assert.equal(out.get(agent.prefix)!.state!.delegator, mid.prefix);
});
