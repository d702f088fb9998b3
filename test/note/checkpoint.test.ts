// C2SP tlog-checkpoint note text and the SPEC §1 name rule (src/note/checkpoint.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EMPTY_TREE_ROOT_B64, formatCheckpoint, isValidName, parseCheckpoint, validateName } from '../../src/note/checkpoint.ts';

const ROOT = '1Pksj7uJcg6ztVZ3x9fvrd/rENEaGoSguo8aIzN/qpU=';

void test('parse/format round trips', () => {
  const texts = [
    `example.com/log\n3\n${ROOT}\n`,
    `example.com/log\n0\n${EMPTY_TREE_ROOT_B64}\n`,
    `example.com/log\n9007199254740991\n${ROOT}\n`,
    `example.com/log\n3\n${ROOT}\next one\n— ext two\n`,
    // tlog-checkpoint origins need not be URL-shaped (the witness accepts other logs' origins).
    `some origin with spaces\n1\n${ROOT}\n`,
  ];
  for (const text of texts) assert.equal(formatCheckpoint(parseCheckpoint(text)), text);
  const cp = parseCheckpoint(texts[3]!);
  assert.equal(cp.origin, 'example.com/log');
  assert.equal(cp.size, 3);
  assert.equal(Buffer.from(cp.rootHash).toString('base64'), ROOT);
  assert.deepEqual(cp.extensions, ['ext one', '— ext two']);
  assert.equal(
    Buffer.from(parseCheckpoint(texts[1]!).rootHash).toString('hex'),
    'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  );
});

void test('rejections', () => {
  const bad: [string, string][] = [
    [`example.com/log\n03\n${ROOT}\n`, 'leading zero in size'],
    [`example.com/log\n00\n${ROOT}\n`, 'size 00'],
    [`example.com/log\n-1\n${ROOT}\n`, 'negative size'],
    [`example.com/log\n+1\n${ROOT}\n`, 'plus sign'],
    [`example.com/log\n 1\n${ROOT}\n`, 'space'],
    [`example.com/log\n1e3\n${ROOT}\n`, 'exponent'],
    [`example.com/log\n9007199254740992\n${ROOT}\n`, 'size above 2^53 − 1'],
    [`example.com/log\n18446744073709551615\n${ROOT}\n`, 'u64 max'],
    [`example.com/log\n3\n${ROOT.slice(0, -1)}\n`, 'unpadded root'],
    [`example.com/log\n3\n${ROOT.replace('pU=', 'pV=')}\n`, 'non-canonical root'],
    [`example.com/log\n3\nAAAA\n`, 'root of 3 bytes'],
    [`example.com/log\n3\n${ROOT}`, 'no final newline'],
    [`example.com/log\n3\n`, 'two lines'],
    [`\n3\n${ROOT}\n`, 'empty origin'],
    [`example.com/log\n3\n${ROOT}\n\n`, 'empty extension line'],
    [`example.com/log\n3\n${ROOT}\r\n`, 'CR'],
    [`example.com/log\r\n3\n${ROOT}\n`, 'CR in origin'],
    [`exam\u0000ple.com/log\n3\n${ROOT}\n`, 'NUL'],
  ];
  for (const [text, why] of bad) assert.throws(() => parseCheckpoint(text), { code: 'malformed_checkpoint' }, why);
  assert.throws(() => formatCheckpoint({ origin: 'a\nb', size: 1, rootHash: new Uint8Array(32), extensions: [] }), {
    code: 'malformed_checkpoint',
  });
  assert.throws(() => formatCheckpoint({ origin: 'a', size: -1, rootHash: new Uint8Array(32), extensions: [] }), {
    code: 'malformed_checkpoint',
  });
  assert.throws(() => formatCheckpoint({ origin: 'a', size: 1, rootHash: new Uint8Array(31), extensions: [] }), {
    code: 'malformed_checkpoint',
  });
  assert.throws(() => formatCheckpoint({ origin: 'a', size: 1, rootHash: new Uint8Array(32), extensions: [''] }), {
    code: 'malformed_checkpoint',
  });
});

void test('SPEC §1 names: 1–255 bytes of 0x21–0x7E, no +, a . before the first /', () => {
  for (const ok of [
    'witness.example',
    'witness.example/w1',
    'example.com/log',
    'a.b/c/d.e',
    'sigsum.org/v1/tree/4d6d',
    'x.y',
    'a.' + 'b'.repeat(253),
  ]) {
    assert.equal(isValidName(ok), true, ok);
    validateName(ok);
  }
  for (const bad of [
    '',
    'localhost',
    'localhost/x.y',
    '/a.b',
    'a b.c',
    'a+b.c',
    'a.b/c+d',
    'é.example',
    'a.b\n',
    'a.b\t',
    'a.\u007f',
    'a.' + 'b'.repeat(254),
  ]) {
    assert.equal(isValidName(bad), false, JSON.stringify(bad));
    assert.throws(
      () => {
        validateName(bad);
      },
      { code: 'invalid_name' },
    );
  }
});
