import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeHex, encodeHex, decodeHex32, isHex } from '../../src/encoding/hex.ts';
import { decodeBase64, decodeBase64url, encodeBase64, encodeBase64url } from '../../src/encoding/base64.ts';
import { parseDecimal, u128FromJson, formatDecimal, U128_LIMIT } from '../../src/encoding/decimal.ts';
import { parseTimestamp, formatTimestamp, parseRfc3339, formatRfc3339 } from '../../src/encoding/time.ts';

void test('hex: lowercase out, either case in, exact lengths', () => {
  assert.equal(encodeHex(new Uint8Array([0xab, 0x01])), 'ab01');
  assert.deepEqual([...decodeHex('AB01')], [0xab, 0x01]);
  assert.equal(decodeHex32('00'.repeat(32)).length, 32);
  for (const bad of ['0', 'zz', '0x00', ' 00', '00 ', 'é0']) assert.throws(() => decodeHex(bad), { code: 'invalid_hex' });
  assert.throws(() => decodeHex32('00'.repeat(31)), { code: 'invalid_hex' });
  assert.throws(() => decodeHex32('00'.repeat(33)), { code: 'invalid_hex' });
  assert.equal(isHex('Ab'.repeat(32), 32), true);
  assert.equal(isHex('Ab'.repeat(31), 32), false);
});

void test('base64: canonical padded standard form only', () => {
  const bytes = new Uint8Array([0xfb, 0xff, 0x01]);
  assert.equal(encodeBase64(bytes), '+/8B');
  assert.deepEqual(decodeBase64('+/8B'), bytes);
  assert.deepEqual([...decodeBase64('AQ==')], [1]);
  assert.deepEqual([...decodeBase64('')], []);
  // unpadded, url alphabet, trailing bits set, junk, whitespace
  for (const bad of ['AQ', '-_8B', 'AR==', 'AQ=', 'AQ===', 'A Q==', 'AQ==\n', '*AAA']) {
    assert.throws(() => decodeBase64(bad), { code: 'invalid_base64' }, bad);
  }
  assert.equal(decodeBase64('47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=', 32).length, 32);
  assert.throws(() => decodeBase64('AQ==', 32), { code: 'invalid_base64' });
});

void test('base64url: canonical unpadded form only', () => {
  const bytes = new Uint8Array([0xfb, 0xff, 0x01, 0x02]);
  assert.equal(encodeBase64url(bytes), '-_8BAg');
  assert.deepEqual(decodeBase64url('-_8BAg'), bytes);
  for (const bad of ['-_8BAg==', '+/8BAg', '-_8BAh', 'A', 'AB CD']) {
    assert.throws(() => decodeBase64url(bad), { code: 'invalid_base64url' }, bad);
  }
});

void test('decimal: canonical u128', () => {
  assert.equal(parseDecimal('0'), 0n);
  assert.equal(parseDecimal('340282366920938463463374607431768211455'), U128_LIMIT - 1n);
  for (const bad of ['', '01', '-1', '+1', '1.0', '1e3', ' 1', '340282366920938463463374607431768211456']) {
    assert.throws(() => parseDecimal(bad), { code: 'invalid_decimal' }, bad);
  }
  assert.equal(u128FromJson(100), 100n);
  assert.equal(u128FromJson('100'), 100n);
  assert.throws(() => u128FromJson(-1), { code: 'invalid_decimal' });
  assert.throws(() => u128FromJson(1.5), { code: 'invalid_decimal' });
  assert.equal(formatDecimal(12345678901234567890123n), '12345678901234567890123');
});

void test('anchor timestamps: exact form, calendar-checked', () => {
  assert.equal(parseTimestamp('2023-11-14T22:13:21Z'), 1700000001);
  assert.equal(formatTimestamp(1700000001), '2023-11-14T22:13:21Z');
  assert.equal(parseTimestamp('1970-01-01T00:00:00Z'), 0);
  assert.equal(parseTimestamp('2024-02-29T00:00:00Z'), 1709164800);
  assert.equal(formatTimestamp(parseTimestamp('0001-01-01T00:00:00Z')), '0001-01-01T00:00:00Z');
  assert.equal(formatTimestamp(parseTimestamp('9999-12-31T23:59:59Z')), '9999-12-31T23:59:59Z');
  for (const bad of [
    '2023-11-14T22:13:21.000Z',
    '2023-11-14T22:13:21+00:00',
    '2023-11-14 22:13:21Z',
    '2023-11-14t22:13:21Z',
    '2023-11-14T22:13:21z',
    '2023-02-29T00:00:00Z',
    '2023-13-01T00:00:00Z',
    '2023-11-14T24:00:00Z',
    '2023-11-14T22:60:00Z',
    '2023-11-14T22:13:60Z',
    '2023-11-00T00:00:00Z',
    '23-11-14T22:13:21Z',
  ]) {
    assert.throws(() => parseTimestamp(bad), { code: 'invalid_timestamp' }, bad);
  }
  // Round trip over a wide range of instants.
  for (let s = -62135596800; s < 253402300800; s += 86399 * 997) assert.equal(parseTimestamp(formatTimestamp(s)), s);
});

void test('RFC 3339 instants: offsets and nanosecond-faithful re-printing', () => {
  assert.deepEqual(parseRfc3339('2024-01-01T00:00:00Z'), { seconds: 1704067200, nanos: 0 });
  assert.deepEqual(parseRfc3339('2024-01-01T01:00:00+01:00'), { seconds: 1704067200, nanos: 0 });
  assert.deepEqual(parseRfc3339('2023-12-31t23:30:00.5-00:30'), { seconds: 1704067200, nanos: 500000000 });
  assert.equal(formatRfc3339(parseRfc3339('2024-01-01T00:00:00.120Z')), '2024-01-01T00:00:00.120Z');
  assert.equal(formatRfc3339(parseRfc3339('2024-01-01T00:00:00.1Z')), '2024-01-01T00:00:00.100Z');
  assert.equal(formatRfc3339(parseRfc3339('2024-01-01T00:00:00.0001Z')), '2024-01-01T00:00:00.000100Z');
  assert.equal(formatRfc3339(parseRfc3339('2024-01-01T00:00:00.123456789Z')), '2024-01-01T00:00:00.123456789Z');
  assert.equal(formatRfc3339(parseRfc3339('2024-01-01T00:00:00.000000000Z')), '2024-01-01T00:00:00Z');
  for (const bad of ['2024-01-01T00:00:00', '2024-01-01T00:00:00.Z', '2024-01-01T00:00:00.1234567890Z', '2024-01-01T00:00:00+24:00']) {
    assert.throws(() => parseRfc3339(bad), { code: 'invalid_timestamp' }, bad);
  }
});
