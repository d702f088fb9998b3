/**
 * The note signature bytes both C2SP tlog-cosignature types carry after the key ID: u64be(T) ‖
 * signature, for Ed25519 `cosignature/v1` (cosignature.ts) and ML-DSA-44 `subtree/v1`
 * (subtree-message.ts). No node: import: the portable verifier uses it too.
 */
import { NoteError } from './errors.ts';
import { parseSignatureLine } from './signed-note.ts';

/** tlog-cosignature: a timestamp MUST NOT exceed 2^63 − 1. */
export const MAX_COSIGNATURE_TIMESTAMP = (1n << 63n) - 1n;

/** u64be(timestamp) ‖ signature; the caller has checked both. */
export function encodeTimestampedSignature(timestamp: bigint, signature: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + signature.length);
  new DataView(out.buffer).setBigUint64(0, timestamp);
  out.set(signature, 8);
  return out;
}

/**
 * Split `bytes` (after the key ID) into T and signature: exactly `length` bytes, T ≤ 2^63 − 1
 * (NoteError `malformed_cosignature`; `what` names the type in the message).
 */
export function decodeTimestampedSignature(bytes: Uint8Array, length: number, what: string): { timestamp: bigint; signature: Uint8Array } {
  if (bytes.length !== length) throw new NoteError('malformed_cosignature', `${what} must be 4 + ${length} bytes, got 4 + ${bytes.length}`);
  const timestamp = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0);
  if (timestamp > MAX_COSIGNATURE_TIMESTAMP) throw new NoteError('malformed_cosignature', 'cosignature timestamp above 2^63 − 1');
  return { timestamp, signature: bytes.subarray(8) };
}

/** Parse one cosignature line (with or without its final newline) and split its bytes with `decode`. */
export function parseTimestampedLine(
  line: string,
  decode: (bytes: Uint8Array) => { timestamp: bigint; signature: Uint8Array },
): { name: string; keyId: number; timestamp: bigint; signature: Uint8Array } {
  let sig;
  try {
    sig = parseSignatureLine(line);
  } catch (err) {
    throw new NoteError('malformed_cosignature', `not a note signature line: ${(err as Error).message}`);
  }
  const { timestamp, signature } = decode(sig.signature);
  return { name: sig.name, keyId: sig.keyId, timestamp, signature };
}
