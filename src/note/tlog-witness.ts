/**
 * The C2SP tlog-witness wire format (c2sp.org/tlog-witness; SPEC §5, §5.4), both ends: the witness
 * parses requests and formats replies, a client (the witnessed own log, src/log-witness; tests and
 * benchmarks) formats requests and parses replies. Pure: no I/O, no clock; signatures are not
 * verified here.
 *
 * add-checkpoint request:                       sign-subtree request:
 *   old <size>\n                                  subtree <start> <end>\n   (u64 decimals)
 *   <base64 32-byte hash>\n   (0..63 proof lines)  <base64 32-byte subtree hash>\n
 *   \n                                            <base64 32-byte hash>\n   (0..63 proof lines)
 *   <checkpoint signed note>                      \n
 *                                                 <checkpoint signed note>
 *
 * Decimals have no leading zeros, hashes are canonical padded base64, the body is UTF-8 without
 * `\r`, the note a signed note (signed-note.ts) whose text is a checkpoint (checkpoint.ts). A body
 * that breaks any rule is an AddCheckpointRequestError / SignSubtreeRequestError
 * (`malformed_request`, HTTP 400). Whether [start, end) is a valid subtree is the next check, not
 * the parser's.
 *
 * Replies: 200 = signature lines (`— <name> <base64>\n`, at most MAX_REPLY_LINES); an
 * add-checkpoint 409 = `<size>\n`, the size the witness last cosigned for the origin.
 */
import { decodeBase64, encodeBase64 } from '../encoding/base64.ts';
import { parseDecimal } from '../encoding/decimal.ts';
import { parseCanonicalSize, parseCheckpoint, type Checkpoint } from './checkpoint.ts';
import { AddCheckpointRequestError, SignSubtreeRequestError } from './errors.ts';
import { decodeUtf8, parseNote, parseSignatureLines, type Note, type NoteSignature } from './signed-note.ts';

/** Most consistency proof lines a request may carry (tlog-witness: clients MUST NOT send more). */
export const MAX_PROOF_LINES = 63;
/** Most signature lines read from one 200 reply (signed-note verifiers accept at least 16). */
export const MAX_REPLY_LINES = 64;
/** start and end are u64 in the signed subtree/v1 message. */
const U64_LIMIT = 1n << 64n;

export interface AddCheckpointRequest {
  /** The size the client believes this witness last cosigned for the origin (0 = never). */
  oldSize: number;
  /** RFC 6962 consistency proof from oldSize to the checkpoint's size (32-byte hashes). */
  proof: Uint8Array[];
  /** The signed note as sent (text and every signature line). */
  note: Note;
  /** The note text, parsed as a checkpoint. */
  checkpoint: Checkpoint;
}

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

type Fail = (message: string) => Error;
const addCheckpointFail: Fail = (message) => new AddCheckpointRequestError(message);
const signSubtreeFail: Fail = (message) => new SignSubtreeRequestError(message);

// ---- add-checkpoint -------------------------------------------------------------------------

/** Parse an add-checkpoint request body (bytes, which must be UTF-8, or a string). */
export function parseAddCheckpointRequest(body: Uint8Array | string): AddCheckpointRequest {
  const fail = addCheckpointFail;
  const { header, noteText } = splitRequest(body, fail);
  const oldLine = header[0]!;
  const oldSize = oldLine.startsWith('old ') ? parseCanonicalSize(oldLine.slice(4)) : null;
  if (oldSize === null) throw fail('first line must be "old <size>", a decimal without leading zeros');
  const proof = parseProofLines(header.slice(1), fail);
  return { oldSize, proof, ...parseCheckpointNote(noteText, fail) };
}

/** Format an add-checkpoint request body (the client side). */
export function formatAddCheckpointRequest(oldSize: number, proof: readonly Uint8Array[], signedNote: string): string {
  const fail = addCheckpointFail;
  if (!Number.isSafeInteger(oldSize) || oldSize < 0) throw fail('old size must be a non-negative safe integer');
  return `old ${oldSize}\n${formatProofLines(proof, fail)}\n${signedNote}`;
}

// ---- sign-subtree ---------------------------------------------------------------------------

const SUBTREE_LINE_RE = /^subtree ([0-9]+) ([0-9]+)$/;

function parseIndex(text: string, what: string): bigint {
  try {
    return parseDecimal(text, U64_LIMIT);
  } catch {
    throw signSubtreeFail(`subtree ${what} must be a decimal without leading zeros, below 2^64`);
  }
}

