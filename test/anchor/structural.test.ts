// Issue 25 item 18: the sync anchor decoders on structurally wrong JSON. decodeAnchor and
// decodeDuplicityProof take parsed JSON from the network, files and the store; null, a number or an
// array where an object or a string belongs, or a missing member, is AnchorError
// `malformed_anchor` — before the fix, `witness_set.said: null` threw a TypeError, and a
// timestamp or cumulative wrapped in an array was accepted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeAnchor, decodeDuplicityProof, encodeAnchor, encodeDuplicityProof } from '../../src/anchor/codec.ts';
import { makeDuplicityProof } from '../../src/anchor/duplicity.ts';
import { AnchorError } from '../../src/anchor/errors.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { structuralMutations, type StructuralMutation } from '../helpers/structural.ts';

const party = edParty(0x41);
const a = signAnchor(party, { seedId: fill(0x42), index: 3, head: fill(0x43), cumulative: 900n, timestamp: 1_700_000_000 });
const b = signAnchor(party, { seedId: fill(0x42), index: 3, head: fill(0x44), cumulative: 900n, timestamp: 1_700_000_000 });
/** As parsed from the wire: cumulative a decimal string. */
const asJson = (x: unknown): unknown => JSON.parse(JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
const anchorDoc = asJson(encodeAnchor(a)) as Record<string, unknown>;
const proofDoc = asJson(encodeDuplicityProof(makeDuplicityProof(a, b))) as Record<string, unknown>;

/** `cumulative` may be a JSON integer or a decimal string; every other type change must be refused. */
const mustRefuse = (m: StructuralMutation): boolean =>
  m.typeChanged && !(m.pointer.endsWith('/cumulative') && (m.after === 'number' || m.after === 'string'));

function checkDecoder(decode: (doc: unknown) => unknown, doc: unknown): number {
  let refused = 0;
  for (const m of structuralMutations(doc)) {
    let threw: unknown = undefined;
    try {
      decode(m.doc);
    } catch (e) {
      threw = e;
    }
    if (threw === undefined) {
      assert.ok(!mustRefuse(m), `${m.label}: accepted (a ${m.before} became ${m.after})`);
      continue;
    }
    assert.ok(
      threw instanceof AnchorError,
      `${m.label}: ${threw instanceof Error ? `${threw.name}: ${threw.message}` : JSON.stringify(threw)}`,
    );
    assert.equal(threw.code, 'malformed_anchor', m.label);
    refused++;
  }
  return refused;
}

void test('decodeAnchor: witness_set.said null (the review input) is malformed_anchor, not a TypeError', () => {
  const doc = { ...anchorDoc, witness_set: { ...(anchorDoc.witness_set as object), said: null } };
  assert.throws(
    () => decodeAnchor(doc),
    (e: unknown) => e instanceof AnchorError && e.code === 'malformed_anchor' && /witness_set\/said/.test(e.message),
  );
  assert.throws(() => decodeAnchor(null), { code: 'malformed_anchor' });
  assert.throws(() => decodeAnchor([anchorDoc]), { code: 'malformed_anchor' });
  assert.throws(() => decodeAnchor({ ...anchorDoc, sig_party: undefined }), { code: 'malformed_anchor' });
  assert.throws(() => decodeAnchor({ ...anchorDoc, head: 12 }), { code: 'malformed_anchor' });
  // Leniency removed: a value wrapped in an array is not the value.
  assert.throws(() => decodeAnchor({ ...anchorDoc, timestamp: [anchorDoc.timestamp] }), { code: 'malformed_anchor' });
  assert.throws(() => decodeAnchor({ ...anchorDoc, cumulative: [anchorDoc.cumulative] }), { code: 'malformed_anchor' });
  // The valid document still decodes, with cumulative as a string, an integer or a bigint.
  assert.deepEqual(decodeAnchor(anchorDoc), a);
  assert.deepEqual(decodeAnchor({ ...anchorDoc, cumulative: 900 }), a);
  assert.deepEqual(decodeAnchor({ ...anchorDoc, cumulative: 900n }), a);
});

void test('decodeAnchor: every structural mutation of every member is malformed_anchor or (type kept) decodes', () => {
  assert.ok(checkDecoder((d) => decodeAnchor(d), anchorDoc) > 80);
});

void test('decodeDuplicityProof: every structural mutation (root, index, seed_id, both anchors and their members) is malformed_anchor', () => {
  assert.throws(() => decodeDuplicityProof(null), { code: 'malformed_anchor' });
  assert.throws(() => decodeDuplicityProof({ ...proofDoc, anchor_a: null }), { code: 'malformed_anchor' });
  assert.ok(checkDecoder((d) => decodeDuplicityProof(d), proofDoc) > 180);
  assert.deepEqual(decodeDuplicityProof(proofDoc).anchorB, b);
});
