// SPEC §4.1 pieces without a network: the --log-witnesses file rules, the reading of a peer's 200
// and 409 answers, and the duration syntax of --log-witness-interval / --log-witness-alert-lag.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { parseDurationSeconds as parseDuration } from '../../src/config/duration.ts';
import { loadLogWitnesses, parseLogWitnesses } from '../../src/log-witness/config.ts';
import { LogWitnessConfigError, PeerFailure } from '../../src/log-witness/errors.ts';
import { parseConflictSize, verifiedCosignatures } from '../../src/log-witness/reply.ts';
import { formatCheckpoint } from '../../src/note/checkpoint.ts';
import { SIG_TYPE_COSIGNATURE_V1, SIG_TYPE_ED25519, SIG_TYPE_SUBTREE_V1 } from '../../src/note/signed-note.ts';
import { mlDsa44KeyFromSeed, mlDsa44PublicKeyBytes, mlDsa44Supported } from '../../src/crypto/ml-dsa.ts';
import { formatVkey, parseVkey } from '../../src/note/vkey.ts';
import { fill } from '../helpers/anchors.ts';
import { tempDir } from '../helpers/tmp.ts';
import { ed25519Cosigner, mlDsa44Cosigner } from '../../src/note/cosigner.ts';

const key = (b: number) => ed25519KeyFromSeed(fill(b));
const vkey = (name: string, b: number, type: 0x01 | 0x04 = SIG_TYPE_COSIGNATURE_V1) =>
  formatVkey(name, type, ed25519PublicKeyBytes(key(b)));
const W1 = { url: 'https://w1.example/', vkeys: [vkey('w1.example', 1)] };
const W2 = { url: 'https://w2.example/sub', vkeys: [vkey('w2.example', 2), vkey('w2.example', 3)] };

function refused(doc: unknown, pattern: RegExp): void {
  assert.throws(
    () => parseLogWitnesses(doc),
    (e: unknown) => e instanceof LogWitnessConfigError && pattern.test(e.message),
  );
}

void test('--log-witnesses: 1 ≤ quorum ≤ witnesses, http(s) prefixes (a final / added), 0x04 vkeys, nothing listed twice', () => {
  const set = parseLogWitnesses({ quorum: 2, witnesses: [W1, W2] });
  assert.equal(set.quorum, 2);
  assert.deepEqual(
    set.witnesses.map((w) => [w.url, w.verifiers.map((v) => v.vkey)]),
    [
      ['https://w1.example/', W1.vkeys],
      ['https://w2.example/sub/', W2.vkeys],
    ],
  );
  refused({ quorum: 0, witnesses: [W1] }, /quorum/);
  refused({ quorum: 3, witnesses: [W1, W2] }, /quorum/);
  refused({ quorum: 1.5, witnesses: [W1, W2] }, /quorum/);
  refused({ quorum: '1', witnesses: [W1] }, /quorum/);
  refused({ witnesses: [W1] }, /quorum/);
  refused({ quorum: 1, witnesses: [] }, /non-empty/);
  refused({ quorum: 1, witnesses: [W1], extra: 1 }, /unknown member/);
  refused({ quorum: 1, witnesses: [{ ...W1, qpd: 5 }] }, /unknown member/);
  refused({ quorum: 1, witnesses: [{ ...W1, url: 'ftp://w1.example/' }] }, /http/);
  refused({ quorum: 1, witnesses: [{ ...W1, url: 'https://u:p@w1.example/' }] }, /credentials/);
  refused({ quorum: 1, witnesses: [{ ...W1, url: 'https://w1.example/?x=1' }] }, /query/);
  refused({ quorum: 1, witnesses: [{ ...W1, url: 'not a url' }] }, /not a URL/);
  refused({ quorum: 1, witnesses: [W1, { ...W2, url: 'https://w1.example' }] }, /twice/);
  refused({ quorum: 1, witnesses: [W1, { ...W2, vkeys: [W1.vkeys[0]] }] }, /log_witness_key_duplicate.*already listed/);
  refused({ quorum: 1, witnesses: [{ ...W1, vkeys: [vkey('w1.example', 1, SIG_TYPE_ED25519)] }] }, /0x04.*0x06/);
  refused({ quorum: 1, witnesses: [{ ...W1, vkeys: [] }] }, /1–4 vkeys/);
  refused({ quorum: 1, witnesses: [{ ...W1, vkeys: ['w1.example+00000000+BAAA'] }] }, /vkeys\[0\]/);
  refused(
    {
      quorum: 1,
      witnesses: Array.from({ length: 16 }, (_, i) => ({ url: `https://w${i}.example/`, vkeys: [vkey(`w${i}.example`, 0x40 + i)] })),
    },
    /at most 15/,
  );
});

