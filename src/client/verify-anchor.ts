/**
 * Offline verification of what an anchor witness returns (SPEC §3.3, §4), against a witness key
 * the client pins — never the key the response carries:
 *  - the cosignature is the pinned key's Ed25519 signature over the cosign message of the anchor;
 *  - the checkpoint is a signed note by the pinned key under the log origin (type 0x01);
 *  - the audit path proves the cosign message's leaf at `leaf_index` under that checkpoint;
 *  - the tlog-proof text carries the same index, path and byte-identical checkpoint.
 */
import { decodeAnchor } from '../anchor/codec.ts';
import { cosignMessage } from '../anchor/messages.ts';
import type { Anchor, AnchorWire } from '../anchor/types.ts';
import { verifyEd25519 } from '../crypto/ed25519.ts';
import { decodeBase64 } from '../encoding/base64.ts';
import { decodeHex, encodeHex } from '../encoding/hex.ts';
import { parseRfc3339 } from '../encoding/time.ts';
import { ProtocolError } from '../errors.ts';
import { parseCheckpoint } from '../note/checkpoint.ts';
import { verifyNote } from '../note/signed-note.ts';
import { parseTlogProof } from '../note/tlog-proof.ts';
import { ed25519NoteVerifier } from '../note/vkey.ts';
import { hashLeaf } from '../tlog/hash.ts';
import { verifyInclusion } from '../tlog/merkle.ts';

export class VerificationError extends ProtocolError {}

export interface AnchorResponseBody {
  anchor: AnchorWire;
  cosignature: { witness_name: string; witness_public_key: string; signature: string; timestamp: string };
  inclusion: { log_origin: string; leaf_index: number; tree_size: number; hashes: string[]; checkpoint: string; tlog_proof: string };
}

export interface PinnedWitness {
  /** Ed25519 public key of the witness. */
  publicKey: Uint8Array;
  /** The witness's log origin (key name of its checkpoints). */
  logOrigin: string;
  name?: string;
}

function fail(code: string, message: string): never {
  throw new VerificationError(code, message);
}

function wrap<T>(code: string, what: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof VerificationError) throw e;
    return fail(code, `${what}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Verify a 200 body of POST /v1/anchor or GET /v1/anchor/{seed}; returns the decoded anchor. */
export function verifyAnchorResponse(body: AnchorResponseBody, witness: PinnedWitness): { anchor: Anchor; treeSize: number; leafIndex: number } {
  const anchor = wrap('malformed_response', 'anchor', () => decodeAnchor(body.anchor));
  const cos = body.cosignature;
  if (witness.name !== undefined && cos.witness_name !== witness.name) fail('wrong_witness', `cosignature is by ${cos.witness_name}, expected ${witness.name}`);
  if (cos.witness_public_key.toLowerCase() !== encodeHex(witness.publicKey)) fail('wrong_witness', 'the response names another witness key');
  wrap('malformed_response', 'cosignature.timestamp', () => parseRfc3339(cos.timestamp));
  const signature = wrap('malformed_response', 'cosignature.signature', () => decodeHex(cos.signature, 64));
  const message = cosignMessage(anchor);
  if (!verifyEd25519(witness.publicKey, message, signature)) fail('cosignature_invalid', 'the cosignature does not verify under the pinned witness key');

  const inc = body.inclusion;
  if (inc.log_origin !== witness.logOrigin) fail('wrong_witness', `log origin ${inc.log_origin}, expected ${witness.logOrigin}`);
  const verifier = ed25519NoteVerifier(witness.logOrigin, witness.publicKey);
  const note = wrap('checkpoint_invalid', 'checkpoint', () => verifyNote(inc.checkpoint, [verifier]));
  const tree = wrap('checkpoint_invalid', 'checkpoint', () => parseCheckpoint(note.text));
  if (tree.origin !== witness.logOrigin) fail('checkpoint_invalid', 'checkpoint origin differs from the log origin');
  if (tree.size !== inc.tree_size) fail('inclusion_invalid', 'tree_size differs from the checkpoint size');
  const hashes = wrap('malformed_response', 'inclusion.hashes', () => inc.hashes.map((h) => decodeBase64(h, 32)));
  if (!verifyInclusion(hashLeaf(message), inc.leaf_index, tree.size, hashes, tree.rootHash)) {
    fail('inclusion_invalid', 'the inclusion proof does not lead to the checkpoint root');
  }
  const tp = wrap('tlog_proof_invalid', 'tlog_proof', () => parseTlogProof(inc.tlog_proof));
  if (tp.checkpoint !== inc.checkpoint) fail('tlog_proof_invalid', 'tlog_proof checkpoint is not byte-identical to checkpoint');
  if (tp.extra !== undefined) fail('tlog_proof_invalid', 'tlog_proof carries an extra line');
  if (tp.index !== inc.leaf_index || tp.proof.length !== hashes.length || tp.proof.some((h, i) => Buffer.compare(h, hashes[i]!) !== 0)) {
    fail('tlog_proof_invalid', 'tlog_proof index or path differs from the inclusion fields');
  }
  return { anchor, treeSize: tree.size, leafIndex: inc.leaf_index };
}
