// Known-answer vectors of research/upstream-kel.md §4 (SPEC §3.5: "tests must use its vectors:
// every fixture KEL accepted with the stated key state, every tampered copy refused with the
// stated reason"). The fixtures are keripy 1.3.4 output from auths-dev/auths at 53313e20
// (test/keri/vectors/upstream-kel.json); B3 (drt, ixn2, ixn3) and the delegator's signatures were
// derived in the research note and are re-derived here from the keripy seeds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createECDH } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifyP256 } from '../../src/crypto/p256.ts';
import { encodeAttachment, parseAttachment } from '../../src/keri/attachments.ts';
import { ed25519Signer, finalizeEvent, signEvent } from '../../src/keri/build.ts';
import { evaluateKels } from '../../src/keri/evaluate.ts';
import { computeSaid, parseEvent } from '../../src/keri/event.ts';
import { decodeQb64, encodeQb64 } from '../../src/keri/qb64.ts';
import { keyCommitment } from '../../src/keri/said.ts';
import type { KelEvaluation, RawKel } from '../../src/keri/types.ts';

interface Vectors {
  conformance: Record<
    'kel-ed25519' | 'kel-p256',
    { events: Record<string, unknown>[]; key_hex: string; curve: string; private_scalar_hex?: string; attachment_low_s?: string }
  >;
  qb64: Record<string, string>;
  seeds: Record<string, { seed: string; key: string }>;
  rot_remove: Record<'icp' | 'icp_att' | 'rot' | 'rot_att', string> & {
    expected: { s: number; d: string; kt: number; keys_hex: string[]; n: string[]; nt: number };
  };
  delegation: Record<
    'delegator_icp' | 'delegator_icp_att' | 'delegator_ixn' | 'delegator_ixn_att' | 'dip' | 'dip_att' | 'gsrc_att',
    string
  > & {
    meta: { delegator_pre: string; dip_pre: string; dip_said: string; anchor_sn: number; anchor_said: string };
    expected: {
      delegator: { s: number; key: string; key_hex_prefix: string; key_hex_suffix: string };
      agent: { s: number; key: string; key_hex: string };
    };
  };
  continuation: Record<
    'drt' | 'drt_att' | 'ixn2' | 'ixn2_att' | 'ixn3' | 'ixn3_att' | 'expected_key_after_drt' | 'expected_key_hex_after_drt',
    string
  >;
  basic_prefix_icp: { event: string; size: number };
}

const V = JSON.parse(readFileSync(join(import.meta.dirname, 'vectors', 'upstream-kel.json'), 'utf8')) as Vectors;
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

let counter = 0;
function raw(prefix: string, events: (string | Record<string, unknown>)[], attachments: string[]): RawKel {
  return {
    prefix,
    events: events.map((e) => (typeof e === 'string' ? (JSON.parse(e) as unknown) : e)),
    attachments,
    bytes: 0,
    sourceHash: `vector-${counter++}`,
    source: 'test',
  };
}

function evaluate(...kels: RawKel[]): Map<string, KelEvaluation> {
  return evaluateKels(new Map(kels.map((k) => [k.prefix, k])), null, new Map()).evaluations;
}

function only(kel: RawKel): KelEvaluation {
  return evaluate(kel).get(kel.prefix)!;
}

const R = V.delegation.meta.delegator_pre;
const A = V.delegation.meta.dip_pre;
const delegatorKel = (...more: [string, string][]): RawKel =>
  raw(
    R,
    [V.delegation.delegator_icp, V.delegation.delegator_ixn, ...more.map((m) => m[0])],
    [V.delegation.delegator_icp_att, V.delegation.delegator_ixn_att, ...more.map((m) => m[1])],
  );

