/**
 * Hostile-input generators for the fuzzing suites (fast-check): values that sit on the edges of
 * every field rule, and mutations of valid documents — structural ones on parsed JSON (replace,
 * delete, add, wrap) and textual ones on their serialisation (truncate, splice, flip, split a
 * surrogate pair, duplicate a member, CR/LF games). Mutating valid documents is what reaches the
 * deep checks: a purely random byte string dies in the first tokenizer.
 */
import fc from 'fast-check';
import { ProtocolError } from '../../src/errors.ts';

const EDGE_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -0,
  -1,
  1,
  2 ** 31,
  2 ** 32,
  2 ** 53 - 1,
  2 ** 53,
  -(2 ** 53),
  1.5,
  1e308,
  1e-7,
  '',
  ' ',
  '\u0000',
  '\u001f',
  '\u007f',
  '\ud800',
  '\udfff',
  '\ufeff',
  '\u2028',
  'é',
  '😀',
  'did:keri:',
  'did:keri:E',
  'did:key:z6Mk',
  'did:keri:' + 'A'.repeat(300),
  'a'.repeat(300),
  'x'.repeat(70_000),
  '0'.repeat(64),
  'F'.repeat(64),
  'G'.repeat(64),
  'ff'.repeat(31),
  'ff'.repeat(33),
  '00'.repeat(64),
  '0x' + '00'.repeat(31),
  '2023-11-14T22:13:21Z',
  '2023-02-30T00:00:00Z',
  '2023-11-14T22:13:60Z',
  '2023-11-14 22:13:21Z',
  '2023-11-14T22:13:21.000Z',
  '2023-11-14T22:13:21+00:00',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '99999-12-31T23:59:59Z',
  '1e3',
  '00',
  '01',
  '-1',
  '+1',
  '1.0',
  ' 1',
  '340282366920938463463374607431768211455',
  '340282366920938463463374607431768211456',
  'ed25519',
  'p256',
  'ED25519',
  'secp256k1',
  'sts.amazonaws.com',
  'deploy:staging',
  'DEPLOY',
  '*',
  [],
  {},
  [[[[]]]],
  { a: { b: { c: {} } } },
  [null],
  [''],
  ['a'.repeat(65)],
  { __proto__: 1 },
  { constructor: 'x' },
  { toString: 1 },
];

/** A value chosen to break a field rule (or to satisfy it in an unexpected way). */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...EDGE_VALUES) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.stringMatching(/^[0-9a-fA-F]{0,130}$/) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);

type Path = (string | number)[];

function paths(v: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...prefix, i], out));
  else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) paths(x, [...prefix, k], out);
  return out;
}

function getAt(v: unknown, p: Path): unknown {
  let cur = v;
  for (const k of p) cur = (cur as Record<string | number, unknown>)[k];
  return cur;
}

function setAt(root: unknown, p: Path, value: unknown): unknown {
  if (p.length === 0) return value;
  const parent = getAt(root, p.slice(0, -1)) as Record<string | number, unknown>;
  parent[p[p.length - 1]!] = value;
  return root;
}

function deleteAt(root: unknown, p: Path): unknown {
  if (p.length === 0) return root;
  const parent = getAt(root, p.slice(0, -1));
  const k = p[p.length - 1]!;
  if (Array.isArray(parent)) parent.splice(k as number, 1);
  else Reflect.deleteProperty(parent as object, k);
  return root;
}

export type StructOp =
  | { op: 'replace'; at: number; value: unknown }
  | { op: 'delete'; at: number }
  | { op: 'add'; at: number; key: string; value: unknown }
  | { op: 'wrap'; at: number }
  | { op: 'swap'; at: number; with: number };

export const structOp: fc.Arbitrary<StructOp> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('replace' as const), at: fc.nat(), value: hostileValue }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), at: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('add' as const),
      at: fc.nat(),
      key: fc.oneof(fc.constantFrom('extra', '__proto__', 'v', 'proof', ''), fc.string({ maxLength: 8 })),
      value: hostileValue,
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('wrap' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('swap' as const), at: fc.nat(), with: fc.nat() }) },
);

/** Apply structural mutations to a deep copy of `doc` (positions are taken modulo the node count). */
export function applyStruct(doc: unknown, ops: readonly StructOp[]): unknown {
  let v: unknown = structuredClone(doc);
  for (const o of ops) {
    const all = paths(v);
    const p = all[o.at % all.length]!;
    switch (o.op) {
      case 'replace':
        v = setAt(v, p, structuredClone(o.value));
        break;
      case 'delete':
        v = deleteAt(v, p);
        break;
      case 'add': {
        const target = getAt(v, p);
        if (target !== null && typeof target === 'object' && !Array.isArray(target))
          Object.defineProperty(target, o.key, { value: structuredClone(o.value), enumerable: true, writable: true, configurable: true });
        else if (Array.isArray(target)) target.push(structuredClone(o.value));
        else v = setAt(v, p, [target, structuredClone(o.value)]);
        break;
      }
      case 'wrap':
        v = setAt(v, p, [getAt(v, p)]);
        break;
      case 'swap': {
        const q = all[o.with % all.length]!;
        if (p.length > 0 && q.length > 0 && !isPrefix(p, q) && !isPrefix(q, p)) {
          const a = getAt(v, p);
          const b = getAt(v, q);
          setAt(v, p, b);
          setAt(v, q, a);
        }
        break;
      }
    }
  }
  return v;
}

