// SPEC §3.5 "Bounded work per event" and rules 5–6 (rev 4), issue 25 items 3 and 17: more than
// 2 × |keys| signatures is `malformed`; signatures are verified only until the thresholds are met
// (kt, and for rot/drt the prior nt); keripy's index rules (an out-of-range index refuses the event,
// and so does a written ondex out of range of a rotation's prior n; an invalid signature at an
// index does not stop a later valid one there). Keys are generated per run; work is observed
// through the signature counter, never through timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeAttachment, type IndexedSignature, type SignatureCode } from '../../src/keri/attachments.ts';
import { evaluateKels } from '../../src/keri/evaluate.ts';
import { parseEvent } from '../../src/keri/event.ts';
import { signatureCounters } from '../../src/keri/signatures.ts';
import type { KelEvaluation, RawKel } from '../../src/keri/types.ts';
import { KelBuilder, generateSigner, type KelSigner } from '../helpers/kel-builder.ts';

let n = 0;
const rawOf = (b: KelBuilder, attachments: string[]): RawKel => ({
  prefix: b.prefix,
  events: b.events.slice(0, attachments.length),
  attachments,
  bytes: 0,
  sourceHash: `sig-indexes-${n++}`,
  source: 'test',
});

interface Sig {
  by: KelSigner;
  index: number;
  code?: SignatureCode;
  ondex?: number | null;
}

/** An attachment with exactly these signatures, in this order (code A unless given). */
function attach(event: Record<string, unknown>, sigs: readonly Sig[]): string {
  const bytes = parseEvent(event).bytes;
  const signatures: IndexedSignature[] = sigs.map((s) => {
    const code = s.code ?? 'A';
    const ondex = s.ondex !== undefined ? s.ondex : code === 'A' || code === 'E' ? s.index : null;
    return { code, index: s.index, ondex, signature: s.by.sign(bytes) };
  });
  return encodeAttachment({ signatures, sourceSeals: [] });
}

function evaluate(kel: RawKel): { ev: KelEvaluation; verifications: number } {
  const before = signatureCounters.verified;
  const ev = evaluateKels(new Map([[kel.prefix, kel]]), null, new Map()).evaluations.get(kel.prefix)!;
  return { ev, verifications: signatureCounters.verified - before };
}

function assertRefused(kel: RawKel, reason: string, seq: number): KelEvaluation {
  const { ev } = evaluate(kel);
  assert.equal(ev.status, 'invalid', `expected ${reason}: ${String(ev.detail)}`);
  assert.equal(ev.reason, reason, String(ev.detail));
  assert.equal(ev.seq, seq, String(ev.detail));
  return ev;
}

function assertAccepted(kel: RawKel): KelEvaluation {
  const { ev } = evaluate(kel);
  assert.equal(ev.status, 'accepted', `${String(ev.reason)}: ${String(ev.detail)}`);
  return ev;
}

void test('bounded work: more attached signatures than 2 × the signing keys is malformed (icp, and an ixn under the current keys)', () => {
  const a = generateSigner();
  const b = KelBuilder.incept({ signers: [a], next: [generateSigner()] });
  b.interact([]);
  const icp = b.events[0]!;
  // Two signatures for one key is the most allowed; three is malformed whatever they are.
  assertAccepted(
    rawOf(b, [
      attach(icp, [
        { by: a, index: 0 },
        { by: a, index: 0 },
      ]),
      b.attachments[1]!,
    ]),
  );
  assertRefused(
    rawOf(b, [
      attach(icp, [
        { by: a, index: 0 },
        { by: a, index: 0 },
        { by: a, index: 0 },
      ]),
      b.attachments[1]!,
    ]),
    'malformed',
    0,
  );
  // An ixn counts against the current keys (one here), not against any k of its own.
  const flood = attach(b.events[1]!, [
    { by: a, index: 0 },
    { by: a, index: 0 },
    { by: a, index: 0 },
  ]);
  const ev = assertRefused(rawOf(b, [b.attachments[0]!, flood]), 'malformed', 1);
  assert.match(String(ev.detail), /3 signatures for 1 signing key/);
  // The same holds when the ixn is verified incrementally from a cached state.
  const first = evaluateKels(new Map([[b.prefix, rawOf(b, b.attachments.slice(0, 1))]]), null, new Map());
  const grown = evaluateKels(new Map([[b.prefix, rawOf(b, [b.attachments[0]!, flood])]]), first.cache, new Map());
  assert.equal(grown.evaluations.get(b.prefix)!.reason, 'malformed');
  assert.equal(grown.evaluations.get(b.prefix)!.seq, 1);
  assert.equal(grown.evaluations.get(b.prefix)!.state!.s, 0, 'the last accepted state stays');
});

void test('bounded work: the review KEL (32 keys, kt 1, 1 valid + 31 wrong-key signatures per event) costs one verification per event', () => {
  // Issue 25 item 3: every event's 32 signatures were all verified (32 per event, 88 000 for an 8 MiB KEL).
  const keys = Array.from({ length: 32 }, () => generateSigner());
  const wrong = Array.from({ length: 31 }, () => generateSigner());
  const b = KelBuilder.incept({ signers: keys, next: [generateSigner()], kt: 1 });
  for (let i = 0; i < 20; i++) b.interact([]);
  const hostile = b.events.map((e) => attach(e, [{ by: keys[0]!, index: 0 }, ...wrong.map((w, j) => ({ by: w, index: j + 1 }))]));
  const { ev, verifications } = evaluate(rawOf(b, hostile));
  assert.equal(ev.status, 'accepted', String(ev.detail));
  assert.equal(verifications, b.events.length, 'kt 1 is met by the first signature of each event: nothing else is verified');
  // The valid signature last: each wrong one is tried once, never more than the signatures attached.
  const last = b.events.map((e) => attach(e, [...wrong.map((w, j) => ({ by: w, index: j + 1 })), { by: keys[0]!, index: 0 }]));
  const worst = evaluate(rawOf(b, last));
  assert.equal(worst.ev.status, 'accepted');
  assert.equal(worst.verifications, 32 * b.events.length);
});

