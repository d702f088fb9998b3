/** Canonical unsigned decimal integers (`0|[1-9][0-9]*`) ↔ bigint, with an upper bound. */
import { EncodingError } from './errors.ts';

const CANONICAL_RE = /^(?:0|[1-9][0-9]*)$/;
export const U128_LIMIT = 1n << 128n;

/** Parse a canonical decimal string that must be < `limit` (default 2^128). */
export function parseDecimal(text: string, limit: bigint = U128_LIMIT): bigint {
  if (text.length > 80 || !CANONICAL_RE.test(text)) {
    throw new EncodingError('invalid_decimal', 'not a canonical unsigned decimal (0|[1-9][0-9]*)');
  }
  const v = BigInt(text);
  if (v >= limit) throw new EncodingError('invalid_decimal', `decimal out of range (must be < ${limit})`);
  return v;
}

/** A u128 given either as a JSON integer (a safe, non-negative number) or a canonical decimal string. */
export function u128FromJson(v: number | string): bigint {
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0) throw new EncodingError('invalid_decimal', 'not a non-negative safe integer');
    return BigInt(v);
  }
  return parseDecimal(v);
}

export function formatDecimal(v: bigint): string {
  if (v < 0n) throw new EncodingError('invalid_decimal', 'negative value');
  return v.toString(10);
}
