// base58btc (src/encoding/base58.ts): Bitcoin-alphabet vectors from the IETF base58 draft
// (draft-msporny-base58) and round trips.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { MAX_BASE58_LENGTH, decodeBase58, encodeBase58 } from '../../src/encoding/base58.ts';

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

void test('known vectors', () => {
  const cases: [Uint8Array, string][] = [
    [utf8('Hello World!'), '2NEpo7TZRRrLZSi2U'],
    [utf8('The quick brown fox jumps over the lazy dog.'), 'USm3fpXnKG5EUBx2ndxBDMPVciP5hGey2Jh4NDv6gmeo1LkMeiKrLJUUBk6Z'],
    [Uint8Array.from([0x00, 0x00, 0x28, 0x7f, 0xb4, 0xcd]), '11233QC4'],
    [new Uint8Array(0), ''],
    [Uint8Array.from([0]), '1'],
    [Uint8Array.from([0, 0, 0]), '111'],
    [Uint8Array.from([57]), 'z'],
    [Uint8Array.from([58]), '21'],
    [Uint8Array.from([0xff]), '5Q'],
  ];
  for (const [bytes, text] of cases) {
    assert.equal(encodeBase58(bytes), text);
    assert.deepEqual(decodeBase58(text), bytes);
  }
});

void test('round trips, with leading zero bytes', () => {
  for (let i = 0; i < 200; i++) {
    const bytes = new Uint8Array(randomBytes(i % 40));
    if (i % 3 === 0 && bytes.length > 2) bytes.fill(0, 0, 2);
    assert.deepEqual(decodeBase58(encodeBase58(bytes)), bytes);
  }
});

void test('strict decoding', () => {
  for (const bad of ['0', 'O', 'I', 'l', ' 1', '1 ', '+', 'é', '2NEpo7TZRRrLZSi2U\n']) {
    assert.throws(() => decodeBase58(bad), { code: 'invalid_base58' }, bad);
  }
  assert.throws(() => decodeBase58('2NEpo7TZRRrLZSi2U', 11), { code: 'invalid_base58' });
  assert.equal(decodeBase58('2NEpo7TZRRrLZSi2U', 12).length, 12);
  assert.throws(() => decodeBase58('1'.repeat(MAX_BASE58_LENGTH + 1)), { code: 'invalid_base58' });
});
