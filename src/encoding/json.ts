/**
 * Strict JSON for requests (SPEC conventions): RFC 8259 grammar, plus
 *  - duplicate member names, lone surrogates (escaped or raw) and nesting deeper than `maxDepth`
 *    (default 32) are errors;
 *  - numbers must be plain integer literals (no fraction, no exponent) within ±(2^53−1), except
 *    under the member names listed in `bigIntegerKeys`, where a larger literal is delivered as its
 *    canonical decimal text (a string). Those fields accept a decimal string anyway, so the value is
 *    the same; every other field keeps JSON's integer range;
 *  - `-0` reads as 0.
 * Errors carry the RFC 6901 JSON pointer of the offending value.
 *
 * `stringifyJson` is the lossless serializer: bigints are written as integer literals with every
 * digit (JSON.rawJSON).
 */
import { EncodingError } from './errors.ts';

export class JsonError extends EncodingError {
  readonly pointer: string;
  constructor(message: string, pointer: string) {
    super('invalid_json', pointer === '' ? message : `${pointer}: ${message}`);
    this.pointer = pointer;
  }
}

export interface StrictJsonOptions {
  maxDepth?: number;
  bigIntegerKeys?: ReadonlySet<string>;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const ObjectPrototype = Object.prototype;
/** An integer literal of at most this many digits is exact as a double and within ±(2^53−1). */
const SAFE_DIGITS = 15;
/** The longest integer literal read (sign included); a longer one is `integer literal too long`. */
const MAX_LITERAL = 400;

function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** Value of an ASCII hex digit, or −1. */
function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

/**
 * One pass over the text with char codes (issue 28: this parser reads every request body on the
 * event loop). test/encoding/json-differential.test.ts holds it to the previous implementation
 * (test/helpers/strict-json-reference.ts): the same value or the same error at the same pointer.
 */
class Parser {
  private pos = 0;
  private readonly path: string[] = [];
  private readonly text: string;
  private readonly maxDepth: number;
  private readonly bigKeys: ReadonlySet<string> | undefined;

  constructor(text: string, opts: StrictJsonOptions) {
    this.text = text;
    this.maxDepth = opts.maxDepth ?? 32;
    this.bigKeys = opts.bigIntegerKeys;
  }

  private fail(message: string): never {
    throw new JsonError(message, this.path.map((p) => '/' + escapePointer(p)).join(''));
  }

  private ws(): void {
    const t = this.text;
    let i = this.pos;
    for (;;) {
      const c = t.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
      else break;
    }
    this.pos = i;
  }

  parseDocument(): unknown {
    this.ws();
    const v = this.value(0);
    this.ws();
    if (this.pos !== this.text.length) this.fail(`unexpected data after the JSON value at offset ${this.pos}`);
    return v;
  }

  private value(depth: number): unknown {
    const c = this.text.charCodeAt(this.pos);
    switch (c) {
      case 0x7b: // {
        return this.object(depth + 1);
      case 0x5b: // [
        return this.array(depth + 1);
      case 0x22: // "
        return this.string();
      case 0x74: // t
        return this.literal('true', true);
      case 0x66: // f
        return this.literal('false', false);
      case 0x6e: // n
        return this.literal('null', null);
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
        if (Number.isNaN(c)) return this.fail('unexpected end of JSON');
        return this.fail(`unexpected character at offset ${this.pos}`);
    }
  }

  private literal<T>(word: string, v: T): T {
    if (!this.text.startsWith(word, this.pos)) this.fail(`invalid literal at offset ${this.pos}`);
    this.pos += word.length;
    return v;
  }

  private object(depth: number): Record<string, unknown> {
    if (depth > this.maxDepth) this.fail(`nesting deeper than ${this.maxDepth}`);
    const t = this.text;
    this.pos++; // {
    const out: Record<string, unknown> = {};
    this.ws();
    if (t.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      return out;
    }
    for (;;) {
      this.ws();
      if (t.charCodeAt(this.pos) !== 0x22) this.fail(`expected a member name at offset ${this.pos}`);
      const key = this.string();
      // Every member is an own property of `out`, so an own property of that name is a duplicate.
      if (Object.hasOwn(out, key)) {
        this.path.push(key);
        this.fail('duplicate member name');
      }
      this.ws();
      if (t.charCodeAt(this.pos) !== 0x3a) this.fail(`expected ':' at offset ${this.pos}`);
      this.pos++;
      this.ws();
      this.path.push(key);
      const v = this.value(depth);
      this.path.pop();
      // A name Object.prototype has (__proto__, toString, …) is defined as data: never a prototype
      // change, never a setter, and no TypeError when the prototype is frozen. Others by assignment.
      if (key in ObjectPrototype) Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      else out[key] = v;
      this.ws();
      const c = t.charCodeAt(this.pos);
      if (c === 0x2c) {
        this.pos++;
        continue;
      }
      if (c === 0x7d) {
        this.pos++;
        return out;
      }
      this.fail(`expected ',' or '}' at offset ${this.pos}`);
    }
  }

