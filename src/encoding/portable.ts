/**
 * Byte conversions without Node's Buffer, for code that must also run in browsers (the verifier
 * SDK, src/verify). The codecs in this folder keep Buffer as their fast path where it exists (the
 * server) and fall back to these elsewhere; the strict checks (alphabets, canonical forms, lengths)
 * are the codecs' own and run on both paths. Inputs here are already validated by the caller.
 * test/encoding/portable.test.ts runs both paths over the same vectors.
 */

/** Node's Buffer when running in Node, undefined in browsers. */
export const NodeBuffer: typeof Buffer | undefined = (globalThis as { Buffer?: typeof Buffer }).Buffer;

const HEX = '0123456789abcdef';
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const B64_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) {
  B64_VALUE[B64.charCodeAt(i)] = i;
  B64_VALUE[B64URL.charCodeAt(i)] = i;
}
const ENCODER = new TextEncoder();

/** Lowercase hex. */
export function hexFromBytes(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += HEX[b >> 4]! + HEX[b & 15]!;
  return s;
}

/** Bytes of an even-length string of hex digits (either case; the caller has checked it). */
export function bytesFromHex(text: string): Uint8Array {
  const out = new Uint8Array(text.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** Standard padded base64, or unpadded base64url when `url`. */
export function base64FromBytes(bytes: Uint8Array, url = false): string {
  const alphabet = url ? B64URL : B64;
  let s = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    s += alphabet[n >> 18]! + alphabet[(n >> 12) & 63]! + alphabet[(n >> 6) & 63]! + alphabet[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    s += alphabet[n >> 18]! + alphabet[(n >> 12) & 63]! + (url ? '' : '==');
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    s += alphabet[n >> 18]! + alphabet[(n >> 12) & 63]! + alphabet[(n >> 6) & 63]! + (url ? '' : '=');
  }
  return s;
}

/**
 * Bytes of base64 or base64url text whose alphabet and length the caller has checked (padding
 * optional). Trailing bits are dropped, as Node's decoder does; the codecs re-encode to refuse them.
 */
export function bytesFromBase64(text: string): Uint8Array {
  const body = text.endsWith('==') ? text.slice(0, -2) : text.endsWith('=') ? text.slice(0, -1) : text;
  const out = new Uint8Array(Math.floor((body.length * 6) / 8));
  let acc = 0;
  let bits = 0;
  let o = 0;
  for (let i = 0; i < body.length; i++) {
    acc = ((acc << 6) | B64_VALUE[body.charCodeAt(i)]!) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  return out;
}

/** UTF-8 bytes of a string (a Buffer in Node, as Buffer.from(s, 'utf8') gave before). */
export function utf8Bytes(text: string): Uint8Array {
  return NodeBuffer !== undefined ? NodeBuffer.from(text, 'utf8') : ENCODER.encode(text);
}

/** Byte order of two arrays (memcmp, then length), as Buffer.compare. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && compareBytes(a, b) === 0;
}
