// SPEC §3.5 "Caching, reload, rollback": incremental verification (only the new suffix of a grown
// KEL is verified, an unchanged source not at all), fork and rollback against the state in force
// and the store's tips, the last accepted state kept on any rejection, delegated KELs following
// their delegator. Verification work is observed through the signature counter and
// `verifiedEvents`, never through timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateKels, type KelCache } from '../../src/keri/evaluate.ts';
import { signatureCounters } from '../../src/keri/signatures.ts';
import type { KelEvaluation, RawKel } from '../../src/keri/types.ts';
import { KelBuilder, kelSet, signEvent, signer as k } from '../helpers/kel-builder.ts';

function grow(b: KelBuilder, count: number): void {
  for (let i = 0; i < count; i++) b.interact([{ d: `E-seal-${b.events.length}` }]);
}

function run(kels: Map<string, RawKel>, cache: KelCache | null, tips = new Map<string, { s: number; d: string }>()) {
  const before = signatureCounters.verified;
  const out = evaluateKels(kels, cache, tips);
  return { ...out, signatures: signatureCounters.verified - before };
}

const one = (r: { evaluations: Map<string, KelEvaluation> }, prefix: string): KelEvaluation => r.evaluations.get(prefix)!;

void test('a grown KEL verifies only its new suffix; an unchanged source is not verified again', () => {
  const b = KelBuilder.incept({ signers: [k('i0')], next: [k('i1')] });
  grow(b, 20);
  const first = run(kelSet(b), null);
  assert.equal(one(first, b.prefix).status, 'accepted');
  assert.equal(one(first, b.prefix).verifiedEvents, 21);
  assert.equal(first.signatures, 21);

  const same = run(kelSet(b), first.cache);
  assert.equal(one(same, b.prefix).verifiedEvents, 0);
  assert.equal(same.signatures, 0);
  assert.equal(one(same, b.prefix).state!.s, 20);

  b.interact([{ d: 'Enew' }]);
  const grown = run(kelSet(b), same.cache);
  assert.equal(one(grown, b.prefix).status, 'accepted');
  assert.equal(one(grown, b.prefix).verifiedEvents, 1);
  assert.equal(grown.signatures, 1);
  assert.equal(one(grown, b.prefix).state!.s, 21);

  // The same bytes served differently (another source hash) are not verified again either.
  const reserialized = { ...b.rawKel(), sourceHash: 'another-hash' };
  const again = run(new Map([[b.prefix, reserialized]]), grown.cache);
  assert.equal(one(again, b.prefix).verifiedEvents, 0);
  assert.equal(again.signatures, 0);

  // A changed attachment of an old event is verified again from that event on.
  const raw = b.rawKel();
  const resigned = {
    ...raw,
    sourceHash: 'resigned',
    attachments: raw.attachments.map((a, j) => (j === 15 ? `-AAC${a.slice(4)}${signEvent(b.events[15]!, [k('i0')]).slice(4)}` : a)),
  };
  const re = run(new Map([[b.prefix, resigned]]), grown.cache);
  assert.equal(one(re, b.prefix).status, 'accepted');
  assert.equal(one(re, b.prefix).verifiedEvents, 22 - 15);
});

void test('fork and rollback are refused and the last accepted state stays in force; the good KEL is accepted again', () => {
  const b = KelBuilder.incept({ signers: [k('f0')], next: [k('f1')] });
  grow(b, 3);
  b.rotate({ signers: [k('f1')], next: [k('f2')] });
  const good = run(kelSet(b), null);
  const state = one(good, b.prefix).state!;
  assert.equal(state.s, 4);

  // Rollback: fewer events.
  const short = { ...b.rawKel(), events: b.events.slice(0, 3), attachments: b.attachments.slice(0, 3), sourceHash: 'short' };
  const rolled = run(new Map([[b.prefix, short]]), good.cache);
  const r = one(rolled, b.prefix);
  assert.equal(r.status, 'invalid');
  assert.equal(r.reason, 'rollback');
  assert.equal(r.seq, 3);
  assert.deepEqual(r.state, state, 'the last accepted state stays in force');

  // Fork: another valid event at s = 4 (a rotation to other keys, properly signed).
  const fork = KelBuilder.incept({ signers: [k('f0')], next: [k('f1')] });
  grow(fork, 3);
  fork.rotate({ signers: [k('f1')], next: [k('other')] });
  assert.equal(fork.prefix, b.prefix);
  assert.equal(one(run(kelSet(fork), null), b.prefix).status, 'accepted', 'the fork is a valid KEL on its own');
  const forked = run(kelSet(fork), rolled.cache);
  const f = one(forked, b.prefix);
  assert.equal(f.reason, 'fork');
  assert.equal(f.seq, 4);
  assert.deepEqual(f.state, state);

  // A longer fork is still a fork.
  grow(fork, 2);
  assert.equal(one(run(kelSet(fork), forked.cache), b.prefix).reason, 'fork');

  // An invalid new event: refused, state kept.
  const bad = { ...b.rawKel(), events: [...b.events, b.events[1]!], attachments: [...b.attachments, b.attachments[1]!], sourceHash: 'bad' };
  const refused = one(run(new Map([[b.prefix, bad]]), forked.cache), b.prefix);
  assert.equal(refused.status, 'invalid');
  assert.equal(refused.reason, 'sequence_invalid');
  assert.deepEqual(refused.state, state);

  // Back to the good KEL, grown by one: accepted, only the new event verified.
  b.interact([]);
  const back = run(kelSet(b), forked.cache);
  assert.equal(one(back, b.prefix).status, 'accepted');
  assert.equal(one(back, b.prefix).state!.s, 5);
  assert.equal(back.signatures, 1);
});

