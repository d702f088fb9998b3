// SPEC §3.5 rev 4 "Recovery rotations" and §3.6.4's conflict classes (classifyConflict), with
// the keys of research upstream-kel.md §4 B (keripy Salter seeds 00/0…00/3, 11/0…11/2). The
// events are built with the project's authoring code (src/keri/build.ts): no keripy-made recovery
// vector exists (SPEC names derived vectors for these cases).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { registryFromKels } from '../../src/anchor/kel-registry.ts';
import { classifyConflict, type ConflictClass } from '../../src/keri/conflict.ts';
import { evaluateKels, type KelCache } from '../../src/keri/evaluate.ts';
import type { KelTipRef } from '../../src/keri/history.ts';
import type { KelEvaluation, RawKel } from '../../src/keri/types.ts';
import { KelBuilder, ed25519Signer, finalizeEvent, signEvent, type KelSigner } from '../helpers/kel-builder.ts';

const SEEDS: Record<string, string> = {
  '00/0': '50994fccf3045faca2c1f57b688eff2c2ee21d88febdd4086533f4f282db81ad',
  '00/1': '962c0c59597bfd92c56baf8b387600c5d9963a5e85c2c919f9201148111bbe35',
  '00/2': '0cb0376f24a9422c58d4bbf8795e6b19f827bdc3ce62c13473990178ee49dbc9',
  '00/3': 'dc31c7a10aba0a78a3a262109ae1189f571d74ab1df0f55fb7b446973631f1b4',
  '11/0': '03765fb565e4263fefb9136c34ae3aa7156caaa6031ae92423831545b10107e0',
  '11/1': '93b96e29e7d803956dd811e6586ed9de247237e5a613ce4a35d5247a028b16c1',
  '11/2': '0e52d1f2a407f5c4c9ef184b60250595f2fb396aaa6ffe236963716586098dd3',
};
const key = (id: string): KelSigner => ed25519Signer(new Uint8Array(Buffer.from(SEEDS[id]!, 'hex')));

/** icp(00/0; next 00/1): the same inception (same SAID) every time: Ed25519 signatures are deterministic. */
const incept = (): KelBuilder => KelBuilder.incept({ signers: [key('00/0')], next: [key('00/1')] });

function stored(): KelBuilder {
  const b = incept();
  b.interact([{ d: 'ixn1' }]);
  b.interact([{ d: 'ixn2' }]);
  return b;
}

function recovered(): KelBuilder {
  const b = incept();
  b.rotate({ signers: [key('00/1')], next: [key('00/2')] });
  return b;
}

let n = 0;
const raw = (b: KelBuilder): RawKel => ({ ...b.rawKel(), sourceHash: `recovery-${n++}` });

function run(kels: KelBuilder[], cache: KelCache | null, tips: ReadonlyMap<string, KelTipRef>) {
  return evaluateKels(new Map(kels.map((b) => [b.prefix, raw(b)])), cache, tips);
}

const tipOf = (e: KelEvaluation): KelTipRef => ({ s: e.state!.s, d: e.state!.d, estS: e.state!.estS, estD: e.state!.estD });

void test('recovery: [icp, rot@1] (signed by 00/1) over the stored [icp, ixn1, ixn2] is accepted and the row becomes (1, rot, 1, rot)', () => {
  const old = stored();
  const first = run([old], null, new Map());
  const before = first.evaluations.get(old.prefix)!;
  assert.equal(before.status, 'accepted');
  assert.deepEqual(tipOf(before), { s: 2, d: old.tip, estS: 0, estD: old.events[0]!.d });
  const tips = new Map([[old.prefix, tipOf(before)]]);

  const rec = recovered();
  assert.equal(rec.prefix, old.prefix);
  const rot = rec.events[1]!.d as string;
  // With this process's cache, and on a replica that only has the stored row.
  for (const cache of [first.cache, null]) {
    const ev = run([rec], cache, tips).evaluations.get(rec.prefix)!;
    assert.equal(ev.status, 'accepted', String(ev.detail));
    assert.deepEqual(tipOf(ev), { s: 1, d: rot, estS: 1, estD: rot });
    assert.equal(ev.state!.keys[0]!.qb64, key('00/1').key.qb64);
  }
});

