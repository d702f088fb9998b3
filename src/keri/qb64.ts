/**
 * CESR "Matter" primitives in the text domain (qb64), the few codes a KERI 1.0 KEL uses
 * (research/upstream-kel.md §1.4):
 *
 * | code   | meaning                                   | raw | qb64 |
 * |--------|-------------------------------------------|-----|------|
 * | `D`    | Ed25519 key, transferable                 | 32  | 44   |
 * | `B`    | Ed25519 key, non-transferable             | 32  | 44   |
 * | `1AAJ` | P-256 key (compressed SEC1), transferable | 33  | 48   |
 * | `1AAI` | P-256 key, non-transferable               | 33  | 48   |
 * | `E`    | Blake3-256 digest (SAIDs, prefixes, next-key commitments) | 32 | 44 |
 * | `0A`   | 128-bit number (sequence numbers in `-G` couples)          | 16 | 24 |
 *
 * qb64 = code + base64url(ps zero bytes ‖ raw) with the first ps characters dropped, where
 * ps = (3 − |raw| mod 3) mod 3. Decoding is strict: the alphabet, the length, zero pad bits, and
 * re-encoding must give back the same text (keripy and cesride refuse non-zero pad bits too).
 */
import { KelError } from './errors.ts';

export type KeyCode = 'D' | 'B' | '1AAJ' | '1AAI';
export type MatterCode = KeyCode | 'E' | '0A';

interface Size {
  readonly raw: number;
  readonly full: number;
}
const SIZES: Readonly<Record<MatterCode, Size>> = {
  D: { raw: 32, full: 44 },
  B: { raw: 32, full: 44 },
  E: { raw: 32, full: 44 },
  '1AAJ': { raw: 33, full: 48 },
  '1AAI': { raw: 33, full: 48 },
  '0A': { raw: 16, full: 24 },
};

export const KEY_CODES: readonly KeyCode[] = ['D', 'B', '1AAJ', '1AAI'];
/** Codes an identifier prefix (`i`, `di`, backers, seal `i`) may have. */
export const IDENTIFIER_CODES: readonly MatterCode[] = ['E', 'D', 'B', '1AAJ', '1AAI'];

const B64URL = /^[A-Za-z0-9_-]*$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The 6-bit value of one base64url character, or -1. */
export function b64Value(ch: string): number {
  return ch.length === 1 ? ALPHABET.indexOf(ch) : -1;
}

/** The unsigned integer of a run of base64url characters (counts and indices), or -1 when not base64url. */
export function b64Int(text: string): number {
  let v = 0;
  for (const ch of text) {
    const d = b64Value(ch);
    if (d < 0) return -1;
    v = v * 64 + d;
  }
  return v;
}

/** `width` base64url characters of the unsigned integer `v` (counts and indices). */
export function b64IntText(v: number, width: number): string {
  let out = '';
  let x = v;
  for (let i = 0; i < width; i++) {
    out = ALPHABET[x % 64]! + out;
    x = Math.floor(x / 64);
  }
  if (x !== 0) throw new RangeError(`${v} does not fit in ${width} base64url characters`);
  return out;
}

/**
 * The text of `raw` behind its code: base64url of (`lead` zero bytes ‖ raw) with the first `drop`
 * characters dropped (the code takes their place). `lead` makes the length a multiple of 3.
 */
export function encodeBody(raw: Uint8Array, lead: number, drop: number): string {
  const padded = new Uint8Array(lead + raw.length);
  padded.set(raw, lead);
  return Buffer.from(padded).toString('base64url').slice(drop);
}

/**
 * The raw bytes behind `body`, the inverse of encodeBody: `drop` 'A' characters are put back and
 * the `lead` bytes must be zero (so re-encoding gives back the text). Null when it is not so.
 */
export function decodeBody(body: string, lead: number, drop: number, rawLength: number): Uint8Array | null {
  if (!B64URL.test(body)) return null;
  const text = 'A'.repeat(drop) + body;
  if (text.length % 4 !== 0) return null;
  const bytes = new Uint8Array(Buffer.from(text, 'base64url'));
  if (bytes.length !== lead + rawLength) return null;
  // With the alphabet checked and the length a multiple of 4 (no `=`, no trailing bits), the decode
  // is exact: canonical means the lead (pad) bits are zero, which re-encoding would also check.
  for (let i = 0; i < lead; i++) if (bytes[i] !== 0) return null;
  return bytes.subarray(lead);
}

export function encodeQb64(code: MatterCode, raw: Uint8Array): string {
  const size = SIZES[code];
  if (raw.length !== size.raw) throw new RangeError(`${code} takes ${size.raw} raw bytes, got ${raw.length}`);
  const lead = (3 - (raw.length % 3)) % 3;
  return code + encodeBody(raw, lead, lead);
}

/** The code of a qb64 text: 1 character, or 2 when it starts with a digit 0, or 4 when it starts with 1. */
function codeOf(text: string): MatterCode | null {
  const first = text[0];
  const code = first === '0' ? text.slice(0, 2) : first === '1' ? text.slice(0, 4) : text.slice(0, 1);
  return Object.hasOwn(SIZES, code) ? (code as MatterCode) : null;
}

/**
 * Decode a qb64 primitive whose code is one of `allowed`; null when it is not canonical qb64 of
 * one of them (unknown code, wrong length, bad alphabet, non-zero pad bits).
 */
export function decodeQb64(text: string, allowed: readonly MatterCode[]): { code: MatterCode; raw: Uint8Array } | null {
  const code = codeOf(text);
  if (code === null || !allowed.includes(code)) return null;
  const size = SIZES[code];
  if (text.length !== size.full) return null;
  const lead = (3 - (size.raw % 3)) % 3;
  const raw = decodeBody(text.slice(code.length), lead, lead, size.raw);
  return raw === null ? null : { code, raw };
}

/** decodeQb64 that throws KelError `malformed` (with `what` in the message). */
export function requireQb64(
  text: string,
  allowed: readonly MatterCode[],
  what: string,
  seq: number | null = null,
): { code: MatterCode; raw: Uint8Array } {
  const m = decodeQb64(text, allowed);
  if (m === null)
    throw new KelError('malformed', `${what} is not canonical qb64 (${allowed.join('/')}): ${JSON.stringify(text.slice(0, 60))}`, seq);
  return m;
}
