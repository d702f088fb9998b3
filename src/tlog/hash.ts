/**
 * RFC 6962 §2.1 / RFC 9162 §2.1 Merkle tree hashing with SHA-256:
 * leaf hash = SHA-256(0x00 ‖ entry), interior node = SHA-256(0x01 ‖ left ‖ right),
 * empty tree = SHA-256("").
 */
import { hash } from 'node:crypto';
import { TreeError } from './errors.ts';

/** Size in bytes of every tree hash (SHA-256). */
export const HASH_SIZE = 32;

/** SHA-256 as a plain Uint8Array (a view of the 32-byte digest, not a Buffer). */
function sha256(data: Uint8Array): Uint8Array {
  const d = hash('sha256', data, 'buffer');
  return new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
}

/** MTH({}) = SHA-256(""), the root of the empty tree; one constant with the proof walks. */
export { EMPTY_ROOT } from './proof-walk.ts';

/** The leaf hash of one log entry: SHA-256(0x00 ‖ data). */
export function hashLeaf(data: Uint8Array): Uint8Array {
  const buf = Buffer.allocUnsafe(1 + data.length);
  buf[0] = 0x00;
  buf.set(data, 1);
  return sha256(buf);
}

/** The interior node hash: SHA-256(0x01 ‖ left ‖ right). Both children must be 32 bytes. */
export function hashChildren(left: Uint8Array, right: Uint8Array): Uint8Array {
  if (left.length !== HASH_SIZE || right.length !== HASH_SIZE) {
    throw new TreeError('hash_invalid', `child hashes must be ${HASH_SIZE} bytes`);
  }
  const buf = Buffer.allocUnsafe(1 + 2 * HASH_SIZE);
  buf[0] = 0x01;
  buf.set(left, 1);
  buf.set(right, 1 + HASH_SIZE);
  return sha256(buf);
}

/** Byte equality of two hashes (not constant-time: tree hashes are public). */
export function hashEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