void test('after a recovery the old copy is fork; so is a rot@1 by a key never committed; an old row (lower est_s) does not win', () => {
  const old = stored();
  const first = run([old], null, new Map());
  const tips = new Map([[old.prefix, tipOf(first.evaluations.get(old.prefix)!)]]);
  const second = run([recovered()], first.cache, tips);
  const moved = new Map([[old.prefix, tipOf(second.evaluations.get(old.prefix)!)]]);

  const back = run([old], second.cache, moved).evaluations.get(old.prefix)!;
  assert.equal(back.status, 'invalid');
  assert.equal(back.reason, 'fork', String(back.detail));
  assert.equal(back.state!.s, 1, 'the recovered state stays in force');
  // A fresh process with only the moved row: the old copy lacks the row's tip.
  assert.equal(run([old], null, moved).evaluations.get(old.prefix)!.reason, 'fork');

  // Another key's rot@1 (00/3 was never committed): not a recovery, whatever else fails in it.
  const intruder = incept();
  intruder.rotate({ signers: [key('00/3')], next: [key('00/2')] });
  const ev = run([intruder], first.cache, tips).evaluations.get(old.prefix)!;
  assert.equal(ev.status, 'invalid');
  assert.equal(ev.reason, 'fork', String(ev.detail));
  assert.equal(ev.state!.s, 2, 'the stored state stays in force');
  // The current signing key (00/0) cannot recover either: its rot does not expose the committed next key.
  const current = incept();
  current.rotate({ signers: [key('00/0')], next: [key('00/2')] });
  assert.equal(run([current], first.cache, tips).evaluations.get(old.prefix)!.reason, 'fork');
});

void test('a superseding drt in a dip-begun KEL is fork (a drt never supersedes)', () => {
  const root = KelBuilder.incept({ signers: [key('11/0')], next: [key('11/1')] });
  const agentOld = KelBuilder.incept({ signers: [key('00/0')], next: [key('00/1')], delegator: root.prefix });
  root.interact([agentOld.sealOf(0)]);
  agentOld.interact([{ d: 'ixn1' }]);
  agentOld.interact([{ d: 'ixn2' }]);
  const first = run([root, agentOld], null, new Map());
  const before = first.evaluations.get(agentOld.prefix)!;
  assert.equal(before.status, 'accepted', String(before.detail));
  const tips = new Map([[agentOld.prefix, tipOf(before)]]);

  const agentNew = KelBuilder.incept({ signers: [key('00/0')], next: [key('00/1')], delegator: root.prefix });
  agentNew.rotate({ signers: [key('00/1')], next: [key('00/2')] });
  root.interact([agentNew.sealOf(1)]); // even anchored by the delegator
  const ev = run([root, agentNew], first.cache, tips).evaluations.get(agentNew.prefix)!;
  assert.equal(ev.status, 'invalid');
  assert.equal(ev.reason, 'fork', String(ev.detail));
});

void test('a replica on the old state gets registry_behind once the row moved to the recovery (rows ordered by est_s, then s)', () => {
  const old = stored();
  const ev = run([old], null, new Map()).evaluations.get(old.prefix)!;
  const rec = recovered();
  const rot = rec.events[1]!.d as string;
  const id = `did:keri:${old.prefix}`;
  const file = { entries: [{ id, delegates: false, limits: {} }] };
  const views = new Map([[old.prefix, { status: ev.status, state: ev.state, reason: null, detail: null }]]);
  // The row after the recovery: a lower s (1 < 2) but a higher est_s (1 > 0).
  const behind = registryFromKels(file, views, new Map([[old.prefix, { s: 1, d: rot, estS: 1 }]]));
  assert.equal(behind.parties.has(id), false);
  assert.equal(behind.withheld?.get(id)?.reason, 'behind');
  // The row at this state is not behind; nor is a revision-3 row (no est_s) with a lower s.
  assert.equal(registryFromKels(file, views, new Map([[old.prefix, { s: 2, d: old.tip, estS: 0 }]])).parties.has(id), true);
  assert.equal(registryFromKels(file, views, new Map([[old.prefix, { s: 1, d: rot }]])).parties.has(id), true);
});

void test('a recovery never un-revokes; a delegate anchored only in superseded ixns becomes pending', () => {
  const root = KelBuilder.incept({ signers: [key('11/0')], next: [key('11/1')] });
  const revokedAgent = KelBuilder.incept({ signers: [key('00/0')], next: [key('00/1')], delegator: root.prefix });
  const anchoredOnly = KelBuilder.incept({ signers: [key('00/2')], next: [key('00/3')], delegator: root.prefix });
  root.interact([revokedAgent.sealOf(0)]); // s1: anchors revokedAgent's dip
  root.interact([{ d: revokedAgent.prefix }]); // s2: revokes it
  root.interact([anchoredOnly.sealOf(0)]); // s3: anchors anchoredOnly's dip
  const first = run([root, revokedAgent, anchoredOnly], null, new Map());
  assert.equal(first.evaluations.get(revokedAgent.prefix)!.state!.revoked, true);
  assert.equal(first.evaluations.get(anchoredOnly.prefix)!.status, 'accepted');
  const tips = new Map([[root.prefix, tipOf(first.evaluations.get(root.prefix)!)]]);

  // The root recovers at s2: its revocation ixn (s2) and the anchor of anchoredOnly (s3) are superseded.
  const root2 = KelBuilder.incept({ signers: [key('11/0')], next: [key('11/1')] });
  root2.interact([revokedAgent.sealOf(0)]);
  root2.rotate({ signers: [key('11/1')], next: [key('11/2')] });
  const second = run([root2, revokedAgent, anchoredOnly], first.cache, tips).evaluations;
  assert.equal(second.get(root.prefix)!.status, 'accepted', String(second.get(root.prefix)!.detail));
  assert.equal(second.get(root.prefix)!.state!.s, 2);
  const r = second.get(revokedAgent.prefix)!;
  assert.equal(r.state!.revoked, true, 'a revocation once accepted stays');
  const p = second.get(anchoredOnly.prefix)!;
  assert.equal(p.status, 'pending', String(p.detail));
  assert.equal(p.state, null);
});

