/**
 * C2SP tlog-cosignature ML-DSA-44 cosignatures, `subtree/v1` (signature type 0x06), the byte
 * rules only (SPEC §5.2; research/pq-cosign.md §1.2). No node: import: the portable verifier
 * (src/verify) builds its messages here too; signing is a Cosigner's (cosigner.ts), node:crypto
 * verification a NoteVerifier's (vkey.ts).
 *
 *   message = "subtree/v1\n\0" (12) ‖ u8 |name| ‖ name ‖ u64be T ‖ u8 |origin| ‖ origin
 *             ‖ u64be start ‖ u64be end ‖ hash (32)              name, origin: 1..255 bytes
 *   line    = "— " name " " base64(key ID (4) ‖ u64be T ‖ ML-DSA-44 signature (2420)) "\n"
 *
 * A checkpoint is signed as the subtree [0, size) with hash = root; T ≠ 0 states that this is the
 * largest tree the cosigner saw at T; a subtree with start ≠ 0 must carry T = 0. Extension lines
 * are not covered by the message, so a 0x06 signature over a checkpoint with extension lines is
 * invalid (and never produced). Timestamps and indexes are bigint (u64).
 */
import { decodeBase64 } from '../encoding/base64.ts';
import { EMPTY_TREE_ROOT_B64, parseCheckpoint, type Checkpoint } from './checkpoint.ts';
import { NoteError } from './errors.ts';
import { formatSignatureLine } from './signed-note.ts';
import {
  MAX_COSIGNATURE_TIMESTAMP,
  decodeTimestampedSignature,
  encodeTimestampedSignature,
  parseTimestampedLine,
} from './timestamped-signature.ts';

/** The 12-byte label that starts every subtree/v1 message. */
export const SUBTREE_V1_LABEL: Uint8Array = new TextEncoder().encode('subtree/v1\n\0');
/** ML-DSA-44 signature length. */
export const SUBTREE_V1_MLDSA_SIGNATURE_LENGTH = 2420;
/** Note signature bytes after the key ID: u64be T ‖ 2420-byte signature. */
export const SUBTREE_V1_SIGNATURE_LENGTH = 8 + SUBTREE_V1_MLDSA_SIGNATURE_LENGTH;
/** The whole blob of a line: key ID ‖ T ‖ signature (3244 base64 characters). */
export const SUBTREE_V1_BLOB_LENGTH = 4 + SUBTREE_V1_SIGNATURE_LENGTH;
/** Name and origin are length-prefixed by one byte. */
export const MAX_SUBTREE_NAME_BYTES = 255;

const U64_MAX = (1n << 64n) - 1n;
const ENCODER = new TextEncoder();
const EMPTY_HASH = decodeBase64(EMPTY_TREE_ROOT_B64, 32);

/** What a subtree/v1 signature signs. */
export interface SubtreeStatement {
  /** Cosigner name (the witness name, or the log key's name for a log signature). */
  name: string;
  /** POSIX seconds, ≤ 2^63 − 1; 0 = no "largest tree at T" statement (required when start ≠ 0). */
  timestamp: bigint;
  /** The log's origin line (without its newline). */
  origin: string;
  /** First leaf index of the subtree (0 for a checkpoint). */
  start: bigint;
  /** One past the last leaf index (the tree size for a checkpoint). */
  end: bigint;
  /** The subtree's Merkle hash (the root hash for a checkpoint), 32 bytes. */
  hash: Uint8Array;
}

/** A parsed subtree/v1 signature line. */
export interface SubtreeCosignature {
  name: string;
  keyId: number;
  timestamp: bigint;
  /** The 2420-byte ML-DSA-44 signature. */
  signature: Uint8Array;
}

function invalid(message: string): NoteError {
  return new NoteError('invalid_subtree_message', message);
}

function u64(v: bigint | number, what: string): bigint {
  const b = typeof v === 'number' ? (Number.isSafeInteger(v) ? BigInt(v) : -1n) : v;
  if (b < 0n || b > U64_MAX) throw invalid(`${what} must be an integer in [0, 2^64 − 1]`);
  return b;
}

function lengthPrefixed(text: string, what: string): Uint8Array {
  const bytes = ENCODER.encode(text);
  if (bytes.length < 1 || bytes.length > MAX_SUBTREE_NAME_BYTES) throw invalid(`${what} must be 1..255 bytes, got ${bytes.length}`);
  const out = new Uint8Array(1 + bytes.length);
  out[0] = bytes.length;
  out.set(bytes, 1);
  return out;
}

/**
 * The subtree/v1 signed message. Throws NoteError `invalid_subtree_message` when a field breaks
 * the format's rules: name or origin not 1..255 bytes, T above 2^63 − 1, start > end, a non-zero
 * T with start ≠ 0, a hash that is not 32 bytes, an empty subtree whose hash is not SHA-256("").
 */
