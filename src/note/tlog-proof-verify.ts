/**
 * Verification of a C2SP tlog-proof (tlog-proof.ts parses it): the checkpoint's signatures under
 * trusted note keys, then the RFC 6962 inclusion of the entry under the checkpoint's root, with
 * node:crypto's synchronous SHA-256 (the verifier SDK's WebCrypto variant is src/verify/tlog-proof.ts).
 */
import { hashLeaf } from '../tlog/hash.ts';
import { checkInclusion } from '../tlog/merkle.ts';
import type { Checkpoint } from './checkpoint.ts';
import { NoteError } from './errors.ts';
import { verifyNote, type NoteVerifier, type VerifiedNote } from './signed-note.ts';
import { parseTlogProof } from './tlog-proof.ts';

export interface VerifiedTlogProof {
  index: number;
  /** The checkpoint the entry is included in. */
  tree: Checkpoint;
  /** The checkpoint note with the signatures that verified (log and any known cosigners). */
  note: VerifiedNote;
  /** The unauthenticated extra data, if any. */
  extra?: Uint8Array;
}

/**
 * Verify a tlog-proof: the checkpoint note against `verifiers` (signed-note rules: at least one
 * known key verifies, no known key fails), optionally its origin, then the RFC 6962 inclusion of
 * the entry (`{ data }`: the entry bytes, hashed as a leaf; `{ hash }`: the leaf hash) at `index`
 * under the checkpoint's root. Quorum policy over cosigners is the caller's (see `note.verified`).
 * Throws NoteError (`malformed_tlog_proof`, `invalid_signature`, `unverified_note`,
 * `origin_mismatch`) or ProofError `inclusion_proof_invalid` from src/tlog/merkle.ts.
 */
export function verifyTlogProof(
  input: string | Uint8Array,
  leaf: { data: Uint8Array } | { hash: Uint8Array },
  verifiers: readonly NoteVerifier[],
  options: { origin?: string } = {},
): VerifiedTlogProof {
  const parsed = parseTlogProof(input);
  const note = verifyNote(parsed.note, verifiers);
  if (options.origin !== undefined && parsed.tree.origin !== options.origin) {
    throw new NoteError(
      'origin_mismatch',
      `checkpoint origin is ${JSON.stringify(parsed.tree.origin)}, expected ${JSON.stringify(options.origin)}`,
    );
  }
  const leafHash = 'data' in leaf ? hashLeaf(leaf.data) : leaf.hash;
  checkInclusion(leafHash, parsed.index, parsed.tree.size, parsed.proof, parsed.tree.rootHash);
  const result: VerifiedTlogProof = { index: parsed.index, tree: parsed.tree, note };
  if (parsed.extra !== undefined) result.extra = parsed.extra;
  return result;
}
