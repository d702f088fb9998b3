/**
 * Duplicity proofs for the verifier SDK (SPEC §3.3), async: the body of a witness's 409 — two
 * anchors of one seed at one index with different heads, both signed by one party key — checked
 * offline with the pair rules of src/anchor/duplicity-pair.ts and WebCrypto signatures. With a
 * pinned party, the key that equivocated must be that party's. Codes: malformed_response,
 * duplicity_proof_invalid, party_key_mismatch, party_unpinned.
 */
import { decodeDuplicityProof } from '../anchor/codec.ts';
import { duplicityPairVerdict } from '../anchor/duplicity-pair.ts';
import type { DuplicityProof } from '../anchor/types.ts';
import { fail, wrap } from './errors.ts';
import { checkPartyKeyPinned, verifyPartySignature, type PinnedParty } from './receipt.ts';
import { isJsonObject } from '../encoding/json.ts';

/**
 * Verify a duplicity proof (parsed JSON, as a 409 body carries it) and return it decoded. `party`,
 * when given, is the party the caller holds responsible: the proof's key must be one of its keys.
 */
export async function verifyDuplicityProof(doc: unknown, party?: PinnedParty): Promise<DuplicityProof> {
  if (
    !isJsonObject(doc) ||
    !isJsonObject(doc.anchor_a) ||
    !isJsonObject(doc.anchor_b) ||
    !isJsonObject(doc.anchor_a.sig_party) ||
    !isJsonObject(doc.anchor_b.sig_party) ||
    !isJsonObject(doc.anchor_a.witness_set) ||
    !isJsonObject(doc.anchor_b.witness_set)
  ) {
    fail('malformed_response', 'not a duplicity proof (seed_id, index, anchor_a, anchor_b)');
  }
  const proof = wrap('malformed_response', 'duplicity proof', () => decodeDuplicityProof(doc));
  const structural = duplicityPairVerdict(proof);
  if (structural !== undefined && !structural.valid) fail('duplicity_proof_invalid', structural.reason);
  if (party !== undefined) checkPartyKeyPinned(proof.anchorA, party);
  if (!(await verifyPartySignature(proof.anchorA))) fail('duplicity_proof_invalid', 'anchor_a party signature does not verify');
  if (!(await verifyPartySignature(proof.anchorB))) fail('duplicity_proof_invalid', 'anchor_b party signature does not verify');
  return proof;
}
