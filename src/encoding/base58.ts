/**
 * Base58btc (the Bitcoin alphabet), as used by multibase `z` strings such as `did:key:z6Mk…`.
 * Each leading zero byte is one leading `1`; the rest is the big-endian number in base 58. The
 * decoder is strict (alphabet only, no whitespace) and, because that mapping is a bijection,
 * every accepted string is the canonical encoding of its bytes. Decoding is quadratic in the
 * input length, so input is capped at MAX_BASE58_LENGTH characters.
 */
import { EncodingError } from './errors.ts';

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const INDEX = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) INDEX[ALPHABET.charCodeAt(i)] = i;

/** Longest accepted base58 input (characters). Keys and DIDs are far shorter. */
export const MAX_BASE58_LENGTH = 1024;

export function encodeBase58(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  // Base-58 digits, least significant first.
  const digits: number[] = [];
  for (let i = zeros; i < bytes.length; i++) {
    let carry = bytes[i]!;
    for (let j = 0; j < digits.length; j++) {
      carry += digits[j]! * 256;
      digits[j] = carry % 58;
      carry = Math.floor(carry / 58);
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = Math.floor(carry / 58);
    }
  }
  let out = '1'.repeat(zeros);
  for (let i = digits.length - 1; i >= 0; i--) out += ALPHABET[digits[i]!]!;
  return out;
}

/** Decode base58btc; with `length`, the decoded size must match. */
export function decodeBase58(text: string, length?: number): Uint8Array {
  if (text.length > MAX_BASE58_LENGTH) throw new EncodingError('invalid_base58', 'base58 input too long');
  let zeros = 0;
  while (zeros < text.length && text.charCodeAt(zeros) === 0x31) zeros++;
  // Bytes, least significant first.
  const bytes: number[] = [];
  for (let i = zeros; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? INDEX[c]! : -1;
    if (v < 0) throw new EncodingError('invalid_base58', 'character outside the base58btc alphabet');
    let carry = v;
    for (let j = 0; j < bytes.length; j++) {
      carry += bytes[j]! * 58;
      bytes[j] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      bytes.push(carry & 0xff);
      carry >>= 8;
    }
  }
  const out = new Uint8Array(zeros + bytes.length);
  for (let i = 0; i < bytes.length; i++) out[out.length - 1 - i] = bytes[i]!;
  if (length !== undefined && out.length !== length) {
    throw new EncodingError('invalid_base58', `expected ${length} bytes of base58, got ${out.length}`);
  }
  return out;
}
