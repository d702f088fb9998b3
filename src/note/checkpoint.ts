/**
 * C2SP tlog-checkpoint note text:
 *
 *   <origin>\n
 *   <tree size, decimal, no leading zeros>\n
 *   <base64 RFC 6962 root hash, 32 bytes>\n
 *   [<extension line>\n …]
 *
 * Plus validateName, the SPEC §1 rule for names this node chooses for itself (witness name, log
 * origin). Origins of other logs are only required to be non-empty lines, as tlog-checkpoint says
 * clients must not assume anything more.
 */
import { decodeBase64, encodeBase64 } from '../encoding/base64.ts';
import { NoteError } from './errors.ts';
import { checkNoteCharacters } from './signed-note.ts';

export interface Checkpoint {
  origin: string;
  /** Tree size; sizes above 2^53 − 1 are refused as malformed. */
  size: number;
  /** 32-byte RFC 6962 root hash. */
  rootHash: Uint8Array;
  /** Extension lines (non-empty, without newline); usually none. */
  extensions: string[];
}

/** SHA-256 of the empty string: the root of the empty tree. */
export const EMPTY_TREE_ROOT_B64 = '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=';

const DECIMAL_RE = /^(?:0|[1-9][0-9]{0,15})$/;

function malformed(message: string): NoteError {
  return new NoteError('malformed_checkpoint', message);
}

/** A canonical decimal (`0|[1-9][0-9]*`) that is a safe integer, or null. */
export function parseCanonicalSize(text: string): number | null {
  if (!DECIMAL_RE.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

/** Parse checkpoint note text (the note text, ending in \n, not the signed note). */
export function parseCheckpoint(text: string): Checkpoint {
  try {
    checkNoteCharacters(text, 'checkpoint');
  } catch (err) {
    throw malformed((err as Error).message);
  }
  if (!text.endsWith('\n')) throw malformed('checkpoint text must end with a newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) throw malformed('checkpoint needs origin, size and root hash lines');
  const [origin, sizeText, rootText, ...extensions] = lines as [string, string, string, ...string[]];
  if (origin === '') throw malformed('empty origin line');
  const size = parseCanonicalSize(sizeText);
  if (size === null) throw malformed('tree size must be a decimal without leading zeros, at most 2^53 − 1');
  let rootHash: Uint8Array;
  try {
    rootHash = decodeBase64(rootText, 32);
  } catch {
    throw malformed('root hash must be canonical base64 of 32 bytes');
  }
  if (extensions.some((l) => l === '')) throw malformed('empty extension line');
  return { origin, size, rootHash, extensions };
}

/** Format checkpoint note text; refuses values parseCheckpoint would not give back. */
export function formatCheckpoint(cp: Checkpoint): string {
  if (!Number.isSafeInteger(cp.size) || cp.size < 0) throw malformed('tree size must be a non-negative safe integer');
  if (cp.rootHash.length !== 32) throw malformed('root hash must be 32 bytes');
  const text = `${[cp.origin, String(cp.size), encodeBase64(cp.rootHash), ...cp.extensions].join('\n')}\n`;
  parseCheckpoint(text); // origin and extension lines: non-empty, no newline or control characters
  return text;
}

/**
 * SPEC §1 names (witness `--name`, `--log-origin`): 1–255 bytes of 0x21–0x7E, no `+`, and a `.`
 * before the first `/` (or anywhere, when there is no `/`), i.e. a schema-less URL whose host
 * part looks like a domain name.
 */
export function isValidName(name: string): boolean {
  if (!/^[\x21-\x2a\x2c-\x7e]{1,255}$/.test(name)) return false;
  const slash = name.indexOf('/');
  return (slash < 0 ? name : name.slice(0, slash)).includes('.');
}

/** Throws NoteError `invalid_name` unless isValidName(name). */
export function validateName(name: string): void {
  if (!isValidName(name)) {
    throw new NoteError('invalid_name', 'names are 1–255 characters 0x21–0x7E without "+", with a "." before the first "/"');
  }
}