void test('the stored tip (kel_tips): a KEL without it is rollback or fork, even with no cache', () => {
  const b = KelBuilder.incept({ signers: [k('t0')], next: [k('t1')] });
  grow(b, 4);
  const tips = new Map([[b.prefix, { s: 4, d: b.tip }]]);
  assert.equal(one(run(kelSet(b), null, tips), b.prefix).status, 'accepted');
  const old = { ...b.rawKel(), events: b.events.slice(0, 3), attachments: b.attachments.slice(0, 3), sourceHash: 'old' };
  const r = one(run(new Map([[b.prefix, old]]), null, tips), b.prefix);
  assert.equal(r.reason, 'rollback');
  assert.equal(r.state, null, 'no state to keep: the party stays absent');
  const other = KelBuilder.incept({ signers: [k('t0')], next: [k('t1')] });
  grow(other, 3);
  other.interact([{ d: 'Edifferent' }]);
  const f = one(run(kelSet(other), null, tips), b.prefix);
  assert.equal(f.reason, 'fork');
  assert.equal(f.seq, 4);
  // Longer than the tip and containing it: accepted.
  grow(b, 1);
  assert.equal(one(run(kelSet(b), null, tips), b.prefix).status, 'accepted');
});

void test('a delegated KEL follows its delegator: pending → accepted without re-verifying its own events; revocation', () => {
  const root = KelBuilder.incept({ signers: [k('r0')], next: [k('r1')] });
  const agent = KelBuilder.incept({ signers: [k('a0')], next: [k('a1')], delegator: root.prefix });
  root.interact([agent.sealOf(0)]);
  agent.rotate({ signers: [k('a1')], next: [k('a2')] });
  const a = run(kelSet(root, agent), null);
  assert.equal(one(a, agent.prefix).status, 'pending');
  assert.equal(one(a, agent.prefix).state!.keys[0]!.qb64, k('a0').key.qb64);

  root.interact([agent.sealOf(1)]);
  const b = run(kelSet(root, agent), a.cache);
  assert.equal(one(b, agent.prefix).status, 'accepted');
  assert.equal(one(b, agent.prefix).verifiedEvents, 0, "the agent's source is unchanged");
  assert.equal(one(b, agent.prefix).state!.keys[0]!.qb64, k('a1').key.qb64);
  assert.equal(b.signatures, 1, "only the delegator's new ixn");

  // The delegator rolled back (its anchor of the drt hidden): refused, and its state in force still anchors the agent.
  const rootShort = { ...root.rawKel(), events: root.events.slice(0, 2), attachments: root.attachments.slice(0, 2), sourceHash: 'short' };
  const c = run(
    new Map([
      [root.prefix, rootShort],
      [agent.prefix, agent.rawKel()],
    ]),
    b.cache,
  );
  assert.equal(one(c, root.prefix).reason, 'rollback');
  assert.equal(one(c, agent.prefix).status, 'accepted');
  assert.equal(one(c, agent.prefix).state!.s, 1);

  // Revocation, then the delegator's KEL removed: the agent is refused, its kept state stays revoked.
  root.interact([{ d: agent.prefix }]);
  const d = run(kelSet(root, agent), c.cache);
  assert.equal(one(d, agent.prefix).state!.revoked, true);
  const e = run(kelSet(agent), d.cache);
  assert.equal(one(e, agent.prefix).reason, 'delegator_missing');
  assert.equal(one(e, agent.prefix).state!.revoked, true);
  assert.equal(e.evaluations.has(root.prefix), false, 'a removed KEL has no evaluation');
  assert.equal(e.cache.entries.has(root.prefix), false, 'and leaves the cache');
});

void test('an evaluation does not change the cache it was given', () => {
  const b = KelBuilder.incept({ signers: [k('c0')], next: [k('c1')] });
  grow(b, 2);
  const first = run(kelSet(b), null);
  const before = one(run(kelSet(b), first.cache), b.prefix);
  const short = { ...b.rawKel(), events: b.events.slice(0, 1), attachments: b.attachments.slice(0, 1), sourceHash: 's' };
  run(new Map([[b.prefix, short]]), first.cache);
  grow(b, 1);
  run(kelSet(b), first.cache);
  const after = one(run(kelSet(b), first.cache), b.prefix);
  assert.equal(before.state!.s, 2);
  assert.equal(after.state!.s, 3);
  assert.equal(one(run(new Map([[b.prefix, short]]), first.cache), b.prefix).reason, 'rollback');
});
