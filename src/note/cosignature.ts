/**
 * C2SP tlog-cosignature, Ed25519 `cosignature/v1` (signature type 0x04).
 *
 * Signed message: `cosignature/v1\ntime <T>\n` followed by the whole checkpoint note text.
 * Signature bytes in the note line: key ID (4) ‖ u64be(T) ‖ Ed25519 signature (64), 76 bytes.
 * Timestamps are POSIX seconds, at most 2^63 − 1, handled as bigint. Signing is a Cosigner's
 * (cosigner.ts), verifying a NoteVerifier's (vkey.ts).
 */
import { NoteError } from './errors.ts';
import { formatSignatureLine } from './signed-note.ts';
import {
  MAX_COSIGNATURE_TIMESTAMP,
  decodeTimestampedSignature,
  encodeTimestampedSignature,
  parseTimestampedLine,
} from './timestamped-signature.ts';

export { MAX_COSIGNATURE_TIMESTAMP };
/** Length of a cosignature/v1 signature after the key ID: u64 timestamp ‖ 64-byte Ed25519 signature. */
export const COSIGNATURE_V1_SIGNATURE_LENGTH = 72;

export interface Cosignature {
  /** Cosigner (witness) key name. */
  name: string;
  keyId: number;
  /** POSIX seconds, 0 ≤ timestamp ≤ 2^63 − 1. */
  timestamp: bigint;
  /** The 64-byte Ed25519 signature over cosignatureMessage(text, timestamp). */
  signature: Uint8Array;
}

/** A timestamp as bigint: a non-negative safe integer number or a bigint ≤ 2^63 − 1. */
export function toCosignatureTimestamp(timestamp: bigint | number): bigint {
  if (typeof timestamp === 'number') {
    if (!Number.isSafeInteger(timestamp) || timestamp < 0)
      throw new NoteError('invalid_timestamp', 'timestamp must be a non-negative integer');
    return BigInt(timestamp);
  }
  if (timestamp < 0n || timestamp > MAX_COSIGNATURE_TIMESTAMP)
    throw new NoteError('invalid_timestamp', 'timestamp must be in [0, 2^63 − 1]');
  return timestamp;
}

const ENCODER = new TextEncoder();

/** The cosignature/v1 signed message for a checkpoint note text (which includes its final newline). */
export function cosignatureMessage(checkpointText: string | Uint8Array, timestamp: bigint | number): Uint8Array {
  const t = toCosignatureTimestamp(timestamp);
  const header = ENCODER.encode(`cosignature/v1\ntime ${t}\n`);
  const text = typeof checkpointText === 'string' ? ENCODER.encode(checkpointText) : checkpointText;
  const out = new Uint8Array(header.length + text.length);
  out.set(header, 0);
  out.set(text, header.length);
  return out;
}

/** u64be(timestamp) ‖ signature: the note signature bytes after the key ID. */
export function encodeCosignatureBytes(timestamp: bigint | number, signature: Uint8Array): Uint8Array {
  if (signature.length !== 64) throw new NoteError('malformed_cosignature', 'Ed25519 signature must be 64 bytes');
  return encodeTimestampedSignature(toCosignatureTimestamp(timestamp), signature);
}

/** Split the note signature bytes after the key ID into timestamp and Ed25519 signature. */
export function decodeCosignatureBytes(bytes: Uint8Array): { timestamp: bigint; signature: Uint8Array } {
  return decodeTimestampedSignature(bytes, COSIGNATURE_V1_SIGNATURE_LENGTH, 'cosignature/v1');
}

/** `— <name> <base64(keyId ‖ u64be(timestamp) ‖ signature)>\n` */
export function formatCosignatureLine(c: Cosignature): string {
  return formatSignatureLine({ name: c.name, keyId: c.keyId, signature: encodeCosignatureBytes(c.timestamp, c.signature) });
}

/** Parse one cosignature/v1 line (with or without its final newline). */
export function parseCosignatureLine(line: string): Cosignature {
  return parseTimestampedLine(line, decodeCosignatureBytes);
}
