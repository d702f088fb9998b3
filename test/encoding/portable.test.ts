// The Buffer-free byte conversions (src/encoding/portable.ts) that the codecs use where there is no
// Buffer (browsers, the verifier SDK): the same vectors as Node's Buffer (RFC 4648 §10 for base64),
// and random bytes through both paths (fast-check), so the browser path decodes exactly what the
// server path decodes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  base64FromBytes,
  bytesFromBase64,
  bytesFromHex,
  compareBytes,
  equalBytes,
  hexFromBytes,
  utf8Bytes,
} from '../../src/encoding/portable.ts';

const te = new TextEncoder();

void test('RFC 4648 §10 base64 vectors, padded and url-safe', () => {
  const vectors: [string, string][] = [
    ['', ''],
    ['f', 'Zg=='],
    ['fo', 'Zm8='],
    ['foo', 'Zm9v'],
    ['foob', 'Zm9vYg=='],
    ['fooba', 'Zm9vYmE='],
    ['foobar', 'Zm9vYmFy'],
  ];
  for (const [plain, b64] of vectors) {
    assert.equal(base64FromBytes(te.encode(plain)), b64);
    assert.equal(base64FromBytes(te.encode(plain), true), b64.replace(/=+$/, ''));
    assert.deepEqual(bytesFromBase64(b64), te.encode(plain));
    assert.deepEqual(bytesFromBase64(b64.replace(/=+$/, '')), te.encode(plain));
  }
  assert.equal(base64FromBytes(Uint8Array.of(0xfb, 0xff), true), '-_8');
  assert.deepEqual(bytesFromBase64('-_8'), Uint8Array.of(0xfb, 0xff));
});

void test('hex, base64, base64url and UTF-8 agree with Buffer on random input', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
      const buf = Buffer.from(bytes);
      assert.equal(hexFromBytes(bytes), buf.toString('hex'));
      assert.deepEqual(bytesFromHex(buf.toString('hex').toUpperCase()), new Uint8Array(buf));
      assert.equal(base64FromBytes(bytes), buf.toString('base64'));
      assert.equal(base64FromBytes(bytes, true), buf.toString('base64url'));
      assert.deepEqual(bytesFromBase64(buf.toString('base64')), new Uint8Array(buf));
      assert.deepEqual(bytesFromBase64(buf.toString('base64url')), new Uint8Array(buf));
    }),
    { numRuns: 500 },
  );
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme' }), (s) => {
      assert.deepEqual(new Uint8Array(utf8Bytes(s)), te.encode(s));
    }),
  );
});

void test('non-canonical base64 decodes with its trailing bits dropped, as Buffer does (the codecs re-encode to refuse it)', () => {
  for (const text of ['Zh==', 'Zm9=', 'AB==', 'AAB=']) assert.deepEqual(bytesFromBase64(text), new Uint8Array(Buffer.from(text, 'base64')));
});

void test('compareBytes orders as Buffer.compare', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 6 }), fc.uint8Array({ maxLength: 6 }), (a, b) => {
      assert.equal(compareBytes(a, b), Buffer.compare(a, b));
      assert.equal(equalBytes(a, b), Buffer.compare(a, b) === 0);
    }),
  );
});