  private array(depth: number): unknown[] {
    if (depth > this.maxDepth) this.fail(`nesting deeper than ${this.maxDepth}`);
    const t = this.text;
    this.pos++; // [
    const out: unknown[] = [];
    this.ws();
    if (t.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      return out;
    }
    for (;;) {
      this.ws();
      this.path.push(String(out.length));
      out.push(this.value(depth));
      this.path.pop();
      this.ws();
      const c = t.charCodeAt(this.pos);
      if (c === 0x2c) {
        this.pos++;
        continue;
      }
      if (c === 0x5d) {
        this.pos++;
        return out;
      }
      this.fail(`expected ',' or ']' at offset ${this.pos}`);
    }
  }

  private string(): string {
    const t = this.text;
    const n = t.length;
    const first = this.pos + 1;
    let i = first;
    // The common case: no escape before the closing quote, so the value is a slice of the text.
    for (;;) {
      if (i >= n) this.fail('unterminated string');
      const c = t.charCodeAt(i);
      if (c === 0x22) {
        this.pos = i + 1;
        const plain = t.slice(first, i);
        if (!plain.isWellFormed()) this.fail('lone surrogate in string');
        return plain;
      }
      if (c < 0x20) this.fail('control character in string');
      if (c === 0x5c) break;
      i++;
    }
    return this.escapedString(first, i);
  }

  /** The rest of a string from its first backslash at `i` (`first`: the first character after the quote). */
  private escapedString(first: number, i: number): string {
    const t = this.text;
    const n = t.length;
    let out = t.slice(first, i);
    let start = i;
    for (;;) {
      if (i >= n) this.fail('unterminated string');
      const c = t.charCodeAt(i);
      if (c === 0x22) {
        out += t.slice(start, i);
        this.pos = i + 1;
        break;
      }
      if (c < 0x20) this.fail('control character in string');
      if (c === 0x5c) {
        out += t.slice(start, i);
        switch (t.charCodeAt(i + 1)) {
          case 0x22:
            out += '"';
            break;
          case 0x5c:
            out += '\\';
            break;
          case 0x2f:
            out += '/';
            break;
          case 0x62:
            out += '\b';
            break;
          case 0x66:
            out += '\f';
            break;
          case 0x6e:
            out += '\n';
            break;
          case 0x72:
            out += '\r';
            break;
          case 0x74:
            out += '\t';
            break;
          case 0x75: {
            const a = hexDigit(t.charCodeAt(i + 2));
            const b = hexDigit(t.charCodeAt(i + 3));
            const c2 = hexDigit(t.charCodeAt(i + 4));
            const d = hexDigit(t.charCodeAt(i + 5));
            if ((a | b | c2 | d) < 0) this.fail('invalid \\u escape');
            out += String.fromCharCode((a << 12) | (b << 8) | (c2 << 4) | d);
            i += 4;
            break;
          }
          default:
            this.fail('invalid escape in string');
        }
        i += 2;
        start = i;
        continue;
      }
      i++;
    }
    if (!out.isWellFormed()) this.fail('lone surrogate in string');
    return out;
  }

  private number(): number | string {
    const t = this.text;
    const at = this.pos;
    let i = at;
    const negative = t.charCodeAt(i) === 0x2d;
    if (negative) i++;
    const digits0 = i;
    let c = t.charCodeAt(i);
    if (!(c >= 0x30 && c <= 0x39)) this.fail(`invalid number at offset ${at}`);
    let v = 0;
    if (c === 0x30) i++;
    else {
      do {
        v = v * 10 + (c - 0x30);
        c = t.charCodeAt(++i);
      } while (c >= 0x30 && c <= 0x39);
    }
    // Past MAX_LITERAL characters the literal is too long whatever follows (its next is a digit).
    if (i - at > MAX_LITERAL) this.fail('integer literal too long');
    const next = t.charCodeAt(i);
    if (next === 0x2e || next === 0x65 || next === 0x45) this.fail('numbers must be plain integer literals (no fraction, no exponent)');
    if (next >= 0x30 && next <= 0x39) this.fail('integer literal too long'); // after a leading 0
    this.pos = i;
    // Up to 15 digits the sum is exact and safe; `-0` reads as 0.
    if (i - digits0 <= SAFE_DIGITS) return negative ? 0 - v : v;
    const lit = t.slice(at, i);
    const big = BigInt(lit);
    if (big > MAX_SAFE || big < -MAX_SAFE) {
      const key = this.path.at(-1);
      if (key !== undefined && this.bigKeys?.has(key) === true) return lit;
      this.fail('integer outside ±(2^53−1)');
    }
    return Number(big);
  }
}

/** A JSON object (not null, not an array): the shape every config and wire document is checked for. */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parse request JSON under the strict rules above. Throws JsonError (with a JSON pointer). */
export function parseStrictJson(text: string, opts: StrictJsonOptions = {}): unknown {
  return new Parser(text, opts).parseDocument();
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Decode UTF-8 bytes strictly (invalid sequences are an error, a BOM is not skipped). */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new EncodingError('invalid_utf8', 'body is not valid UTF-8');
  }
}

interface RawJsonApi {
  rawJSON(text: string): unknown;
}
const rawJSON = (text: string): unknown => (JSON as unknown as RawJsonApi).rawJSON(text);

/** JSON.stringify that writes bigints as exact integer literals. */
export function stringifyJson(value: unknown, space?: number): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? rawJSON(v.toString()) : v), space);
}

/** JSON.stringify of a number, without the generic call (for text written directly). */
export const jsonNumber = (n: number): string => (Number.isFinite(n) ? String(n) : 'null');
