// Issue 28 made the strict JSON parser faster (char codes, no Set per object, plain assignment,
// integers without BigInt). It must accept and refuse exactly what it did before: the previous
// implementation is kept as the reference (test/helpers/strict-json-reference.ts) and both parse
// generated documents, valid and broken, with the same value or the same error at the same pointer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { JsonError, parseStrictJson, type StrictJsonOptions } from '../../src/encoding/json.ts';
import { parseStrictJsonReference } from '../helpers/strict-json-reference.ts';

type Outcome = { ok: true; value: unknown; text: string } | { ok: false; message: string; pointer: string; code: string };

function run(parse: (t: string, o: StrictJsonOptions) => unknown, text: string, opts: StrictJsonOptions): Outcome {
  try {
    const value = parse(text, opts);
    return { ok: true, value, text: JSON.stringify(value) };
  } catch (e) {
    if (!(e instanceof JsonError)) throw e; // anything but a JsonError is a defect in either
    return { ok: false, message: e.message, pointer: e.pointer, code: e.code };
  }
}

/** Key order and own-property layout, recursively (deepStrictEqual ignores key order). */
function layout(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(layout);
  if (typeof v === 'object' && v !== null) {
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
    return Reflect.ownKeys(v).map((k) => {
      const d = Object.getOwnPropertyDescriptor(v, k)!;
      assert.deepEqual([d.enumerable, d.writable, d.configurable], [true, true, true]);
      return [k, layout(d.value)];
    });
  }
  return v;
}

function agree(text: string, opts: StrictJsonOptions = {}): Outcome {
  const want = run(parseStrictJsonReference, text, opts);
  const got = run(parseStrictJson, text, opts);
  if (want.ok && got.ok) {
    assert.deepStrictEqual(got.value, want.value, text); // Object.is on numbers: -0 is not 0
    assert.equal(got.text, want.text, text);
    assert.deepStrictEqual(layout(got.value), layout(want.value), text);
  } else {
    assert.deepStrictEqual(got, want, text);
  }
  return want;
}

const pick = <T>(xs: readonly T[]): T => xs[randomInt(xs.length)]!;

const KEYS = [
  'a',
  'b',
  'cumulative',
  'index',
  '__proto__',
  'toString',
  'constructor',
  'hasOwnProperty',
  '0',
  '1',
  '01',
  'a/b',
  '~1',
  '',
  'é',
  '😀',
];
const STRING_PIECES = [
  'x',
  'Z',
  ' ',
  '/',
  '\\"',
  '\\\\',
  '\\/',
  '\\b',
  '\\f',
  '\\n',
  '\\r',
  '\\t',
  '\\u0041',
  '\\u00e9',
  '\\uD83D',
  '\\uDE00',
  '\\ud800',
  '\\udfff',
  '\\u12',
  '\\x',
  '\\',
  '\t',
  '\n',
  '\u0001',
  '\u001f',
  '\u007f',
  'é',
  '😀',
  '\ud800',
  '\udc00',
  '\u2028',
];
const NUMBERS = [
  '0',
  '-0',
  '1',
  '-1',
  '42',
  '007',
  '-',
  '--1',
  '1.5',
  '1e3',
  '1E3',
  '0.0',
  '9007199254740991',
  '-9007199254740991',
  '9007199254740992',
  '-9007199254740992',
  '999999999999999',
  '1000000000000000',
  '-1000000000000000',
  '123456789012345678901234567890',
  '+1',
  '.5',
  '0x10',
  '1.',
  '-.1',
];
const MUTATIONS = [
  '"',
  '\\',
  '{',
  '}',
  '[',
  ']',
  ':',
  ',',
  ' ',
  '\n',
  '0',
  '9',
  '-',
  '.',
  'e',
  'u',
  't',
  'n',
  'f',
  '\u0000',
  '\ud800',
  'x',
];

function stringLiteral(): string {
  let s = '"';
  for (let i = randomInt(0, 6); i > 0; i--) s += pick(STRING_PIECES);
  return s + '"';
}

function numberLiteral(): string {
  switch (randomInt(6)) {
    case 0:
      return '1'.repeat(randomInt(390, 410)); // around the 400-character cap
    case 1:
      return '-' + '9'.repeat(randomInt(395, 405));
    case 2:
      return String(randomInt(-(2 ** 46), 2 ** 46));
    default:
      return pick(NUMBERS);
  }
}

const ws = (): string => pick(['', '', '', ' ', '\n', '\t', '\r\n ', '\u00a0']);