void test('bounded work: a rotation keeps verifying until the prior nt is met too, and skips signatures that add nothing', () => {
  const [a, b1, b2, x] = [generateSigner(), generateSigner(), generateSigner(), generateSigner()];
  const kel = KelBuilder.incept({ signers: [a], next: [b1, b2], nt: 2 });
  const rot = kel.rotate({ signers: [b1, b2], next: [generateSigner()], kt: 1 });
  // kt 1 is met by b1 alone; the prior nt 2 needs b2's signature as well. x's signature at index 1
  // (before b2's) is tried and fails; a second copy of b1's adds nothing and is not verified.
  const sigs = attach(rot.event, [
    { by: b1, index: 0 },
    { by: b1, index: 0 },
    { by: x, index: 1 },
    { by: b2, index: 1 },
  ]);
  const { ev, verifications } = evaluate(rawOf(kel, [kel.attachments[0]!, sigs]));
  assert.equal(ev.status, 'accepted', String(ev.detail));
  assert.equal(verifications, 1 + 3);
  // Without b2's signature the prior nt is unmet.
  const short = attach(rot.event, [
    { by: b1, index: 0 },
    { by: x, index: 1 },
  ]);
  assertRefused(rawOf(kel, [kel.attachments[0]!, short]), 'prior_next_unmet', 1);
});

void test('keripy index rule: an invalid signature at an index does not stop a later valid one at the same index', () => {
  // Issue 25 item 17: [invalid@0, valid@0] was refused (only the first signature of an index was tried).
  const [a, intruder] = [generateSigner(), generateSigner()];
  const b = KelBuilder.incept({ signers: [a], next: [generateSigner()] });
  b.interact([]);
  const ev = assertAccepted(
    rawOf(b, [
      attach(b.events[0]!, [
        { by: intruder, index: 0 },
        { by: a, index: 0 },
      ]),
      attach(b.events[1]!, [
        { by: intruder, index: 0 },
        { by: a, index: 0 },
      ]),
    ]),
  );
  assert.equal(ev.state!.s, 1);
  // Each index still counts once: two valid signatures at index 0 do not meet kt 2.
  const [m0, m1] = [generateSigner(), generateSigner()];
  const two = KelBuilder.incept({ signers: [m0, m1], next: [generateSigner()], kt: 2 });
  assertRefused(
    rawOf(two, [
      attach(two.events[0]!, [
        { by: m0, index: 0 },
        { by: m0, index: 0 },
      ]),
    ]),
    'signature_invalid',
    0,
  );
});

void test('keripy index rule: a signature index beyond the signing keys refuses the event, even with kt met', () => {
  // Issue 25 item 17: an index out of range was silently ignored (keripy raises ValidationError).
  const a = generateSigner();
  const b = KelBuilder.incept({ signers: [a], next: [generateSigner()] });
  b.interact([]);
  const icp = attach(b.events[0]!, [
    { by: a, index: 0 },
    { by: a, index: 1 },
  ]);
  const ev = assertRefused(rawOf(b, [icp, b.attachments[1]!]), 'signature_invalid', 0);
  assert.match(String(ev.detail), /index 1/);
  // The same on an ixn (the current keys), with a dual-index code, and out of range first.
  const ixn = attach(b.events[1]!, [
    { by: a, index: 5, code: '2A', ondex: 0 },
    { by: a, index: 0 },
  ]);
  assertRefused(rawOf(b, [b.attachments[0]!, ixn]), 'signature_invalid', 1);
});

void test('ondex rule: a rotation signature whose written ondex is beyond the prior n is signature_invalid; implicit and current-only ondexes are not checked', () => {
  const [a, b1, fresh] = [generateSigner(), generateSigner(), generateSigner()];
  const kel = KelBuilder.incept({ signers: [a], next: [b1] });
  const rot = kel.rotate({ signers: [b1, fresh], next: [generateSigner()], kt: 1 });
  // 2A at index 0 exposing n[0], and a second 2A at the same index naming ondex 7 (prior n has 1).
  const outOfRange = attach(rot.event, [
    { by: b1, index: 0, code: '2A', ondex: 0 },
    { by: b1, index: 0, code: '2A', ondex: 7 },
  ]);
  const ev = assertRefused(rawOf(kel, [kel.attachments[0]!, outOfRange]), 'signature_invalid', 1);
  assert.match(String(ev.detail), /ondex 7/);
  // A single-index A at index 1 (ondex = index = 1, beyond the prior n) is how signers sign a new
  // key: it exposes nothing and is not refused. A current-only 2B's ondex is ignored.
  assertAccepted(
    rawOf(kel, [
      kel.attachments[0]!,
      attach(rot.event, [
        { by: b1, index: 0 },
        { by: fresh, index: 1 },
      ]),
    ]),
  );
  assertAccepted(
    rawOf(kel, [
      kel.attachments[0]!,
      attach(rot.event, [
        { by: b1, index: 0 },
        { by: fresh, index: 1, code: '2B', ondex: 9 },
      ]),
    ]),
  );
});
