/**
 * RFC 8785 JSON Canonicalization Scheme. Written here rather than taken from npm because it is
 * small and the ECMAScript primitives it relies on (Number serialization, UTF-16 code-unit
 * ordering, JSON string escaping) are exactly what RFC 8785 specifies; the RFC's vectors are in
 * test/encoding/jcs.test.ts.
 *
 * Input: null, booleans, finite numbers, strings without lone surrogates, arrays and plain
 * objects. bigint, undefined, NaN/Infinity and lone surrogates are refused (EncodingError).
 */
import { EncodingError } from './errors.ts';
import { utf8Bytes } from './portable.ts';

function fail(message: string): never {
  throw new EncodingError('jcs_unsupported_value', message);
}

function str(s: string): string {
  if (!s.isWellFormed()) fail('lone surrogate in string');
  return JSON.stringify(s);
}

function write(v: unknown, out: string[]): void {
  if (v === null) {
    out.push('null');
    return;
  }
  switch (typeof v) {
    case 'boolean':
      out.push(v ? 'true' : 'false');
      return;
    case 'number':
      if (!Number.isFinite(v)) fail('NaN and Infinity are not JSON');
      out.push(JSON.stringify(v)); // ECMAScript Number::toString, as RFC 8785 §3.2.2.3 requires (-0 → 0)
      return;
    case 'string':
      out.push(str(v));
      return;
    case 'object': {
      if (Array.isArray(v)) {
        out.push('[');
        v.forEach((item: unknown, i) => {
          if (i > 0) out.push(',');
          write(item, out);
        });
        out.push(']');
        return;
      }
      const proto: unknown = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) fail('only plain objects can be canonicalized');
      // Default sort compares UTF-16 code units, the order RFC 8785 §3.2.3 prescribes.
      const keys = Object.keys(v).sort();
      out.push('{');
      keys.forEach((k, i) => {
        if (i > 0) out.push(',');
        out.push(str(k), ':');
        write((v as Record<string, unknown>)[k], out);
      });
      out.push('}');
      return;
    }
    default:
      fail(`cannot canonicalize a ${typeof v}`);
  }
}

/** Canonical JSON text of `value`. */
export function canonicalize(value: unknown): string {
  const out: string[] = [];
  write(value, out);
  return out.join('');
}

/** UTF-8 bytes of the canonical JSON text, the form that is signed and hashed. */
export function canonicalBytes(value: unknown): Uint8Array {
  return utf8Bytes(canonicalize(value));
}