/** Refused with `log_witness_key_duplicate` (SPEC §4.1 rev 4). */
function duplicateKey(doc: unknown): void {
  assert.throws(
    () => parseLogWitnesses(doc),
    (e: unknown) => e instanceof LogWitnessConfigError && e.code === 'log_witness_key_duplicate',
  );
}

void test('issue 25 item 5: one public key under two witnesses’ names is log_witness_key_duplicate, whatever the names (SPEC §4.1 rev 4)', () => {
  // The reproduction: witness 1's key, listed again for a second witness under another name. The
  // vkeys differ (the key ID hashes the name) but cosignature/v1 does not sign the name, so one
  // signer's line would count for both witnesses.
  const alias = { url: 'https://w1b.example/', vkeys: [vkey('w1b.example', 1)] };
  assert.notEqual(alias.vkeys[0], W1.vkeys[0]);
  duplicateKey({ quorum: 2, witnesses: [W1, alias] });
  duplicateKey({ quorum: 1, witnesses: [W2, { ...alias, vkeys: [vkey('w1b.example', 3)] }] }); // W2's second key
  // One witness listing its key twice under two names, and the same vkey twice.
  duplicateKey({ quorum: 1, witnesses: [{ ...W1, vkeys: [W1.vkeys[0], vkey('w1-alias.example', 1)] }] });
  duplicateKey({ quorum: 1, witnesses: [{ ...W1, vkeys: [W1.vkeys[0], W1.vkeys[0]] }] });
  // Through the file loader (start-up and reloads): the code survives, with the file name.
  const { dir, cleanup } = tempDir();
  try {
    const f = join(dir, 'w.json');
    writeFileSync(f, JSON.stringify({ quorum: 2, witnesses: [W1, alias] }));
    assert.throws(
      () => loadLogWitnesses(f),
      (e: unknown) => e instanceof LogWitnessConfigError && e.code === 'log_witness_key_duplicate' && e.message.includes(f),
    );
  } finally {
    cleanup();
  }
  // Distinct keys under the same names still load.
  assert.equal(parseLogWitnesses({ quorum: 2, witnesses: [W1, { ...alias, vkeys: [vkey('w1b.example', 8)] }] }).witnesses.length, 2);
});

void test('issue 25 item 5: an ML-DSA-44 key shared by two witnesses is log_witness_key_duplicate too', (t) => {
  if (!mlDsa44Supported()) {
    t.skip('no ML-DSA-44 in this runtime (Node ≥ 24.6 with OpenSSL ≥ 3.5)');
    return;
  }
  const pk = mlDsa44PublicKeyBytes(mlDsa44KeyFromSeed(fill(0x56)));
  duplicateKey({
    quorum: 2,
    witnesses: [
      { url: 'https://w5.example/', vkeys: [vkey('w5.example', 5), formatVkey('w5.example', SIG_TYPE_SUBTREE_V1, pk)] },
      { url: 'https://w6.example/', vkeys: [vkey('w6.example', 6), formatVkey('w6.example', SIG_TYPE_SUBTREE_V1, pk)] },
    ],
  });
});