function isPrefix(a: Path, b: Path): boolean {
  return a.length <= b.length && a.every((k, i) => b[i] === k);
}

export type TextOp =
  | { op: 'truncate'; at: number }
  | { op: 'insert'; at: number; text: string }
  | { op: 'delete'; at: number; len: number }
  | { op: 'flip'; at: number; char: string }
  | { op: 'duplicate'; at: number; len: number }
  | { op: 'line'; at: number; text: string }
  | { op: 'dropLine'; at: number }
  | { op: 'swapLines'; at: number; with: number }
  | { op: 'crlf' };

const hostileText = fc.oneof(
  fc.constantFrom(
    '\n',
    '\r',
    '\r\n',
    '\n\n',
    '\u0000',
    '\ud800',
    '\\ud800',
    '"',
    '\\',
    '{',
    '}',
    '[',
    ']',
    ',',
    ':',
    ' ',
    '\t',
    '—',
    '+',
    '=',
    '==',
    '/',
    '0',
    '-',
    'e5',
    '.5',
    '"a":1,',
    ',"anchor":{}',
    'null',
    '\u00a0',
    '\ufeff',
    'é',
  ),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: 'binary-ascii', maxLength: 12 }),
);

export const textOp: fc.Arbitrary<TextOp> = fc.oneof(
  fc.record({ op: fc.constant('truncate' as const), at: fc.nat() }),
  { weight: 3, arbitrary: fc.record({ op: fc.constant('insert' as const), at: fc.nat(), text: hostileText }) },
  fc.record({ op: fc.constant('delete' as const), at: fc.nat(), len: fc.integer({ min: 1, max: 8 }) }),
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('flip' as const),
      at: fc.nat(),
      char: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    }),
  },
  fc.record({ op: fc.constant('duplicate' as const), at: fc.nat(), len: fc.integer({ min: 1, max: 200 }) }),
  { weight: 2, arbitrary: fc.record({ op: fc.constant('line' as const), at: fc.nat(), text: hostileText }) },
  fc.record({ op: fc.constant('dropLine' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('swapLines' as const), at: fc.nat(), with: fc.nat() }),
  fc.record({ op: fc.constant('crlf' as const) }),
);

export function applyText(text: string, ops: readonly TextOp[]): string {
  let s = text;
  for (const o of ops) {
    const n = s.length + 1;
    switch (o.op) {
      case 'truncate':
        s = s.slice(0, o.at % n);
        break;
      case 'insert': {
        const i = o.at % n;
        s = s.slice(0, i) + o.text + s.slice(i);
        break;
      }
      case 'delete': {
        const i = o.at % n;
        s = s.slice(0, i) + s.slice(i + o.len);
        break;
      }
      case 'flip': {
        const i = o.at % Math.max(1, s.length);
        s = s.slice(0, i) + o.char + s.slice(i + 1);
        break;
      }
      case 'duplicate': {
        const i = o.at % n;
        s = s.slice(0, i) + s.slice(i, i + o.len) + s.slice(i);
        break;
      }
      case 'line':
      case 'dropLine':
      case 'swapLines': {
        const lines = s.split('\n');
        const i = o.at % lines.length;
        if (o.op === 'line') lines[i] = o.text;
        else if (o.op === 'dropLine') lines.splice(i, 1);
        else {
          const j = o.with % lines.length;
          [lines[i], lines[j]] = [lines[j]!, lines[i]!];
        }
        s = lines.join('\n');
        break;
      }
      case 'crlf':
        s = s.replaceAll('\n', '\r\n');
        break;
    }
  }
  return s;
}

/** A mutated serialisation of `doc`: structural ops, then (sometimes) textual ops on the JSON text. */
export function mutatedJson(doc: unknown, serialize: (v: unknown) => string = (v) => JSON.stringify(v)): fc.Arbitrary<string> {
  return fc
    .tuple(fc.array(structOp, { minLength: 0, maxLength: 3 }), fc.array(textOp, { minLength: 0, maxLength: 2 }))
    .filter(([a, b]) => a.length + b.length > 0)
    .map(([s, t]) => applyText(serialize(applyStruct(doc, s)), t));
}

/** A mutated text document (notes, add-checkpoint bodies, tlog-proofs). */
export function mutatedText(base: string | fc.Arbitrary<string>): fc.Arbitrary<string> {
  const b = typeof base === 'string' ? fc.constant(base) : base;
  return fc.tuple(b, fc.array(textOp, { minLength: 1, maxLength: 3 })).map(([s, ops]) => applyText(s, ops));
}

/**
 * Run `fn`; a thrown ProtocolError with a snake_case code is a clean refusal (returns its code),
 * anything else is a crash (rethrown with the input).
 */
export function refusalOrValue<T>(fn: () => T, input: unknown): { ok: true; value: T } | { ok: false; code: string } {
  try {
    return { ok: true, value: fn() };
  } catch (e) {
    if (e instanceof ProtocolError && /^[a-z][a-z0-9_]*$/.test(e.code)) return { ok: false, code: e.code };
    const shown = typeof input === 'string' ? JSON.stringify(input.slice(0, 300)) : String(input);
    throw new Error(`crash (not a typed refusal) on input ${shown}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`, {
      cause: e,
    });
  }
}
