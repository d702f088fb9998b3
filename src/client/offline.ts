/**
 * Offline verifiers for files a client keeps or is handed: checkpoint notes, cosigned checkpoints
 * (SPEC §5: cosignature/v1 Ed25519 and subtree/v1 ML-DSA-44 lines, checked with node:crypto), tlog-proofs,
 * anchor cosignatures. Pure. Failures throw VerificationError with a stable code.
 */
import { cosignMessage } from '../anchor/messages.ts';
import type { Anchor } from '../anchor/types.ts';
import { verifyEd25519 } from '../crypto/ed25519.ts';
import { decodeHex } from '../encoding/hex.ts';
import { ProtocolError } from '../errors.ts';
import { parseCheckpoint, type Checkpoint } from '../note/checkpoint.ts';
import { NoteError } from '../note/errors.ts';
import { ProofError } from '../tlog/errors.ts';
import { checkEmptyTree, checkLogSignature, isCosignerType } from '../verify/note.ts';
import { cosignerQuorum, countedCosigners } from '../verify/quorum.ts';
import { verifyNote, type VerifiedNote } from '../note/signed-note.ts';
import { verifyTlogProof, type VerifiedTlogProof } from '../note/tlog-proof-verify.ts';
import type { NoteVerifier } from '../note/vkey.ts';
import { hexIsBytes, VerificationError, type CosignatureWire, type PinnedWitness, type VerificationCode } from './verify-anchor.ts';

function rethrow(code: VerificationCode, what: string, e: unknown): never {
  if (e instanceof VerificationError) throw e;
  const inner = e instanceof ProtocolError ? ` (${e.code})` : '';
  throw new VerificationError(code, `${what}: ${e instanceof Error ? e.message : String(e)}${inner}`);
}

/**
 * A checkpoint of size 0 must carry the empty tree's root (RFC 6962: SHA-256 of nothing). A signed
 * size-0 checkpoint with any other root is not a view of any log — refused here, where every
 * checkpoint a client is handed is verified, so that no consistency check (0 → 0 compares sizes
 * only) can call it consistent.
 */
/** A checkpoint signed note, verified against `verifiers` (signed-note rules), optionally of `origin`. */
export function verifyCheckpointNote(
  note: string,
  verifiers: readonly NoteVerifier[],
  origin?: string,
): { checkpoint: Checkpoint; note: VerifiedNote } {
  let verified: VerifiedNote;
  let checkpoint: Checkpoint;
  try {
    verified = verifyNote(note, verifiers);
    checkpoint = parseCheckpoint(verified.text);
  } catch (e) {
    return rethrow('checkpoint_invalid', 'checkpoint', e);
  }
  if (origin !== undefined && checkpoint.origin !== origin) {
    throw new VerificationError(
      'checkpoint_wrong_origin',
      `the checkpoint is from log ${JSON.stringify(checkpoint.origin)}, expected ${JSON.stringify(origin)}`,
    );
  }
  checkEmptyTree(checkpoint);
  return { checkpoint, note: verified };
}

export interface CosignedCheckpoint {
  checkpoint: Checkpoint;
  /** The log signature verified (when log verifiers were given). */
  logVerified: boolean;
  /** The cosigners (witnesses, by name) with a verified cosignature line (0x04 or 0x06), once each, with the signed time (POSIX seconds) of the first. */
  cosigners: { name: string; timestamp: bigint }[];
}

/**
 * A checkpoint note with cosignature lines (SPEC §5, C2SP tlog-cosignature): every given cosigner
 * (type 0x04 Ed25519 or 0x06 ML-DSA-44 vkeys) must have a valid line unless `quorum` (an integer
 * ≥ 1) says how many suffice. Cosigners are WITNESSES, one per name (SPEC §4.1, src/verify/quorum.ts):
 * a witness's Ed25519 and ML-DSA-44 lines are one vote; one key under two names is `usage` (a
 * cosignature/v1 signature does not cover the key name, so it would count twice). With `log` verifiers (0x01 or 0x06),
 * the log's own signature must verify too, by a log key named after the checkpoint's origin
 * (`checkpoint_wrong_origin` otherwise). ML-DSA-44 needs Node ≥ 24.6 (KeyError `mldsa_unsupported`
 * otherwise).
 */
export function verifyCosignedCheckpoint(
  note: string,
  opts: { cosigners: readonly NoteVerifier[]; log?: readonly NoteVerifier[]; quorum?: number },
): CosignedCheckpoint {
  if (opts.cosigners.some((v) => !isCosignerType(v.type)))
    throw new VerificationError('usage', 'cosigner keys must be cosignature/v1 (type 0x04) or subtree/v1 (type 0x06) vkeys');
  const policy = cosignerQuorum(opts.cosigners, opts.quorum);
  const log = opts.log ?? [];
  let verified: VerifiedNote;
  try {
    verified = verifyNote(note, [...log, ...opts.cosigners]);
  } catch (e) {
    return rethrow('cosignature_invalid', 'cosigned checkpoint', e);
  }
  const checkpoint = (() => {
    try {
      return parseCheckpoint(verified.text);
    } catch (e) {
      return rethrow('checkpoint_invalid', 'checkpoint', e);
    }
  })();
  checkEmptyTree(checkpoint);
  const logVerified = checkLogSignature(verified, log, checkpoint);
  return { checkpoint, logVerified, cosigners: countedCosigners(verified, policy) };
}

/** A tlog-proof for an entry (bytes) or leaf hash, under the log's key(s). */
export function verifyTlogProofFile(
  text: string,
  leaf: { data: Uint8Array } | { hash: Uint8Array },
  verifiers: readonly NoteVerifier[],
  origin?: string,
): VerifiedTlogProof {
  try {
    return verifyTlogProof(text, leaf, verifiers, origin === undefined ? {} : { origin });
  } catch (e) {
    const code =
      e instanceof ProofError && e.code === 'inclusion_proof_invalid'
        ? 'inclusion_invalid'
        : e instanceof NoteError && e.code === 'origin_mismatch'
          ? 'checkpoint_wrong_origin'
          : 'tlog_proof_invalid';
    return rethrow(code, 'tlog-proof', e);
  }
}

/** The witness cosignature alone (no inclusion): Ed25519 over the cosign message under the pinned key. */
export function verifyAnchorCosignature(
  anchor: Anchor,
  cosignature: CosignatureWire,
  witness: Pick<PinnedWitness, 'publicKey' | 'name'>,
): void {
  if (witness.name !== undefined && cosignature.witness_name !== witness.name) {
    throw new VerificationError('wrong_witness', `cosignature is by ${cosignature.witness_name}, expected ${witness.name}`);
  }
  if (!hexIsBytes(cosignature.witness_public_key, witness.publicKey))
    throw new VerificationError('wrong_witness', 'the cosignature names another witness key than the pinned one');
  let signature: Uint8Array;
  try {
    signature = decodeHex(cosignature.signature, 64);
  } catch {
    throw new VerificationError('malformed_response', 'cosignature.signature must be 64 bytes of hex');
  }
  if (!verifyEd25519(witness.publicKey, cosignMessage(anchor), signature))
    throw new VerificationError('cosignature_invalid', 'the cosignature does not verify under the pinned witness key');
}
