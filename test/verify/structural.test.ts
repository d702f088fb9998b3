// Issue 25 item 18, the async verifier SDK (`anchor-witness/verify`): anchors and duplicity proofs
// with structurally wrong JSON are refused with the SDK's typed codes — `malformed_response` for a
// response anchor or a 409 body, `bundle_invalid` for a finalized bundle's anchor — and a member
// whose JSON type changed is never accepted (before the fix, a timestamp or cumulative wrapped in
// an array decoded as the value, and the refusals carried a TypeError's text).
import assert from 'node:assert/strict';
import { encodeAnchor, encodeDuplicityProof } from '../../src/anchor/codec.ts';
import { makeDuplicityProof } from '../../src/anchor/duplicity.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import * as verify from '../../src/verify/index.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { structuralMutations, type StructuralMutation } from '../helpers/structural.ts';
import { bothBackends } from '../helpers/crypto-backends.ts';

const party = edParty(0x51);
const a = signAnchor(party, { seedId: fill(0x52), index: 4, head: fill(0x53), cumulative: 70n, timestamp: 1_700_000_100 });
const b = signAnchor(party, { seedId: fill(0x52), index: 4, head: fill(0x54), cumulative: 70n, timestamp: 1_700_000_100 });
const asJson = (x: unknown): unknown => JSON.parse(JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
const anchorDoc = asJson(encodeAnchor(a)) as Record<string, unknown>;
const proofDoc = asJson(encodeDuplicityProof(makeDuplicityProof(a, b))) as Record<string, unknown>;

const mustRefuse = (m: StructuralMutation): boolean =>
  m.typeChanged && !(m.pointer.endsWith('/cumulative') && (m.after === 'number' || m.after === 'string'));

/** Every refusal is a VerificationError with one of `codes` (a mutation that kept the member's type may also fail later, with `later`). */
async function checkAsync(
  what: string,
  doc: unknown,
  run: (d: unknown) => Promise<unknown>,
  codes: readonly string[],
  later: readonly string[] = [],
): Promise<number> {
  let refused = 0;
  for (const m of structuralMutations(doc)) {
    let threw: unknown = undefined;
    try {
      await run(m.doc);
    } catch (e) {
      threw = e;
    }
    if (threw === undefined) {
      assert.ok(!mustRefuse(m), `${what} ${m.label}: accepted (a ${m.before} became ${m.after})`);
      continue;
    }
    assert.ok(
      threw instanceof verify.VerificationError,
      `${what} ${m.label}: ${threw instanceof Error ? `${threw.name}: ${threw.message}` : JSON.stringify(threw)}`,
    );
    const allowed = mustRefuse(m) ? codes : [...codes, ...later];
    assert.ok(allowed.includes(threw.code), `${what} ${m.label}: ${threw.code} ${threw.message}`);
    assert.doesNotMatch(threw.message, /Cannot read|is not a function|must be of type/, `${what} ${m.label}: a TypeError's text`);
    refused++;
  }
  return refused;
}

bothBackends(
  'verify.decodeResponseAnchor: structurally wrong anchors are malformed_response, never accepted with a changed type',
  async () => {
    assert.throws(
      () => verify.decodeResponseAnchor({ ...anchorDoc, witness_set: { said: null, threshold: 1 } } as never),
      (e: unknown) =>
        e instanceof verify.VerificationError && e.code === 'malformed_response' && /witness_set\/said: must be a string/.test(e.message),
    );
    assert.throws(() => verify.decodeResponseAnchor({ ...anchorDoc, timestamp: [anchorDoc.timestamp] } as never), {
      code: 'malformed_response',
    });
    assert.ok(
      (await checkAsync('anchor', anchorDoc, (d) => Promise.resolve().then(() => verify.decodeResponseAnchor(d as never)), [
        'malformed_response',
      ])) > 80,
    );
  },
);

bothBackends('verify.verifyDuplicityProof: structurally wrong 409 bodies are malformed_response', async () => {
  assert.deepEqual((await verify.verifyDuplicityProof(proofDoc)).anchorA, a);
  await assert.rejects(verify.verifyDuplicityProof({ ...proofDoc, anchor_b: { ...(proofDoc.anchor_b as object), cumulative: ['70'] } }), {
    code: 'malformed_response',
  });
  assert.ok(
    (await checkAsync('proof', proofDoc, (d) => verify.verifyDuplicityProof(d), ['malformed_response'], ['duplicity_proof_invalid'])) > 180,
  );
});

bothBackends('verify.parseFinalizedBundle: a structurally wrong bundle anchor is bundle_invalid', async () => {
  const bundle = {
    v: verify.FINALIZED_V,
    anchor: anchorDoc,
    witness_set: {
      v: verify.WITNESS_SET_V,
      threshold: 1,
      members: [{ name: 'w1.example', public_key: encodeHex(fill(0x55)), log_origin: 'w1.example/log' }],
    },
    receipts: [],
  };
  assert.deepEqual((await verify.parseFinalizedBundle(bundle)).anchor, a);
  const refused = await checkAsync('bundle', anchorDoc, (d) => verify.parseFinalizedBundle({ ...bundle, anchor: d }), ['bundle_invalid']);
  assert.ok(refused > 80);
});
