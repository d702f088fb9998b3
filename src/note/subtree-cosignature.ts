/**
 * ML-DSA-44 `subtree/v1` cosignatures (type 0x06) with node:crypto: signing and verifying lines
 * over checkpoints (start 0, end = size, hash = root) and over subtrees (any [start, end), T = 0
 * when start ≠ 0). The byte rules are subtree-message.ts (shared with the portable verifier).
 * Nothing here reads a clock: timestamps are parameters. Signing runs on the calling thread; the
 * cosign role signs on its worker pool instead (src/cosign/sign-pool.ts).
 */
import type { KeyObject } from 'node:crypto';
import { mlDsa44PublicKeyBytes, signMlDsa44, verifyMlDsa44 } from '../crypto/ml-dsa.ts';
import { computeKeyId } from './key-id.ts';
import { SIG_TYPE_SUBTREE_V1 } from './signed-note.ts';
import {
  checkpointStatement,
  decodeSubtreeSignatureBytes,
  formatSubtreeCosignatureLine,
  subtreeMessage,
  type SubtreeCosignature,
  type SubtreeStatement,
} from './subtree-message.ts';

export {
  SUBTREE_V1_BLOB_LENGTH,
  SUBTREE_V1_LABEL,
  SUBTREE_V1_SIGNATURE_LENGTH,
  checkpointStatement,
  checkpointSubtreeMessage,
  decodeSubtreeSignatureBytes,
  encodeSubtreeSignatureBytes,
  formatSubtreeCosignatureLine,
  parseSubtreeCosignatureLine,
  subtreeMessage,
  type SubtreeCosignature,
  type SubtreeStatement,
} from './subtree-message.ts';

/** The type-0x06 key ID of an ML-DSA-44 key under `name`. */
export function subtreeKeyId(name: string, publicKey: Uint8Array): number {
  return computeKeyId(name, SIG_TYPE_SUBTREE_V1, publicKey);
}

/**
 * Sign a statement with an ML-DSA-44 private key and return the note line
 * `— <name> base64(keyID ‖ T ‖ sig)\n`. Throws `invalid_subtree_message` on a field that breaks the
 * format (see subtreeMessage).
 */
export function signSubtreeStatement(privateKey: KeyObject, statement: SubtreeStatement): string {
  const message = subtreeMessage(statement);
  const keyId = subtreeKeyId(statement.name, mlDsa44PublicKeyBytes(privateKey));
  return formatSubtreeCosignatureLine({
    name: statement.name,
    keyId,
    timestamp: statement.timestamp,
    signature: signMlDsa44(privateKey, message),
  });
}

/** Cosign a checkpoint note text (no extension lines) at T: the add-checkpoint line of an ML-DSA-44 key. */
export function signCheckpointSubtree(privateKey: KeyObject, name: string, checkpointText: string, timestamp: bigint | number): string {
  return signSubtreeStatement(privateKey, checkpointStatement(name, checkpointText, timestamp));
}

/**
 * Verify a parsed subtree/v1 line's signature over a statement whose name and timestamp are the
 * line's. The caller matches name and key ID to its key; false on any mismatch or bad field.
 */
export function verifySubtreeCosignature(
  publicKey: Uint8Array,
  line: SubtreeCosignature,
  subtree: { origin: string; start: bigint | number; end: bigint | number; hash: Uint8Array },
): boolean {
  if (line.keyId !== subtreeKeyId(line.name, publicKey)) return false;
  let message: Uint8Array;
  try {
    message = subtreeMessage({ name: line.name, timestamp: line.timestamp, ...subtree });
  } catch {
    return false;
  }
  return verifyMlDsa44(publicKey, message, line.signature);
}

/**
 * Verify a subtree/v1 line over a checkpoint note text: start 0, end = size, hash = root, any T;
 * false for a checkpoint with extension lines or an origin over 255 bytes.
 */
export function verifyCheckpointSubtreeCosignature(publicKey: Uint8Array, line: SubtreeCosignature, checkpointText: string): boolean {
  let s: SubtreeStatement;
  try {
    s = checkpointStatement(line.name, checkpointText, line.timestamp);
  } catch {
    return false;
  }
  return verifySubtreeCosignature(publicKey, line, s);
}

/** Split signature bytes and verify them as a subtree/v1 signature of `statement` (name, T from the bytes). */
export function verifySubtreeSignatureBytes(
  publicKey: Uint8Array,
  name: string,
  keyId: number,
  signatureBytes: Uint8Array,
  subtree: { origin: string; start: bigint | number; end: bigint | number; hash: Uint8Array },
): boolean {
  let decoded;
  try {
    decoded = decodeSubtreeSignatureBytes(signatureBytes);
  } catch {
    return false;
  }
  return verifySubtreeCosignature(publicKey, { name, keyId, ...decoded }, subtree);
}