function value(depth: number): string {
  const r = randomInt(depth > 6 ? 5 : 8);
  switch (r) {
    case 0:
      return numberLiteral();
    case 1:
      return stringLiteral();
    case 2:
      return pick(['true', 'false', 'null', 'tru', 'nul', 'falsey', 'NaN']);
    case 3:
    case 4:
      return numberLiteral();
    case 5: {
      const items = Array.from({ length: randomInt(0, 4) }, () => ws() + value(depth + 1) + ws());
      return `[${items.join(',')}]`;
    }
    default: {
      const members = Array.from({ length: randomInt(0, 5) }, () => `${ws()}"${pick(KEYS)}"${ws()}:${ws()}${value(depth + 1)}${ws()}`);
      return `{${members.join(',')}}`;
    }
  }
}

function mutate(text: string): string {
  let t = text;
  for (let n = randomInt(1, 4); n > 0; n--) {
    const at = randomInt(t.length + 1);
    switch (randomInt(4)) {
      case 0:
        t = t.slice(0, at) + pick(MUTATIONS) + t.slice(at);
        break;
      case 1:
        t = t.slice(0, at) + t.slice(at + 1);
        break;
      case 2:
        t = t.slice(0, at) + pick(MUTATIONS) + t.slice(at + 1);
        break;
      default:
        t = t.slice(0, at); // truncated
    }
  }
  return t;
}

function options(): StrictJsonOptions {
  const o: StrictJsonOptions = {};
  if (randomInt(3) === 0) o.maxDepth = randomInt(1, 6);
  if (randomInt(2) === 0) o.bigIntegerKeys = new Set(randomInt(2) === 0 ? ['cumulative'] : ['cumulative', 'a', '0']);
  return o;
}

void test('strict JSON, faster parser against the previous one: generated documents and their mutations agree (value or error and pointer)', () => {
  let accepted = 0;
  let refused = 0;
  for (let i = 0; i < 12_000; i++) {
    const doc = ws() + value(0) + ws();
    const opts = options();
    for (const text of [doc, mutate(doc), mutate(doc)]) {
      if (agree(text, opts).ok) accepted++;
      else refused++;
    }
  }
  // Both sides are exercised: plenty of valid documents and plenty of refusals.
  assert.ok(accepted > 3000, `accepted ${accepted}`);
  assert.ok(refused > 3000, `refused ${refused}`);
});

void test('strict JSON, faster parser against the previous one: edge cases', () => {
  const cases = [
    '',
    ' ',
    '-',
    '-x',
    '-0',
    '[-0]',
    '0',
    '01',
    '-01',
    '0.5',
    '0e1',
    '1.',
    '1E+2',
    '999999999999999',
    '-999999999999999',
    '1000000000000000',
    '9007199254740991',
    '9007199254740992',
    '-9007199254740992',
    '{"cumulative":9007199254740992}',
    '{"cumulative":-123456789012345678901234567890}',
    '{"cumulative":[9007199254740992]}',
    '1'.repeat(399),
    '1'.repeat(400),
    '1'.repeat(401),
    '-' + '1'.repeat(399),
    '-' + '1'.repeat(400),
    '{"cumulative":' + '1'.repeat(400) + '}',
    '{"cumulative":' + '1'.repeat(400) + '.5}',
    '{"cumulative":' + '1'.repeat(401) + '}',
    '0'.repeat(500),
    '"abc',
    '"\\',
    '"\\u12"',
    '"\\u12',
    '"\\u00G0"',
    '"\\uD83D\\uDE00"',
    '"\\uD83D"',
    '"\\uDE00\\uD83D"',
    '"\ud83d\ude00"',
    '"\ud83d"',
    '"\ud83d\u0001"',
    '"\ud83d',
    '"a\u0000b"',
    '"\u007f"',
    '{"a":1,"a":2}',
    '{"__proto__":1,"__proto__":2}',
    '{"__proto__":{"x":1}}',
    '{"toString":1,"constructor":{"prototype":2},"hasOwnProperty":3,"valueOf":null}',
    '{"1":1,"0":0,"b":2,"a":1,"01":3}',
    '{"a/b~c":{"k":1,"k":2}}',
    '{"a" 1}',
    '{"a":1 "b":2}',
    '{,}',
    '{"a":1,}',
    '[1,]',
    '[,1]',
    '[1 2]',
    '{"a":}',
    'true false',
    'nul',
    '['.repeat(32) + ']'.repeat(32),
    '['.repeat(33) + ']'.repeat(33),
    '{"a":'.repeat(33) + '1' + '}'.repeat(33),
    '\u00a0{}',
    '{}\u00a0',
    '\ufeff{}',
  ];
  for (const text of cases) {
    agree(text);
    agree(text, { bigIntegerKeys: new Set(['cumulative']), maxDepth: 4 });
  }
});

void test('strict JSON: a member named like an Object.prototype property is an own data member, never a prototype change', () => {
  const v = parseStrictJson('{"toString":1,"__proto__":{"polluted":true},"valueOf":"x"}') as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(v), Object.prototype);
  assert.deepEqual(Object.keys(v), ['toString', '__proto__', 'valueOf']);
  assert.equal(Object.getOwnPropertyDescriptor(v, 'toString')?.value, 1);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});