/** Parse a sign-subtree request body (bytes, which must be UTF-8, or a string). */
export function parseSignSubtreeRequest(body: Uint8Array | string): SignSubtreeRequest {
  const fail = signSubtreeFail;
  const { header, noteText } = splitRequest(body, fail);
  const m = SUBTREE_LINE_RE.exec(header[0]!);
  if (m === null) throw fail('first line must be "subtree <start> <end>"');
  const start = parseIndex(m[1]!, 'start');
  const end = parseIndex(m[2]!, 'end');
  if (header.length < 2) throw fail('second line must be the subtree hash');
  let subtreeHash: Uint8Array;
  try {
    subtreeHash = decodeBase64(header[1]!, 32);
  } catch {
    throw fail('subtree hash line is not canonical padded base64 of 32 bytes');
  }
  const proof = parseProofLines(header.slice(2), fail);
  return { start, end, subtreeHash, proof, ...parseCheckpointNote(noteText, fail) };
}

/** Format a sign-subtree request body (the client side). */
export function formatSignSubtreeRequest(
  start: bigint,
  end: bigint,
  subtreeHash: Uint8Array,
  proof: readonly Uint8Array[],
  signedNote: string,
): string {
  const fail = signSubtreeFail;
  if (start < 0n || end < 0n || start >= U64_LIMIT || end >= U64_LIMIT) throw fail('start and end must be u64 values');
  if (subtreeHash.length !== 32) throw fail('the subtree hash must be 32 bytes');
  return `subtree ${start} ${end}\n${encodeBase64(subtreeHash)}\n${formatProofLines(proof, fail)}\n${signedNote}`;
}

// ---- replies --------------------------------------------------------------------------------

/** The 200 body: signature lines, in key order. */
export function formatCosignatureReply(lines: readonly string[]): string {
  return lines.join('');
}

/** The signature lines of a 200 body (at most MAX_REPLY_LINES). Throws NoteError `malformed_note`. */
export function parseCosignatureReply(body: string): NoteSignature[] {
  return parseSignatureLines(body, MAX_REPLY_LINES);
}

/** The add-checkpoint 409 body: the size last cosigned for the origin. */
export function formatConflictReply(size: number): string {
  return `${size}\n`;
}

/** The size of an add-checkpoint 409 body (`<size>\n`, canonical decimal; the newline may be missing), or null. */
export function parseConflictReply(body: string): number | null {
  const m = /^([0-9]+)\n?$/.exec(body);
  return m === null ? null : parseCanonicalSize(m[1]!);
}

// ---- the shared grammar ---------------------------------------------------------------------

/**
 * UTF-8 without `\r`, header lines, an empty line, a signed checkpoint note: `header` holds the
 * lines before the empty line (at least one), `noteText` the rest.
 */
function splitRequest(body: Uint8Array | string, fail: Fail): { header: string[]; noteText: string } {
  let text: string;
  if (typeof body === 'string') {
    if (!body.isWellFormed()) throw fail('request body is not valid UTF-8');
    text = body;
  } else {
    try {
      text = decodeUtf8(body, 'request body');
    } catch {
      throw fail('request body is not valid UTF-8');
    }
  }
  if (text.includes('\r')) throw fail('request body contains a carriage return (lines end in \\n only)');
  const blank = text.indexOf('\n\n');
  if (blank < 0) throw fail('request body needs an empty line between the proof and the checkpoint');
  return { header: text.slice(0, blank).split('\n'), noteText: text.slice(blank + 2) };
}

/** At most MAX_PROOF_LINES lines, each canonical padded base64 of a 32-byte hash. */
function parseProofLines(lines: readonly string[], fail: Fail): Uint8Array[] {
  if (lines.length > MAX_PROOF_LINES) throw fail(`more than ${MAX_PROOF_LINES} consistency proof lines`);
  return lines.map((line, i) => {
    try {
      return decodeBase64(line, 32);
    } catch {
      throw fail(`consistency proof line ${i + 1} is not canonical padded base64 of 32 bytes`);
    }
  });
}

/** The signed note (signed-note.ts) whose text is a checkpoint (checkpoint.ts). */
function parseCheckpointNote(noteText: string, fail: Fail): { note: Note; checkpoint: Checkpoint } {
  try {
    const note = parseNote(noteText);
    return { note, checkpoint: parseCheckpoint(note.text) };
  } catch (e) {
    throw fail(`checkpoint: ${(e as Error).message}`);
  }
}

/** The proof lines of a request body: at most MAX_PROOF_LINES 32-byte hashes, padded base64, one a line. */
function formatProofLines(proof: readonly Uint8Array[], fail: Fail): string {
  if (proof.length > MAX_PROOF_LINES) throw fail(`more than ${MAX_PROOF_LINES} consistency proof lines`);
  let out = '';
  for (const h of proof) {
    if (h.length !== 32) throw fail('proof hashes must be 32 bytes');
    out += `${encodeBase64(h)}\n`;
  }
  return out;
}
