/**
 * C2SP tlog-proof verification for the verifier SDK (async): parsed by src/note/tlog-proof.ts, the
 * checkpoint verified under the log's keys, then the entry's inclusion under its root.
 */
import { parseTlogProof } from '../note/tlog-proof.ts';
import { fail, rethrow, VerificationError } from './errors.ts';
import { hashLeaf, inclusionFailure } from './merkle.ts';
import { verifyCheckpoint, type Checkpoint, type NoteKey, type VerifiedNote } from './note.ts';

export interface VerifiedTlogProof {
  index: number;
  /** The checkpoint the entry is included in. */
  tree: Checkpoint;
  note: VerifiedNote;
  /** The unauthenticated extra data, if any. */
  extra?: Uint8Array;
}

/**
 * A tlog-proof (`c2sp.org/tlog-proof@v1`) for an entry (`{data}`, hashed as a leaf) or a leaf hash
 * (`{hash}`), under the log's key(s) and optionally its origin. Codes: `tlog_proof_invalid` (it
 * does not parse, or its checkpoint does not parse or verify under the keys), `checkpoint_wrong_origin`,
 * `inclusion_invalid`, `algorithm_unsupported`.
 */
export async function verifyTlogProof(
  text: string,
  leaf: { data: Uint8Array } | { hash: Uint8Array },
  keys: readonly NoteKey[],
  origin?: string,
): Promise<VerifiedTlogProof> {
  let parsed;
  try {
    parsed = parseTlogProof(text);
  } catch (e) {
    return rethrow('tlog_proof_invalid', 'tlog-proof', e);
  }
  const { checkpoint: tree, note } = await verifyCheckpoint(parsed.checkpoint, keys, origin).catch((e: unknown) => {
    // The proof's checkpoint is part of the proof: one code for a proof that does not verify.
    if (e instanceof VerificationError && e.code === 'checkpoint_invalid')
      throw new VerificationError('tlog_proof_invalid', `tlog-proof: ${e.message}`);
    throw e;
  });
  const leafHash = 'data' in leaf ? await hashLeaf(leaf.data) : leaf.hash;
  const why = await inclusionFailure(leafHash, parsed.index, tree.size, parsed.proof, tree.rootHash);
  if (why !== null) fail('inclusion_invalid', `inclusion proof invalid: ${why}`);
  const result: VerifiedTlogProof = { index: parsed.index, tree, note };
  if (parsed.extra !== undefined) result.extra = parsed.extra;
  return result;
}