void test('qb64 vectors: Ed25519 key, its commitment, the P-256 key, a Seqner (research §1.4, §1.5)', () => {
  const raw32 = Buffer.from(V.qb64.ed25519_raw_hex!, 'hex');
  assert.equal(encodeQb64('D', raw32), V.qb64.ed25519_qb64);
  assert.equal(keyCommitment(V.qb64.ed25519_qb64!), V.qb64.ed25519_commitment);
  const p = decodeQb64(V.qb64.p256_qb64!, ['1AAJ']);
  assert.ok(p !== null);
  assert.equal(hex(p.raw), V.qb64.p256_raw_hex);
  assert.equal(encodeQb64('1AAJ', p.raw), V.qb64.p256_qb64);
  const one = new Uint8Array(16);
  one[15] = 1;
  assert.equal(encodeQb64('0A', one), V.qb64.seqner_1);
  // The two pad bits after a 1-character code must be zero: 'w' (110000) sets them, 'P' (001111) does not.
  assert.equal(decodeQb64('Dw' + V.qb64.ed25519_qb64!.slice(2), ['D']), null);
  assert.equal(decodeQb64('DP' + V.qb64.ed25519_qb64!.slice(2), ['D'])?.raw[0], 0xf0);
});

void test('keripy seeds reproduce the listed public keys (research §4.B table)', () => {
  for (const [label, { seed, key }] of Object.entries(V.seeds)) {
    assert.equal(ed25519Signer(Buffer.from(seed, 'hex')).key.qb64, key, label);
  }
});

void test('A. conformance fixtures: SAID and v reproduce from sorted-key JSON (canonical re-serialization)', () => {
  for (const name of ['kel-ed25519', 'kel-p256'] as const) {
    const fixture = V.conformance[name];
    const e = parseEvent(fixture.events[0]);
    assert.equal(computeSaid(e), fixture.events[0]!.d, name);
    assert.equal(e.expectedVersion, fixture.events[0]!.v, name);
    assert.equal(hex(e.keys[0]!.raw), fixture.key_hex, name);
    assert.equal(e.keys[0]!.curve, fixture.curve, name);
  }
});

void test('A. kel-ed25519 (unsigned) passes its SAID check but is refused as a KEL: signature_invalid', () => {
  const fixture = V.conformance['kel-ed25519'];
  const prefix = fixture.events[0]!.i as string;
  const ev = only(raw(prefix, fixture.events, ['']));
  assert.equal(ev.status, 'invalid');
  assert.equal(ev.reason, 'signature_invalid');
  assert.equal(ev.seq, 0);
  assert.equal(ev.state, null);
});

void test('A. kel-p256: the private scalar gives the key; the low-S signature and its high-S twin both verify', () => {
  const fixture = V.conformance['kel-p256'];
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(Buffer.from(fixture.private_scalar_hex!, 'hex'));
  assert.equal(ecdh.getPublicKey('hex', 'compressed'), fixture.key_hex);

  const prefix = fixture.events[0]!.i as string;
  const low = only(raw(prefix, fixture.events, [fixture.attachment_low_s!]));
  assert.equal(low.status, 'accepted', String(low.detail));
  assert.equal(low.state!.s, 0);
  assert.equal(low.state!.keys[0]!.curve, 'p256');
  assert.equal(hex(low.state!.keys[0]!.raw), fixture.key_hex);
  assert.equal(low.state!.transferable, false);

  const att = parseAttachment(fixture.attachment_low_s!);
  const sig = att.signatures[0]!.signature;
  const s = BigInt('0x' + hex(sig.subarray(32)));
  assert.ok(s <= P256_N >> 1n, 'the vector is low S');
  const twin = new Uint8Array(sig);
  twin.set(Buffer.from((P256_N - s).toString(16).padStart(64, '0'), 'hex'), 32);
  const highAttachment = encodeAttachment({ signatures: [{ ...att.signatures[0]!, signature: twin }], sourceSeals: [] });
  const bytes = parseEvent(fixture.events[0]).bytes;
  assert.equal(verifyP256(Buffer.from(fixture.key_hex, 'hex'), bytes, twin), false, 'the strict verifier refuses high S');
  const high = only(raw(prefix, fixture.events, [highAttachment]));
  assert.equal(high.status, 'accepted', String(high.detail));
  assert.equal(high.state!.d, low.state!.d);

  // The same signature under upstream's Ed25519 code `A` still verifies (the key decides the curve).
  const asA = encodeAttachment({ signatures: [{ ...att.signatures[0]!, code: 'A' }], sourceSeals: [] });
  assert.equal(only(raw(prefix, fixture.events, [asA])).status, 'accepted');
});

