/**
 * C2SP tlog-proof (`c2sp.org/tlog-proof@v1`), an offline-verifiable inclusion proof:
 *
 *   c2sp.org/tlog-proof@v1\n
 *   [extra <base64>\n]                 (optional, opaque, unauthenticated)
 *   index <decimal, no leading zeros>\n
 *   <base64 32-byte hash>\n …          (RFC 6962 audit path, leaf's sibling first)
 *   \n
 *   <checkpoint signed note, verbatim>
 *
 * This project never emits an `extra` line, but parses one. Parsing and formatting only, with no
 * node: import (the browser verifier, src/verify, parses with it); verification is tlog-proof-verify.ts.
 */
import { decodeBase64, encodeBase64 } from '../encoding/base64.ts';
import type { Checkpoint } from './checkpoint.ts';
import { parseCanonicalSize, parseCheckpoint } from './checkpoint.ts';
import { NoteError } from './errors.ts';
import type { Note } from './signed-note.ts';
import { checkNoteCharacters, decodeUtf8, parseNote } from './signed-note.ts';

export const TLOG_PROOF_HEADER = 'c2sp.org/tlog-proof@v1';
/** Most inclusion proof lines accepted (a tree of ≤ 2^53 − 1 leaves needs at most 53). */
export const MAX_TLOG_PROOF_HASHES = 63;

export interface TlogProof {
  /** Opaque extra data (never emitted by this project; not authenticated). */
  extra?: Uint8Array;
  /** Zero-based index of the entry. */
  index: number;
  /** The inclusion proof hashes (32 bytes each), leaf's sibling first. */
  proof: Uint8Array[];
  /** The checkpoint signed note, verbatim (text and signature lines). */
  checkpoint: string;
}

export interface ParsedTlogProof extends TlogProof {
  /** The checkpoint note, parsed (signatures not verified). */
  note: Note;
  /** The checkpoint note text, parsed. */
  tree: Checkpoint;
}

function malformed(message: string): NoteError {
  return new NoteError('malformed_tlog_proof', message);
}

function parseNoteParts(checkpoint: string): { note: Note; tree: Checkpoint } {
  let note: Note;
  let tree: Checkpoint;
  try {
    note = parseNote(checkpoint);
    tree = parseCheckpoint(note.text);
  } catch (err) {
    throw malformed(`checkpoint: ${(err as Error).message}`);
  }
  return { note, tree };
}

/** Parse a tlog-proof (string, or bytes that must be valid UTF-8). Signatures are not verified. */
export function parseTlogProof(input: string | Uint8Array): ParsedTlogProof {
  let text: string;
  try {
    text = typeof input === 'string' ? input : decodeUtf8(input, 'tlog-proof');
    checkNoteCharacters(text, 'tlog-proof');
  } catch (err) {
    throw malformed((err as Error).message);
  }
  const blank = text.indexOf('\n\n');
  if (blank < 0) throw malformed('no blank line before the checkpoint');
  const lines = text.slice(0, blank).split('\n');
  const checkpoint = text.slice(blank + 2);
  if (lines[0] !== TLOG_PROOF_HEADER) throw malformed(`first line must be ${TLOG_PROOF_HEADER}`);
  let i = 1;
  let extra: Uint8Array | undefined;
  if (lines[i]?.startsWith('extra ') === true) {
    try {
      extra = decodeBase64(lines[i]!.slice('extra '.length));
    } catch {
      throw malformed('extra data must be canonical padded base64');
    }
    i++;
  }
  const indexLine = lines[i] ?? '';
  const index = indexLine.startsWith('index ') ? parseCanonicalSize(indexLine.slice('index '.length)) : null;
  if (index === null) throw malformed('expected "index <decimal without leading zeros>"');
  i++;
  const hashLines = lines.slice(i);
  if (hashLines.length > MAX_TLOG_PROOF_HASHES) throw malformed(`more than ${MAX_TLOG_PROOF_HASHES} proof hashes`);
  const proof = hashLines.map((l) => {
    try {
      return decodeBase64(l, 32);
    } catch {
      throw malformed('proof lines must be canonical base64 of 32 bytes');
    }
  });
  const { note, tree } = parseNoteParts(checkpoint);
  const parsed: ParsedTlogProof = { index, proof, checkpoint, note, tree };
  if (extra !== undefined) parsed.extra = extra;
  return parsed;
}

/** The last checkpoint text formatTlogProof found parsable (a server formats many proofs per checkpoint). */
let lastParsableCheckpoint: string | undefined;

/** Format a tlog-proof; the checkpoint must be a parsable checkpoint note. */
export function formatTlogProof(p: TlogProof): string {
  for (const h of p.proof) if (h.length !== 32) throw malformed('proof hashes must be 32 bytes');
  return tlogProofText(p.index, p.proof.map(encodeBase64), p.checkpoint, p.extra);
}

/**
 * formatTlogProof with the proof hashes already in base64 (each the standard encoding of a 32-byte
 * hash, as encodeBase64 writes it; only that shape is checked here, not the alphabet), for a caller
 * that encoded them for another use too: the anchor role's inclusion body lists the same hashes
 * beside its tlog-proof (src/log/proofs.ts).
 */
export function formatTlogProofBase64(index: number, hashes: readonly string[], checkpoint: string): string {
  // 32 bytes are 44 characters with exactly one '=' of padding (31 bytes end in '==')
  for (const h of hashes)
    if (h.length !== 44 || h.charCodeAt(43) !== 0x3d || h.charCodeAt(42) === 0x3d) throw malformed('proof hashes must be 32 bytes');
  return tlogProofText(index, hashes, checkpoint, undefined);
}

function tlogProofText(index: number, hashes: readonly string[], checkpoint: string, extra: Uint8Array | undefined): string {
  if (!Number.isSafeInteger(index) || index < 0) throw malformed('index must be a non-negative safe integer');
  if (hashes.length > MAX_TLOG_PROOF_HASHES) throw malformed(`more than ${MAX_TLOG_PROOF_HASHES} proof hashes`);
  if (checkpoint !== lastParsableCheckpoint) {
    parseNoteParts(checkpoint);
    lastParsableCheckpoint = checkpoint;
  }
  let out = `${TLOG_PROOF_HEADER}\n`;
  if (extra !== undefined) out += `extra ${encodeBase64(extra)}\n`;
  out += `index ${index}\n`;
  for (const h of hashes) out += `${h}\n`;
  return `${out}\n${checkpoint}`;
}
