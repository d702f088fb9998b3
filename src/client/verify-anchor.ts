/**
 * Offline verification of what an anchor witness returns (SPEC §3.3, §4) against a witness key the
 * client pins, never the key the response carries: cosignature, checkpoint, inclusion proof,
 * tlog-proof and the party's signature on the anchor. Synchronous (node:crypto) for the CLI; the
 * verifier SDK (src/verify) runs the same checks over WebCrypto and shares this module's error
 * class, wire types and shape checks. Failures throw VerificationError (codes: docs/errors.md).
 */
import { cosignMessage } from '../anchor/messages.ts';
import { verifyPartySignature } from '../anchor/party-signature.ts';
import type { Anchor } from '../anchor/types.ts';
import { verifyEd25519 } from '../crypto/ed25519.ts';
import { decodeBase64 } from '../encoding/base64.ts';
import { parseCheckpoint } from '../note/checkpoint.ts';
import { verifyNote } from '../note/signed-note.ts';
import { ed25519NoteVerifier } from '../note/vkey.ts';
import { hashLeaf } from '../tlog/hash.ts';
import { verifyInclusion } from '../tlog/merkle.ts';
import { fail, VerificationError, type VerificationCode } from '../verify/errors.ts';
import {
  checkInclusionOrigin,
  checkPartyKeyPinned,
  checkTlogProofMatches,
  cosignatureSignature,
  parseAnchorResponse,
  decodeResponseAnchor,
  type AnchorResponseBody,
  type PinnedParty,
  type PinnedWitnessBytes as PinnedWitness,
  type Receipt,
  type VerifiedReceipt,
} from '../verify/receipt.ts';

// The error class, the wire types and the JSON shape checks are the verifier SDK's (src/verify), shared.
export { VerificationError, type VerificationCode } from '../verify/errors.ts';
export { decodeResponseAnchor, hexIsBytes, parseAnchorResponse, parseCosignature, parseReceipt } from '../verify/receipt.ts';
export type {
  AnchorResponseBody,
  CosignatureWire,
  InclusionWire,
  PinnedParty,
  PinnedPartyKey,
  PinnedWitnessBytes as PinnedWitness,
  Receipt,
  VerifiedReceipt,
} from '../verify/receipt.ts';

function wrap<T>(code: VerificationCode, what: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof VerificationError) throw e;
    return fail(code, `${what}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * The anchor is signed by the pinned party: its `sig_party` curve and key are one of the pinned
 * keys (party_key_mismatch), and the signature verifies over the party message
 * (party_signature_invalid). Nothing pinned (undefined, an empty list) is party_unpinned.
 */
export function verifyPartyPin(anchor: Anchor, party: PinnedParty): void {
  checkPartyKeyPinned(anchor, party);
  if (!verifyPartySignature(anchor))
    fail('party_signature_invalid', 'the party signature of the anchor does not verify under the pinned party key');
}

/**
 * Verify the WITNESS's part of a receipt for `anchor` under the pinned witness identity: its
 * cosignature, checkpoint, inclusion proof and tlog-proof. It does NOT establish who signed the
 * anchor (a witness may co-sign an anchor it minted itself): use verifyReceipt for that. For tools
 * that judge witnesses rather than anchors (monitors), and as the first half of verifyReceipt.
 */
export function verifyWitnessReceipt(anchor: Anchor, receipt: Receipt, witness: PinnedWitness): VerifiedReceipt {
  const signature = cosignatureSignature(receipt, witness);
  const message = cosignMessage(anchor);
  if (!verifyEd25519(witness.publicKey, message, signature))
    fail('cosignature_invalid', 'the cosignature does not verify under the pinned witness key');

  const inc = receipt.inclusion;
  checkInclusionOrigin(inc, witness);
  const verifier = ed25519NoteVerifier(witness.logOrigin, witness.publicKey);
  const note = wrap('checkpoint_invalid', 'checkpoint', () => verifyNote(inc.checkpoint, [verifier]));
  const tree = parseCheckpoint(note.text);
  if (tree.size !== inc.tree_size) fail('inclusion_invalid', 'tree_size differs from the checkpoint size');
  const hashes = wrap('malformed_response', 'inclusion.hashes', () => inc.hashes.map((h) => decodeBase64(h, 32)));
  if (!verifyInclusion(hashLeaf(message), inc.leaf_index, tree.size, hashes, tree.rootHash)) {
    fail('inclusion_invalid', 'the inclusion proof does not lead to the checkpoint root');
  }
  checkTlogProofMatches(inc, hashes);
  return { anchor, treeSize: tree.size, leafIndex: inc.leaf_index, checkpoint: tree };
}

/**
 * Verify a witness's receipt for `anchor`: co-signed and logged by the pinned witness
 * (verifyWitnessReceipt) AND signed by the pinned party (verifyPartyPin). `party` is required.
 */
export function verifyReceipt(anchor: Anchor, receipt: Receipt, witness: PinnedWitness, party: PinnedParty): VerifiedReceipt {
  const v = verifyWitnessReceipt(anchor, receipt, witness);
  verifyPartyPin(anchor, party);
  return v;
}

/** Verify a 200 body of POST /v1/anchor or GET /v1/anchor/{seed} (witness and party pinned); returns the decoded anchor. */
export function verifyAnchorResponse(body: AnchorResponseBody, witness: PinnedWitness, party: PinnedParty): VerifiedReceipt {
  const parsed = parseAnchorResponse(body);
  return verifyReceipt(decodeResponseAnchor(parsed.anchor), parsed, witness, party);
}
