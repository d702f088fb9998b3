/**
 * A DER writer (ITU-T X.690 §10) for the few ASN.1 types a small X.509 certificate needs:
 * SEQUENCE, SET, INTEGER, OBJECT IDENTIFIER, UTF8String, UTCTime, BIT STRING, OCTET STRING,
 * BOOLEAN and explicit context tags. Every function returns the complete TLV (tag, definite
 * minimal length, contents); nothing here reads DER. Values outside what DER (or the type) can
 * carry are DerError `der_out_of_range`.
 */
import { DerError } from './errors.ts';

const TAG_BOOLEAN = 0x01;
const TAG_INTEGER = 0x02;
const TAG_BIT_STRING = 0x03;
const TAG_OCTET_STRING = 0x04;
const TAG_OID = 0x06;
const TAG_UTF8_STRING = 0x0c;
const TAG_UTC_TIME = 0x17;
const TAG_SEQUENCE = 0x30;
const TAG_SET = 0x31;

function concat(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The definite length octets: short form below 128, else 0x80|k followed by k big-endian bytes. */
export function derLength(n: number): Uint8Array {
  if (!Number.isSafeInteger(n) || n < 0) throw new DerError('der_out_of_range', `DER length must be a non-negative integer, got ${n}`);
  if (n < 0x80) return Uint8Array.of(n);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
  return Uint8Array.of(0x80 | bytes.length, ...bytes);
}

/** One TLV with a single-byte tag. */
export function derTlv(tag: number, contents: Uint8Array): Uint8Array {
  if (!Number.isInteger(tag) || tag < 0 || tag > 0xff || (tag & 0x1f) === 0x1f)
    throw new DerError('der_out_of_range', `only single-byte tags are written, got ${tag}`);
  return concat([Uint8Array.of(tag), derLength(contents.length), contents]);
}

export function derSequence(...items: readonly Uint8Array[]): Uint8Array {
  return derTlv(TAG_SEQUENCE, concat(items));
}

/** SET OF with the elements already in DER order (the callers here write one element). */
export function derSet(...items: readonly Uint8Array[]): Uint8Array {
  return derTlv(TAG_SET, concat(items));
}

/** `[n] EXPLICIT` (context-specific, constructed) around one encoded value. */
export function derExplicit(tagNumber: number, inner: Uint8Array): Uint8Array {
  if (!Number.isInteger(tagNumber) || tagNumber < 0 || tagNumber > 30)
    throw new DerError('der_out_of_range', `context tag number must be 0..30, got ${tagNumber}`);
  return derTlv(0xa0 | tagNumber, inner);
}

/** A non-negative INTEGER in the fewest two's-complement octets (a 0x00 before a high bit). */
export function derInteger(value: number | bigint): Uint8Array {
  let v = typeof value === 'bigint' ? value : Number.isSafeInteger(value) ? BigInt(value) : -1n;
  if (v < 0n) throw new DerError('der_out_of_range', `only non-negative integers are written, got ${String(value)}`);
  const bytes: number[] = [];
  do {
    bytes.unshift(Number(v & 0xffn));
    v >>= 8n;
  } while (v > 0n);
  if (bytes[0]! & 0x80) bytes.unshift(0);
  return derTlv(TAG_INTEGER, Uint8Array.from(bytes));
}

/** OBJECT IDENTIFIER from dotted text (`1.3.101.112`): first two arcs joined, base-128 arcs. */
export function derOid(dotted: string): Uint8Array {
  if (!/^[0-2](\.(0|[1-9][0-9]*))+$/.test(dotted)) throw new DerError('der_out_of_range', `not an OID: ${JSON.stringify(dotted)}`);
  const arcs = dotted.split('.').map((a) => BigInt(a));
  const [first, second] = [arcs[0]!, arcs[1]!];
  if (first < 2n && second > 39n) throw new DerError('der_out_of_range', `OID second arc must be ≤ 39 under ${first}: ${dotted}`);
  const out: number[] = [];
  for (const arc of [first * 40n + second, ...arcs.slice(2)]) {
    const groups: number[] = [];
    let v = arc;
    do {
      groups.unshift(Number(v & 0x7fn));
      v >>= 7n;
    } while (v > 0n);
    for (let i = 0; i < groups.length - 1; i++) groups[i]! |= 0x80;
    out.push(...groups);
  }
  return derTlv(TAG_OID, Uint8Array.from(out));
}

export function derUtf8String(text: string): Uint8Array {
  return derTlv(TAG_UTF8_STRING, new TextEncoder().encode(text));
}

const pad2 = (n: number): string => String(n).padStart(2, '0');

/**
 * UTCTime `YYMMDDHHMMSSZ` (RFC 5280 §4.1.2.5.1: seconds always present, always Z) for a time in
 * milliseconds since the epoch (fractions of a second are dropped); only years 1950–2049 fit.
 */
export function derUtcTime(epochMs: number): Uint8Array {
  if (!Number.isFinite(epochMs)) throw new DerError('der_out_of_range', `not a time: ${epochMs}`);
  const d = new Date(Math.floor(epochMs / 1000) * 1000);
  const year = d.getUTCFullYear();
  if (year < 1950 || year > 2049) throw new DerError('der_out_of_range', `UTCTime holds the years 1950–2049, got ${year}`);
  const text = `${pad2(year % 100)}${pad2(d.getUTCMonth() + 1)}${pad2(d.getUTCDate())}${pad2(d.getUTCHours())}${pad2(d.getUTCMinutes())}${pad2(d.getUTCSeconds())}Z`;
  return derTlv(TAG_UTC_TIME, new TextEncoder().encode(text));
}

/** BIT STRING of whole octets (no unused bits: signatures, public keys). */
export function derBitString(bytes: Uint8Array): Uint8Array {
  return derTlv(TAG_BIT_STRING, concat([Uint8Array.of(0), bytes]));
}

/**
 * BIT STRING of named bits (X.680 §22.7: trailing zero bits removed), given as bit numbers (bit 0
 * is the most significant bit of the first octet): keyUsage digitalSignature = [0] → `03 02 07 80`.
 */
export function derNamedBits(bits: readonly number[]): Uint8Array {
  if (bits.length === 0) return derTlv(TAG_BIT_STRING, Uint8Array.of(0));
  for (const b of bits)
    if (!Number.isInteger(b) || b < 0 || b > 255) throw new DerError('der_out_of_range', `bit number must be 0..255, got ${b}`);
  const highest = Math.max(...bits);
  const octets = new Uint8Array(Math.floor(highest / 8) + 1);
  for (const b of bits) octets[b >> 3]! |= 0x80 >> (b & 7);
  const unused = 7 - (highest & 7);
  return derTlv(TAG_BIT_STRING, concat([Uint8Array.of(unused), octets]));
}

export function derOctetString(bytes: Uint8Array): Uint8Array {
  return derTlv(TAG_OCTET_STRING, bytes);
}

/** BOOLEAN: DER writes TRUE as 0xff. */
export function derBoolean(value: boolean): Uint8Array {
  return derTlv(TAG_BOOLEAN, Uint8Array.of(value ? 0xff : 0x00));
}