void test('B1. rot_remove: 3 keys → 2 keys with dual-index signatures gives the stated key state', () => {
  const r = V.rot_remove;
  for (const e of [r.icp, r.rot]) {
    const parsed = parseEvent(JSON.parse(e));
    assert.equal(computeSaid(parsed), parsed.d);
    assert.equal(Buffer.from(parsed.bytes).toString(), e, 'the fixture bytes are the canonical bytes');
  }
  const prefix = (JSON.parse(r.icp) as { i: string }).i;
  const ev = only(raw(prefix, [r.icp, r.rot], [r.icp_att, r.rot_att]));
  assert.equal(ev.status, 'accepted', String(ev.detail));
  const st = ev.state!;
  assert.equal(st.s, r.expected.s);
  assert.equal(st.d, r.expected.d);
  assert.equal(st.kt, r.expected.kt);
  assert.deepEqual(
    st.keys.map((k) => [k.curve, hex(k.raw)]),
    r.expected.keys_hex.map((h) => ['ed25519', h]),
  );
  assert.deepEqual(st.n, r.expected.n);
  assert.equal(st.nt, r.expected.nt);
  assert.equal(st.delegator, null);
  assert.equal(st.inception, 'icp');
});

void test('B1. rot_remove tampered copies are refused with their reasons', () => {
  const r = V.rot_remove;
  const prefix = (JSON.parse(r.icp) as { i: string }).i;
  const cases: { name: string; events: (string | Record<string, unknown>)[]; atts: string[]; reason: string; seq: number }[] = [];

  // One signature bit flipped (in the signature bytes of the icp's first signature).
  const icpAtt = parseAttachment(r.icp_att);
  const flipped = new Uint8Array(icpAtt.signatures[0]!.signature);
  flipped[10]! ^= 0x01;
  const flippedAtt = encodeAttachment({
    signatures: [{ ...icpAtt.signatures[0]!, signature: flipped }, icpAtt.signatures[1]!],
    sourceSeals: [],
  });
  cases.push({
    name: 'a signature bit flipped',
    events: [r.icp, r.rot],
    atts: [flippedAtt, r.rot_att],
    reason: 'signature_invalid',
    seq: 0,
  });

  // One of the two icp signatures removed (kt 2).
  const oneSig = encodeAttachment({ signatures: [icpAtt.signatures[1]!], sourceSeals: [] });
  cases.push({ name: 'an icp signature removed', events: [r.icp, r.rot], atts: [oneSig, r.rot_att], reason: 'signature_invalid', seq: 0 });

  // d replaced.
  const rotObj = JSON.parse(r.rot) as Record<string, unknown>;
  cases.push({
    name: 'd replaced',
    events: [r.icp, { ...rotObj, d: V.rot_remove.expected.n[0] }],
    atts: [r.icp_att, r.rot_att],
    reason: 'said_mismatch',
    seq: 1,
  });

  // The rot's p replaced: its SAID no longer matches; re-SAIDed, the chain is broken.
  const otherP = 'EOBL4V-xbEfI7nWi3PZkU4IcY3ZLCWPlQKMvD7xxgdTd';
  cases.push({
    name: "rot's p replaced",
    events: [r.icp, { ...rotObj, p: otherP }],
    atts: [r.icp_att, r.rot_att],
    reason: 'said_mismatch',
    seq: 1,
  });
  const resaid = finalizeEvent({ ...rotObj, p: otherP });
  cases.push({
    name: "rot's p replaced, re-SAIDed",
    events: [r.icp, resaid],
    atts: [r.icp_att, r.rot_att],
    reason: 'chain_broken',
    seq: 1,
  });

  // The rot signatures re-encoded with single-index codes: the prior nt is not met.
  const rotAtt = parseAttachment(r.rot_att);
  assert.deepEqual(
    rotAtt.signatures.map((s) => [s.code, s.index, s.ondex]),
    [
      ['2A', 0, 1],
      ['2A', 1, 2],
    ],
  );
  const single = encodeAttachment({
    signatures: rotAtt.signatures.map((s) => ({ ...s, code: 'A' as const, ondex: s.index })),
    sourceSeals: [],
  });
  cases.push({
    name: 'rot signatures as single-index A',
    events: [r.icp, r.rot],
    atts: [r.icp_att, single],
    reason: 'prior_next_unmet',
    seq: 1,
  });

  for (const c of cases) {
    const ev = only(raw(prefix, c.events, c.atts));
    assert.equal(ev.status, 'invalid', c.name);
    assert.equal(ev.reason, c.reason, `${c.name}: ${String(ev.detail)}`);
    assert.equal(ev.seq, c.seq, c.name);
    assert.equal(ev.state, null, c.name);
  }
});

