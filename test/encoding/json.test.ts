import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseStrictJson, stringifyJson, decodeUtf8, JsonError } from '../../src/encoding/json.ts';

const big = new Set(['cumulative']);

void test('strict JSON: ordinary documents parse like JSON.parse', () => {
  const text = '{"a":[1,-2,0,true,false,null,"x\\u00e9\\n"],"b":{"c":{}}, "d" : [ ] }';
  assert.deepEqual(parseStrictJson(text), JSON.parse(text));
  assert.equal(parseStrictJson(' 42 '), 42);
  assert.equal(Object.is(parseStrictJson('-0'), 0), true);
});

function rejects(text: string, pointer: string, opts = {}): void {
  assert.throws(
    () => parseStrictJson(text, opts),
    (e: unknown) => e instanceof JsonError && e.code === 'invalid_json' && e.pointer === pointer,
    text,
  );
}

void test('strict JSON: SPEC rejections carry the JSON pointer', () => {
  rejects('{"a":1,"a":2}', '/a');
  rejects('{"x":{"a/b":{"k":1,"k":1}}}', '/x/a~1b/k');
  rejects('{"s":"\\ud800"}', '/s');
  rejects('{"s":"\\udc00\\ud800"}', '/s');
  rejects('{"n":1.0}', '/n');
  rejects('{"n":1e3}', '/n');
  rejects('{"n":[0, 1E3]}', '/n/1');
  rejects('{"n":9007199254740992}', '/n');
  rejects('{"n":-9007199254740992}', '/n');
  rejects('{"n":01}', '/n');
  rejects('{"n":+1}', '/n');
  rejects('{"s":"a\tb"}', '/s');
  rejects('{"s":"\\x"}', '/s');
  rejects('[1,]', '/1');
  rejects('{"a":1,}', '');
  rejects('{"a":1} x', '');
  rejects("{'a':1}", '');
  rejects('', '');
  rejects('NaN', '');
});

void test('strict JSON: nesting up to 32 levels, not 33', () => {
  assert.doesNotThrow(() => parseStrictJson('['.repeat(32) + ']'.repeat(32)));
  assert.throws(() => parseStrictJson('['.repeat(33) + ']'.repeat(33)), JsonError);
  assert.throws(() => parseStrictJson('{"a":'.repeat(33) + '1' + '}'.repeat(33)), JsonError);
});

void test('strict JSON: big integers only under the named members, as canonical text', () => {
  const v = parseStrictJson('{"cumulative":340282366920938463463374607431768211455}', { bigIntegerKeys: big }) as Record<string, unknown>;
  assert.equal(v.cumulative, '340282366920938463463374607431768211455');
  assert.equal((parseStrictJson('{"cumulative":100}', { bigIntegerKeys: big }) as Record<string, unknown>).cumulative, 100);
  rejects('{"index":340282366920938463463374607431768211455}', '/index', { bigIntegerKeys: big });
  rejects('{"cumulative":1.5}', '/cumulative', { bigIntegerKeys: big });
});

void test('strict JSON: __proto__ is a plain member', () => {
  const v = parseStrictJson('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(v), Object.prototype);
  assert.deepEqual(Object.keys(v), ['__proto__']);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

void test('lossless stringify writes bigints as literals', () => {
  assert.equal(stringifyJson({ c: 340282366920938463463374607431768211455n, n: 1 }), '{"c":340282366920938463463374607431768211455,"n":1}');
});

void test('UTF-8 decoding is strict', () => {
  assert.equal(decodeUtf8(Buffer.from('héllo')), 'héllo');
  assert.throws(() => decodeUtf8(new Uint8Array([0xc3, 0x28])), { code: 'invalid_utf8' });
  assert.throws(() => decodeUtf8(new Uint8Array([0xed, 0xa0, 0x80])), { code: 'invalid_utf8' });
});
