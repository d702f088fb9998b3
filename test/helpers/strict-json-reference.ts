/**
 * The strict JSON parser as it was before issue 28's speed-up (src/encoding/json.ts at af138a4),
 * kept verbatim as the reference of the differential test (test/encoding/json-differential.test.ts):
 * the faster parser must return the same value, or throw the same error with the same pointer, on
 * every input. Not used by the product.
 */
import { JsonError, type StrictJsonOptions } from '../../src/encoding/json.ts';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

class ReferenceParser {
  private pos = 0;
  private readonly path: string[] = [];
  private readonly text: string;
  private readonly maxDepth: number;
  private readonly bigKeys: ReadonlySet<string>;

  constructor(text: string, opts: StrictJsonOptions) {
    this.text = text;
    this.maxDepth = opts.maxDepth ?? 32;
    this.bigKeys = opts.bigIntegerKeys ?? new Set();
  }

  private fail(message: string): never {
    throw new JsonError(message, this.path.map((p) => '/' + escapePointer(p)).join(''));
  }

  private ws(): void {
    const t = this.text;
    for (;;) {
      const c = t.charCodeAt(this.pos);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.pos++;
      else return;
    }
  }

  parseDocument(): unknown {
    this.ws();
    const v = this.value(0);
    this.ws();
    if (this.pos !== this.text.length) this.fail(`unexpected data after the JSON value at offset ${this.pos}`);
    return v;
  }

  private value(depth: number): unknown {
    const c = this.text[this.pos];
    switch (c) {
      case '{':
        return this.object(depth + 1);
      case '[':
        return this.array(depth + 1);
      case '"':
        return this.string();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      case undefined:
        return this.fail('unexpected end of JSON');
      default:
        if (c === '-' || (c >= '0' && c <= '9')) return this.number();
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
    this.pos++; // {
    const out: Record<string, unknown> = {};
    const seen = new Set<string>();
    this.ws();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.text[this.pos] !== '"') this.fail(`expected a member name at offset ${this.pos}`);
      const key = this.string();
      if (seen.has(key)) {
        this.path.push(key);
        this.fail('duplicate member name');
      }
      seen.add(key);
      this.ws();
      if (this.text[this.pos] !== ':') this.fail(`expected ':' at offset ${this.pos}`);
      this.pos++;
      this.ws();
      this.path.push(key);
      const v = this.value(depth);
      this.path.pop();
      // defineProperty: a member named __proto__ is data, never a prototype change.
      Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      this.ws();
      const c = this.text[this.pos];
      if (c === ',') {
        this.pos++;
        continue;
      }
      if (c === '}') {
        this.pos++;
        return out;
      }
      this.fail(`expected ',' or '}' at offset ${this.pos}`);
    }
  }

  private array(depth: number): unknown[] {
    if (depth > this.maxDepth) this.fail(`nesting deeper than ${this.maxDepth}`);
    this.pos++; // [
    const out: unknown[] = [];
    this.ws();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.ws();
      this.path.push(String(out.length));
      out.push(this.value(depth));
      this.path.pop();
      this.ws();
      const c = this.text[this.pos];
      if (c === ',') {
        this.pos++;
        continue;
      }
      if (c === ']') {
        this.pos++;
        return out;
      }
      this.fail(`expected ',' or ']' at offset ${this.pos}`);
    }
  }

  private string(): string {
    const t = this.text;
    let i = this.pos + 1;
    let out = '';
    let start = i;
    for (;;) {
      if (i >= t.length) this.fail('unterminated string');
      const c = t.charCodeAt(i);
      if (c === 0x22) {
        out += t.slice(start, i);
        this.pos = i + 1;
        break;
      }
      if (c < 0x20) this.fail('control character in string');
      if (c === 0x5c) {
        out += t.slice(start, i);
        const e = t[i + 1];
        switch (e) {
          case '"':
            out += '"';
            break;
          case '\\':
            out += '\\';
            break;
          case '/':
            out += '/';
            break;
          case 'b':
            out += '\b';
            break;
          case 'f':
            out += '\f';
            break;
          case 'n':
            out += '\n';
            break;
          case 'r':
            out += '\r';
            break;
          case 't':
            out += '\t';
            break;
          case 'u': {
            const hex = t.slice(i + 2, i + 6);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('invalid \\u escape');
            out += String.fromCharCode(parseInt(hex, 16));
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
    const m = /^-?(?:0|[1-9][0-9]*)/.exec(t.slice(this.pos, this.pos + 400));
    if (m === null) this.fail(`invalid number at offset ${this.pos}`);
    const lit = m[0];
    const next = t[this.pos + lit.length];
    if (next === '.' || next === 'e' || next === 'E') this.fail('numbers must be plain integer literals (no fraction, no exponent)');
    if (next !== undefined && next >= '0' && next <= '9') this.fail('integer literal too long');
    this.pos += lit.length;
    const big = BigInt(lit);
    if (big > MAX_SAFE || big < -MAX_SAFE) {
      const key = this.path.at(-1);
      if (key !== undefined && this.bigKeys.has(key)) return lit;
      this.fail('integer outside ±(2^53−1)');
    }
    return Number(big);
  }
}

/** parseStrictJson as it was (the reference). */
export function parseStrictJsonReference(text: string, opts: StrictJsonOptions = {}): unknown {
  return new ReferenceParser(text, opts).parseDocument();
}
