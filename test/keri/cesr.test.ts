// CESR text-domain primitives of a KEL (SPEC §3.5 "Events" qb64 rule and "Attachments"):
// round trips of every indexed-signature code and of -G couples, and the refusals (truncation,
// trailing data, non-zero pad bits, unknown codes) as KelError `malformed`, never another error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeAttachment, parseAttachment, type EventAttachment } from '../../src/keri/attachments.ts';
import { KelError } from '../../src/keri/errors.ts';
import { b64IntText, decodeQb64, encodeQb64 } from '../../src/keri/qb64.ts';

const sig = (fill: number): Uint8Array => new Uint8Array(64).fill(fill);
const said = encodeQb64('E', new Uint8Array(32).fill(7));

const sample: EventAttachment = {
  signatures: [
    { code: 'A', index: 0, ondex: 0, signature: sig(1) },
    { code: 'B', index: 63, ondex: null, signature: sig(2) },
    { code: 'E', index: 5, ondex: 5, signature: sig(3) },
    { code: 'F', index: 6, ondex: null, signature: sig(4) },
    { code: '2A', index: 100, ondex: 4095, signature: sig(5) },
    { code: '2E', index: 4095, ondex: 0, signature: sig(6) },
  ],
  sourceSeals: [
    { s: 1n, d: said },
    { s: (1n << 128n) - 1n, d: said },
  ],
};

void test('every indexed-signature code and -G couples round-trip; lengths are 88 and 92 characters', () => {
  const text = encodeAttachment(sample);
  assert.ok(text.startsWith('-AAG'));
  assert.equal(text.length, 4 + 4 * 88 + 2 * 92 + 4 + 2 * (24 + 44));
  assert.deepEqual(parseAttachment(text), sample);
  // 2B/2F carry an ondex field, which current-only codes ignore.
  const currentOnly = encodeAttachment({ signatures: [{ code: '2B', index: 70, ondex: null, signature: sig(9) }], sourceSeals: [] });
  assert.equal(currentOnly.length, 4 + 92);
  assert.deepEqual(parseAttachment(currentOnly).signatures[0], { code: '2B', index: 70, ondex: null, signature: sig(9) });
  assert.deepEqual(parseAttachment(''), { signatures: [], sourceSeals: [] });
  assert.deepEqual(parseAttachment('-AAA'), { signatures: [], sourceSeals: [] });
});

void test('every truncation and any trailing data is malformed (KelError), never another error', () => {
  const text = encodeAttachment(sample);
  const signaturesEnd = text.indexOf('-G');
  assert.deepEqual(parseAttachment(text.slice(0, signaturesEnd)).signatures, sample.signatures, '-G is optional');
  for (let n = 1; n < text.length; n++) {
    if (n === signaturesEnd) continue;
    assert.throws(
      () => parseAttachment(text.slice(0, n)),
      (e: unknown) => e instanceof KelError && e.code === 'malformed',
      `truncated at ${n}`,
    );
  }
  for (const extra of ['x', '-', '-A', '-GAA-GAA', '-AAA']) {
    assert.throws(() => parseAttachment(text + extra), KelError, extra);
  }
  assert.throws(() => parseAttachment('-GAB0AAAAAAAAAAAAAAAAAAAAAAB' + said), KelError, '-G without -A');
  assert.throws(() => parseAttachment('-AAB' + 'C' + 'A' + 'A'.repeat(86)), KelError, 'unknown code C');
  assert.throws(() => parseAttachment('-AAB' + '2C' + 'AAAA' + 'A'.repeat(86)), KelError, 'unknown code 2C');
  assert.throws(() => parseAttachment('-AA!' + 'AA' + 'A'.repeat(86)), KelError, 'bad count');
});

void test('non-zero pad bits in a signature or a qb64 primitive are refused (not canonical)', () => {
  const one = encodeAttachment({ signatures: [{ code: 'A', index: 0, ondex: 0, signature: sig(0xff) }], sourceSeals: [] });
  // The body's first character carries 4 pad bits: 'A'..'D' keep them zero, 'E' sets one.
  const body = one.slice(6);
  assert.match(body[0]!, /[A-D]/);
  assert.throws(() => parseAttachment(one.slice(0, 6) + 'E' + body.slice(1)), KelError);
  assert.equal(decodeQb64('E' + 'w' + said.slice(2), ['E']), null);
  assert.equal(decodeQb64(said, ['D']), null, 'a code not allowed here');
  assert.equal(decodeQb64(said.slice(0, 43), ['E']), null);
  assert.equal(decodeQb64(said + 'A', ['E']), null);
  assert.equal(decodeQb64(said.replace(/.$/, '+'), ['E']), null, 'base64, not base64url');
  assert.throws(() => b64IntText(4096, 2), RangeError);
  assert.equal(b64IntText(4095, 2), '__');
});
