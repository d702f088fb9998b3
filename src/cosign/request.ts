/**
 * The C2SP tlog-witness add-checkpoint request body (c2sp.org/tlog-witness), parsed strictly:
 *
 *   old <size, decimal without leading zeros>\n
 *   <canonical padded base64 of a 32-byte hash>\n      (0..63 consistency proof lines)
 *   \n
 *   <checkpoint signed note>
 *
 * The body must be valid UTF-8 without `\r`; the note must parse as a signed note
 * (src/note/signed-note.ts) whose text is a checkpoint (src/note/checkpoint.ts). Signatures are not
 * verified here. Any failure is an AddCheckpointRequestError (`malformed_request`, HTTP 400).
 *
 * Pure: no I/O, no clock.
 */
import { decodeBase64, encodeBase64 } from '../encoding/base64.ts';
import type { Checkpoint } from '../note/checkpoint.ts';
import { parseCanonicalSize, parseCheckpoint } from '../note/checkpoint.ts';
import type { Note } from '../note/signed-note.ts';
import { decodeUtf8, parseNote } from '../note/signed-note.ts';
import { AddCheckpointRequestError } from './errors.ts';

/** Most consistency proof lines a request may carry (tlog-witness: clients MUST NOT send more). */
export const MAX_PROOF_LINES = 63;

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

function malformed(message: string): AddCheckpointRequestError {
  return new AddCheckpointRequestError(message);
}

/** Parse an add-checkpoint request body (bytes, which must be UTF-8, or a string). */
export function parseAddCheckpointRequest(body: Uint8Array | string): AddCheckpointRequest {
  const { header, noteText } = splitRequest(body, malformed, 'the proof and the checkpoint');
  const oldLine = header[0]!;
  const oldSize = oldLine.startsWith('old ') ? parseCanonicalSize(oldLine.slice(4)) : null;
  if (oldSize === null) throw malformed('first line must be "old <size>", a decimal without leading zeros');
  const proof = parseProofLines(header.slice(1), malformed);
  return { oldSize, proof, ...parseCheckpointNote(noteText, malformed) };
}

/**
 * The shared grammar of the tlog-witness request bodies (add-checkpoint, sign-subtree): UTF-8
 * without `\r`, header lines, an empty line, a signed checkpoint note. `header` holds the lines
 * before the empty line (at least one), `noteText` the rest.
 */
export function splitRequest(
  body: Uint8Array | string,
  fail: (message: string) => Error,
  between: string,
): { header: string[]; noteText: string } {
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
  if (blank < 0) throw fail(`request body needs an empty line between ${between}`);
  return { header: text.slice(0, blank).split('\n'), noteText: text.slice(blank + 2) };
}

/** At most MAX_PROOF_LINES lines, each canonical padded base64 of a 32-byte hash. */
export function parseProofLines(lines: readonly string[], fail: (message: string) => Error): Uint8Array[] {
  if (lines.length > MAX_PROOF_LINES) throw fail(`more than ${MAX_PROOF_LINES} consistency proof lines`);
  return lines.map((line, i) => {
    try {
      return decodeBase64(line, 32);
    } catch {
      throw fail(`consistency proof line ${i + 1} is not canonical padded base64 of 32 bytes`);
    }
  });
}

/** The signed note (src/note/signed-note.ts) whose text is a checkpoint (src/note/checkpoint.ts). */
export function parseCheckpointNote(noteText: string, fail: (message: string) => Error): { note: Note; checkpoint: Checkpoint } {
  try {
    const note = parseNote(noteText);
    return { note, checkpoint: parseCheckpoint(note.text) };
  } catch (e) {
    throw fail(`checkpoint: ${(e as Error).message}`);
  }
}

/** Format a request body (the client side; used by tests and benchmarks). */
export function formatAddCheckpointRequest(oldSize: number, proof: readonly Uint8Array[], signedNote: string): string {
  if (!Number.isSafeInteger(oldSize) || oldSize < 0) throw malformed('old size must be a non-negative safe integer');
  return `old ${oldSize}\n${formatProofLines(proof, malformed)}\n${signedNote}`;
}

/** The proof lines of a request body (the client side): at most MAX_PROOF_LINES 32-byte hashes, padded base64, one a line. */
export function formatProofLines(proof: readonly Uint8Array[], fail: (message: string) => Error): string {
  if (proof.length > MAX_PROOF_LINES) throw fail(`more than ${MAX_PROOF_LINES} consistency proof lines`);
  let out = '';
  for (const h of proof) {
    if (h.length !== 32) throw fail('proof hashes must be 32 bytes');
    out += `${encodeBase64(h)}\n`;
  }
  return out;
}