// classifyConflict (SPEC §3.6.4): the witness role's view of a different event at a held sn.

const input = (b: KelBuilder) => ({ prefix: b.prefix, events: b.events, attachments: b.attachments });
const yAt = (b: KelBuilder, sn: number) => ({ event: b.events[sn]!, attachment: b.attachments[sn]! });
const kind = (c: ConflictClass): string => (c.kind === 'invalid' ? `invalid:${c.reason}` : c.kind);

void test('classifyConflict: recovery, duplicity, stale, kel_recovery_unsupported and invalid', () => {
  const accepted = stored(); // icp, ixn1, ixn2
  const rec = recovered(); // icp, rot@1
  const c = classifyConflict(input(accepted), yAt(rec, 1));
  assert.equal(kind(c), 'recovery');
  assert.equal(c.kind === 'recovery' && c.state.estS, 1);
  assert.equal(c.kind === 'recovery' && c.state.keys[0]!.qb64, key('00/1').key.qb64);

  // A rot at sn 2 (after ixn1) supersedes ixn2 only.
  const rec2 = incept();
  rec2.interact([{ d: 'ixn1' }]);
  rec2.rotate({ signers: [key('00/1')], next: [key('00/2')] });
  assert.equal(kind(classifyConflict(input(accepted), yAt(rec2, 2))), 'recovery');

  // A second valid ixn at sn 2: duplicity.
  const other = incept();
  other.interact([{ d: 'ixn1' }]);
  other.interact([{ d: 'another ixn2' }]);
  assert.equal(kind(classifyConflict(input(accepted), yAt(other, 2))), 'duplicity');

  // Against [icp, ixn1, rot@2]: an ixn at 2 is stale, and so is a rot at 1 (sn ≤ the last establishment event).
  assert.equal(kind(classifyConflict(input(rec2), yAt(other, 2))), 'stale');
  assert.equal(kind(classifyConflict(input(rec2), yAt(rec, 1))), 'stale');
  // rot/rot at the same sn: duplicity.
  const rec2b = incept();
  rec2b.interact([{ d: 'ixn1' }]);
  rec2b.rotate({ signers: [key('00/1')], next: [key('00/3')] });
  assert.equal(kind(classifyConflict(input(rec2), yAt(rec2b, 2))), 'duplicity');

  // Invalid conflicts are never evidence: a wrong signer, a broken chain, beyond the tip, the accepted event itself.
  const forged = incept();
  forged.interact([{ d: 'ixn1' }]);
  forged.interact([{ d: 'forged' }], [key('00/3')]);
  assert.equal(kind(classifyConflict(input(accepted), yAt(forged, 2))), 'invalid:signature_invalid');
  const unchained = finalizeEvent({ ...accepted.events[2]!, p: rec.events[1]!.d, a: [{ d: 'x' }] });
  assert.equal(
    kind(classifyConflict(input(accepted), { event: unchained, attachment: signEvent(unchained, [key('00/0')]) })),
    'invalid:chain_broken',
  );
  const longer = stored();
  longer.interact([{ d: 'ixn3' }]);
  assert.equal(kind(classifyConflict(input(accepted), yAt(longer, 3))), 'invalid:sequence_invalid');
  assert.equal(kind(classifyConflict(input(accepted), yAt(accepted, 2))), 'invalid:said_mismatch');
  assert.equal(kind(classifyConflict(input(accepted), { event: { t: 'nope' }, attachment: '' })), 'invalid:malformed');

  // A delegated KEL: a drt against an ixn, or an ixn against a drt → kel_recovery_unsupported (no delegator check here).
  const delegator = KelBuilder.incept({ signers: [key('11/0')], next: [key('11/1')] }).prefix;
  const dipWithIxn = KelBuilder.incept({ signers: [key('00/0')], next: [key('00/1')], delegator });
  dipWithIxn.interact([{ d: 'ixn1' }]);
  const dipWithDrt = KelBuilder.incept({ signers: [key('00/0')], next: [key('00/1')], delegator });
  dipWithDrt.rotate({ signers: [key('00/1')], next: [key('00/2')] });
  assert.equal(kind(classifyConflict(input(dipWithIxn), yAt(dipWithDrt, 1))), 'kel_recovery_unsupported');
  assert.equal(kind(classifyConflict(input(dipWithDrt), yAt(dipWithIxn, 1))), 'kel_recovery_unsupported');
});