void test("B2. delegation: the delegator's signatures re-derive from seed 00/0; the -G couple is the anchoring ixn", () => {
  const d = V.delegation;
  const s00 = ed25519Signer(Buffer.from(V.seeds['00/0']!.seed, 'hex'));
  assert.equal(signEvent(JSON.parse(d.delegator_icp) as Record<string, unknown>, [s00]), d.delegator_icp_att);
  assert.equal(signEvent(JSON.parse(d.delegator_ixn) as Record<string, unknown>, [s00]), d.delegator_ixn_att);
  const att = parseAttachment(d.dip_att);
  assert.deepEqual(att.sourceSeals, [{ s: BigInt(d.meta.anchor_sn), d: d.meta.anchor_said }]);
  assert.ok(d.dip_att.endsWith(d.gsrc_att));
  assert.deepEqual(parseAttachment('-AAA' + d.gsrc_att).sourceSeals, att.sourceSeals);
  for (const e of [d.delegator_icp, d.delegator_ixn, d.dip]) {
    const parsed = parseEvent(JSON.parse(e));
    assert.equal(computeSaid(parsed), parsed.d);
    assert.equal(parsed.expectedVersion, parsed.v);
  }
  assert.equal(parseEvent(JSON.parse(d.dip)).bytes.length, 0x15f);
});

void test('B2. delegation: the delegator after [icp, ixn] and the agent after [dip] have the stated states', () => {
  const d = V.delegation;
  const out = evaluate(delegatorKel(), raw(A, [d.dip], [d.dip_att]));
  const root = out.get(R)!;
  assert.equal(root.status, 'accepted', String(root.detail));
  assert.equal(root.state!.s, d.expected.delegator.s);
  assert.equal(root.state!.keys[0]!.qb64, d.expected.delegator.key);
  assert.ok(hex(root.state!.keys[0]!.raw).startsWith(d.expected.delegator.key_hex_prefix));
  assert.ok(hex(root.state!.keys[0]!.raw).endsWith(d.expected.delegator.key_hex_suffix));
  const agent = out.get(A)!;
  assert.equal(agent.status, 'accepted', String(agent.detail));
  assert.equal(agent.state!.s, 0);
  assert.equal(agent.state!.d, d.meta.dip_said);
  assert.equal(agent.state!.keys[0]!.qb64, d.expected.agent.key);
  assert.equal(hex(agent.state!.keys[0]!.raw), d.expected.agent.key_hex);
  assert.equal(agent.state!.delegator, R);
  assert.equal(agent.state!.inception, 'dip');
  assert.equal(agent.state!.revoked, false);
});

