/**
 * The C2SP tlog-witness sign-subtree request body (SPEC §5.4), parsed strictly:
 *
 *   subtree <start> <end>\n                              (canonical decimals, < 2^64)
 *   <canonical padded base64 of the 32-byte subtree hash>\n
 *   <canonical padded base64 of a 32-byte hash>\n        (0..63 subtree consistency proof lines)
 *   \n
 *   <checkpoint signed note>
 *
 * The same grammar rules and note parser as add-checkpoint (request.ts): UTF-8, no `\r`, every line
 * ending in `\n`. Whether [start, end) is a valid subtree is the next check, not the parser's.
 * Signatures are not verified here. Any failure is a SignSubtreeRequestError (`malformed_request`,
 * HTTP 400).
 *
 * Pure: no I/O, no clock.
 */
import { decodeBase64, encodeBase64 } from '../encoding/base64.ts';
import { parseDecimal } from '../encoding/decimal.ts';
import type { Checkpoint } from '../note/checkpoint.ts';
import type { Note } from '../note/signed-note.ts';
import { SignSubtreeRequestError } from './errors.ts';
import { formatProofLines, parseCheckpointNote, parseProofLines, splitRequest } from './request.ts';

/** start and end are u64 in the signed subtree/v1 message. */
const U64_LIMIT = 1n << 64n;

export interface SignSubtreeRequest {
  /** The subtree [start, end) of the checkpoint's tree. */
  start: bigint;
  end: bigint;
  /** MTH(D[start:end]), 32 bytes. */
  subtreeHash: Uint8Array;
  /** Subtree consistency proof from the subtree to the checkpoint (32-byte hashes). */
  proof: Uint8Array[];
  /** The reference checkpoint as sent (text and every signature line). */
  note: Note;
  /** The note text, parsed as a checkpoint. */
  checkpoint: Checkpoint;
}

function malformed(message: string): SignSubtreeRequestError {
  return new SignSubtreeRequestError(message);
}

const SUBTREE_LINE_RE = /^subtree ([0-9]+) ([0-9]+)$/;

function parseIndex(text: string, what: string): bigint {
  try {
    return parseDecimal(text, U64_LIMIT);
  } catch {
    throw malformed(`subtree ${what} must be a decimal without leading zeros, below 2^64`);
  }
}

/** Parse a sign-subtree request body (bytes, which must be UTF-8, or a string). */
export function parseSignSubtreeRequest(body: Uint8Array | string): SignSubtreeRequest {
  const { header, noteText } = splitRequest(body, malformed, 'the proof and the checkpoint');
  const m = SUBTREE_LINE_RE.exec(header[0]!);
  if (m === null) throw malformed('first line must be "subtree <start> <end>"');
  const start = parseIndex(m[1]!, 'start');
  const end = parseIndex(m[2]!, 'end');
  if (header.length < 2) throw malformed('second line must be the subtree hash');
  let subtreeHash: Uint8Array;
  try {
    subtreeHash = decodeBase64(header[1]!, 32);
  } catch {
    throw malformed('subtree hash line is not canonical padded base64 of 32 bytes');
  }
  const proof = parseProofLines(header.slice(2), malformed);
  return { start, end, subtreeHash, proof, ...parseCheckpointNote(noteText, malformed) };
}

/** Format a request body (the client side; used by tests and benchmarks). */
export function formatSignSubtreeRequest(
  start: bigint,
  end: bigint,
  subtreeHash: Uint8Array,
  proof: readonly Uint8Array[],
  signedNote: string,
): string {
  if (start < 0n || end < 0n || start >= U64_LIMIT || end >= U64_LIMIT) throw malformed('start and end must be u64 values');
  if (subtreeHash.length !== 32) throw malformed('the subtree hash must be 32 bytes');
  return `subtree ${start} ${end}\n${encodeBase64(subtreeHash)}\n${formatProofLines(proof, malformed)}\n${signedNote}`;
}