export function subtreeMessage(s: {
  name: string;
  timestamp: bigint | number;
  origin: string;
  start: bigint | number;
  end: bigint | number;
  hash: Uint8Array;
}): Uint8Array {
  const t = u64(s.timestamp, 'timestamp');
  if (t > MAX_COSIGNATURE_TIMESTAMP) throw invalid('timestamp must be at most 2^63 − 1');
  const start = u64(s.start, 'start');
  const end = u64(s.end, 'end');
  if (start > end) throw invalid('start must not exceed end');
  if (start !== 0n && t !== 0n) throw invalid('a subtree with start ≠ 0 must carry timestamp 0');
  if (s.hash.length !== 32) throw invalid('hash must be 32 bytes');
  if (start === end && !s.hash.every((b, i) => b === EMPTY_HASH[i]))
    throw invalid('an empty subtree must carry the hash of the empty tree');
  const name = lengthPrefixed(s.name, 'cosigner name');
  const origin = lengthPrefixed(s.origin, 'origin');
  const out = new Uint8Array(SUBTREE_V1_LABEL.length + name.length + 8 + origin.length + 8 + 8 + 32);
  const dv = new DataView(out.buffer);
  let at = 0;
  out.set(SUBTREE_V1_LABEL, at);
  at += SUBTREE_V1_LABEL.length;
  out.set(name, at);
  at += name.length;
  dv.setBigUint64(at, t);
  at += 8;
  out.set(origin, at);
  at += origin.length;
  dv.setBigUint64(at, start);
  dv.setBigUint64(at + 8, end);
  out.set(s.hash, at + 16);
  return out;
}

/**
 * The statement a checkpoint's subtree/v1 signature makes: [0, size) with hash = root, by `name`
 * at `timestamp`. Throws `invalid_subtree_message` for a checkpoint with extension lines or an
 * origin over 255 bytes (they cannot be ML-DSA-44 cosigned), `malformed_checkpoint` for text that
 * is no checkpoint.
 */
export function checkpointStatement(name: string, checkpointText: string, timestamp: bigint | number): SubtreeStatement {
  return statementOfCheckpoint(name, parseCheckpoint(checkpointText), timestamp);
}

/** checkpointStatement for a checkpoint already parsed from its text (parsed once per request). */
export function statementOfCheckpoint(name: string, cp: Checkpoint, timestamp: bigint | number): SubtreeStatement {
  if (cp.extensions.length > 0) throw invalid('ML-DSA-44 cosignatures do not cover checkpoint extension lines');
  const statement = { name, timestamp: u64(timestamp, 'timestamp'), origin: cp.origin, start: 0n, end: BigInt(cp.size), hash: cp.rootHash };
  subtreeMessage(statement); // the length rules
  return statement;
}

/** The subtree/v1 message for a checkpoint (see checkpointStatement). */
export function checkpointSubtreeMessage(name: string, checkpointText: string, timestamp: bigint | number): Uint8Array {
  return subtreeMessage(checkpointStatement(name, checkpointText, timestamp));
}

/** u64be(T) ‖ signature: the note signature bytes after the key ID. */
export function encodeSubtreeSignatureBytes(timestamp: bigint | number, signature: Uint8Array): Uint8Array {
  const t = u64(timestamp, 'timestamp');
  if (t > MAX_COSIGNATURE_TIMESTAMP) throw invalid('timestamp must be at most 2^63 − 1');
  if (signature.length !== SUBTREE_V1_MLDSA_SIGNATURE_LENGTH)
    throw new NoteError('malformed_cosignature', `ML-DSA-44 signature must be ${SUBTREE_V1_MLDSA_SIGNATURE_LENGTH} bytes`);
  return encodeTimestampedSignature(t, signature);
}

/** Split the signature bytes after the key ID: exactly 8 + 2420 bytes, T ≤ 2^63 − 1 (`malformed_cosignature`). */
export function decodeSubtreeSignatureBytes(bytes: Uint8Array): { timestamp: bigint; signature: Uint8Array } {
  return decodeTimestampedSignature(bytes, SUBTREE_V1_SIGNATURE_LENGTH, 'subtree/v1 signature');
}

/** `— <name> <base64(key ID ‖ u64be T ‖ signature)>\n` */
export function formatSubtreeCosignatureLine(c: SubtreeCosignature): string {
  return formatSignatureLine({ name: c.name, keyId: c.keyId, signature: encodeSubtreeSignatureBytes(c.timestamp, c.signature) });
}

/** Parse one subtree/v1 line (with or without its final newline): blob exactly 2432 bytes. */
export function parseSubtreeCosignatureLine(line: string): SubtreeCosignature {
  return parseTimestampedLine(line, decodeSubtreeSignatureBytes);
}

const DECODER = new TextDecoder('utf-8', { fatal: true });

/**
 * The (message, signature) a 0x06 note signature by `name` checks over a checkpoint note text, or
 * null when the signature bytes are malformed or the text cannot be ML-DSA-44 signed (not a
 * checkpoint, extension lines, origin over 255 bytes): such a signature is invalid.
 */
export function checkpointSubtreeInput(
  name: string,
  text: Uint8Array,
  signatureBytes: Uint8Array,
): { message: Uint8Array; signature: Uint8Array; timestamp: bigint } | null {
  try {
    const { timestamp, signature } = decodeSubtreeSignatureBytes(signatureBytes);
    return { message: checkpointSubtreeMessage(name, DECODER.decode(text), timestamp), signature, timestamp };
  } catch {
    return null;
  }
}