void test('B2. negative cases: delegator [icp] only → pending without state; -G stripped → still accepted; -G wrong → source_seal_mismatch', () => {
  const d = V.delegation;
  const pending = evaluate(raw(R, [d.delegator_icp], [d.delegator_icp_att]), raw(A, [d.dip], [d.dip_att])).get(A)!;
  assert.equal(pending.status, 'pending');
  assert.equal(pending.state, null);
  assert.equal(pending.seq, 0);

  const stripped = d.dip_att.slice(0, d.dip_att.length - d.gsrc_att.length);
  const noG = evaluate(delegatorKel(), raw(A, [d.dip], [stripped])).get(A)!;
  assert.equal(noG.status, 'accepted', String(noG.detail));

  const att = parseAttachment(d.dip_att);
  const wrongG = encodeAttachment({ signatures: att.signatures, sourceSeals: [{ s: 2n, d: d.meta.anchor_said }] });
  const bad = evaluate(delegatorKel(), raw(A, [d.dip], [wrongG])).get(A)!;
  assert.equal(bad.status, 'invalid');
  assert.equal(bad.reason, 'source_seal_mismatch');
  assert.equal(bad.seq, 0);

  // Without the delegator's KEL at all.
  const missing = evaluate(raw(A, [d.dip], [d.dip_att])).get(A)!;
  assert.equal(missing.reason, 'delegator_missing');
});

void test('B3. continuation: drt pending until ixn2 anchors it, ixn3 revokes, drt relabelled rot is rotation_type_invalid', () => {
  const d = V.delegation;
  const c = V.continuation;
  for (const e of [c.drt, c.ixn2, c.ixn3]) {
    const parsed = parseEvent(JSON.parse(e));
    assert.equal(computeSaid(parsed), parsed.d);
    assert.equal(parsed.expectedVersion, parsed.v);
  }
  const agent = raw(A, [d.dip, c.drt], [d.dip_att, c.drt_att]);

  const p = evaluate(delegatorKel(), agent).get(A)!;
  assert.equal(p.status, 'pending');
  assert.equal(p.seq, 1);
  assert.equal(p.state!.s, 0);
  assert.equal(p.state!.keys[0]!.qb64, d.expected.agent.key, 'the old key stays current while the drt is pending');

  const anchored = evaluate(delegatorKel([c.ixn2, c.ixn2_att]), agent).get(A)!;
  assert.equal(anchored.status, 'accepted', String(anchored.detail));
  assert.equal(anchored.state!.s, 1);
  assert.equal(anchored.state!.keys[0]!.qb64, c.expected_key_after_drt);
  assert.equal(hex(anchored.state!.keys[0]!.raw), c.expected_key_hex_after_drt);
  assert.equal(anchored.state!.revoked, false);

  const revoked = evaluate(delegatorKel([c.ixn2, c.ixn2_att], [c.ixn3, c.ixn3_att]), agent);
  assert.equal(revoked.get(R)!.state!.s, 3);
  assert.equal(revoked.get(A)!.status, 'accepted');
  assert.equal(revoked.get(A)!.state!.revoked, true);

  // The same drt relabelled rot, re-SAIDed and re-signed by its key (seed 11/1): rules 1–6 pass, rule 7 refuses it.
  const drt = JSON.parse(c.drt) as Record<string, unknown>;
  const rot = finalizeEvent({ ...drt, t: 'rot' });
  const s11 = ed25519Signer(Buffer.from(V.seeds['11/1']!.seed, 'hex'));
  assert.equal(signEvent(drt, [s11]) + c.drt_att.slice(c.drt_att.indexOf('-G')), c.drt_att, 'the drt signature re-derives from seed 11/1');
  const relabelled = evaluate(delegatorKel([c.ixn2, c.ixn2_att]), raw(A, [d.dip, rot], [d.dip_att, signEvent(rot, [s11])])).get(A)!;
  assert.equal(relabelled.status, 'invalid');
  assert.equal(relabelled.reason, 'rotation_type_invalid');
  assert.equal(relabelled.seq, 1);
});

void test('C. basic-prefix icp (icp.bin): the SAID reproduces with i kept', () => {
  const e = parseEvent(JSON.parse(V.basic_prefix_icp.event));
  assert.equal(e.bytes.length, V.basic_prefix_icp.size);
  assert.equal(computeSaid(e), e.d);
  assert.equal(e.i, e.k[0]);
  // Hashing with i replaced too (the self-addressing rule) would give another SAID.
  const wrong = parseEvent({ ...(JSON.parse(V.basic_prefix_icp.event) as object), i: e.d });
  assert.notEqual(computeSaid(wrong), e.d);
});