void test('--log-witnesses: YAML for .yaml/.yml, JSON otherwise; the file name is in the error', () => {
  const { dir, cleanup } = tempDir();
  try {
    const y = join(dir, 'w.yaml');
    writeFileSync(y, `quorum: 1\nwitnesses:\n  - url: https://w1.example/\n    vkeys: ["${W1.vkeys[0]}"]\n`);
    assert.equal(loadLogWitnesses(y).witnesses[0]!.url, 'https://w1.example/');
    const j = join(dir, 'w.json');
    writeFileSync(j, '{"quorum": 1, "quorum": 1, "witnesses": []}');
    assert.throws(
      () => loadLogWitnesses(j),
      (e: unknown) => e instanceof LogWitnessConfigError && e.message.includes(j),
    );
  } finally {
    cleanup();
  }
});

const TEXT = formatCheckpoint({ origin: 'own.example/anchors', size: 5, rootHash: fill(7), extensions: [] });
const line = (name: string, b: number, text = TEXT) => ed25519Cosigner(name, key(b)).noteSigner(1700000000).line(text);

void test('a 200 reply: only lines of the witness’s vkeys count; a matching line that fails, or none, fails the reply', () => {
  const verifiers = W2.vkeys.map(parseVkey);
  const good = line('w2.example', 2);
  const other = line('other.example', 9);
  assert.equal(verifiedCosignatures(other + good + good, TEXT, verifiers), good, 'others ignored, one line per key');
  assert.equal(verifiedCosignatures(good + line('w2.example', 3), TEXT, verifiers), good + line('w2.example', 3));
  const fails = (body: string, re: RegExp): void => {
    assert.throws(
      () => verifiedCosignatures(body, TEXT, verifiers),
      (e: unknown) => e instanceof PeerFailure && e.code === 'invalid_peer_response' && re.test(e.message),
    );
  };
  fails(other, /no cosignature line/);
  fails(good + line('w2.example', 3, TEXT.replace('5', '6')), /does not verify/);
  fails('not a line\n', /unparsable/);
  fails('', /unparsable/);
});

void test('a 409 body is a canonical size and a newline', () => {
  assert.equal(parseConflictSize('0\n'), 0);
  assert.equal(parseConflictSize('1234\n'), 1234);
  for (const bad of ['', '\n', '01\n', '-1\n', '1 2\n', 'x\n', '99999999999999999999\n'])
    assert.throws(() => parseConflictSize(bad), PeerFailure, JSON.stringify(bad));
});

void test('durations: an integer with s, m, h or d; a bare integer is seconds (SPEC §4.1)', () => {
  assert.deepEqual(['90s', '5m', '1h', '7d', '10', '0s'].map(parseDuration), [90, 300, 3600, 604800, 10, 0]);
  for (const bad of ['', '1.5m', '-1s', '1w', '01s', 'm', '1 m', '5M']) assert.throws(() => parseDuration(bad), Error, bad);
});

void test('ML-DSA-44 witnesses (type 0x06): vkeys accepted, subtree/v1 lines over [0, size) with the root count, others fail the reply', (t) => {
  if (!mlDsa44Supported()) {
    t.skip('no ML-DSA-44 in this runtime (Node ≥ 24.6 with OpenSSL ≥ 3.5)');
    return;
  }
  const ml = mlDsa44KeyFromSeed(fill(0x55));
  const mlVkey = formatVkey('w3.example', SIG_TYPE_SUBTREE_V1, mlDsa44PublicKeyBytes(ml));
  const set = parseLogWitnesses({ quorum: 1, witnesses: [{ url: 'https://w3.example/', vkeys: [vkey('w3.example', 4), mlVkey] }] });
  const verifiers = set.witnesses[0]!.verifiers;
  const mlLine = mlDsa44Cosigner('w3.example', ml).noteSigner(1700000000).line(TEXT);
  assert.equal(verifiedCosignatures(mlLine, TEXT, verifiers), mlLine);
  assert.equal(verifiedCosignatures(line('w3.example', 4) + mlLine, TEXT, verifiers), line('w3.example', 4) + mlLine);
  // A line over another checkpoint (size 6) by the configured key fails the whole reply.
  const other = mlDsa44Cosigner('w3.example', ml).noteSigner(1700000000).line(TEXT.replace('\n5\n', '\n6\n'));
  assert.throws(() => verifiedCosignatures(line('w3.example', 4) + other, TEXT, verifiers), PeerFailure);
});
