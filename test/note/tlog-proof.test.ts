// C2SP tlog-proof (src/note/tlog-proof.ts). Vectors: ../shared/research/c2sp-and-peers.md Appendix C
// (size-8 checkpoint of leaves "leaf 0".."leaf 7", its log signature and cosignature, and the
// inclusion proof of leaf 5), and the format example of c2sp.org/tlog-proof.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import { formatTlogProof, formatTlogProofBase64, parseTlogProof, MAX_TLOG_PROOF_HASHES } from '../../src/note/tlog-proof.ts';
import { verifyTlogProof } from '../../src/note/tlog-proof-verify.ts';
import { signNote } from '../../src/note/signed-note.ts';
import { ed25519NoteSigner, parseVkey } from '../../src/note/vkey.ts';
import { hashLeaf } from '../../src/tlog/hash.ts';

const LOG_VKEY = 'example.com/log+01882cac+ASVDuS/xCVURR2rcg2nbbdyTNmWhGXjdoUBO4QZsqVWd';
const WITNESS_VKEY = 'witness.example/w1+e75f6532+BAOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4';
const CHECKPOINT_8 =
  'example.com/log\n8\nxcLIIO00L92ozolra5z1uMAKIcxLIHFMxuXTwFw1JAs=\n\n' +
  '— example.com/log AYgsrCZHRR9ejRCutsbrb373wd1mjNijdtXMfz6iMkcrOjk8vIHLKqS6eNYD9XEEsICUKK9wcl+C14poiq5oOG8BeQY=\n' +
  '— witness.example/w1 519lMgAAAABlU/EAv8IGLu0y0Gi0JqSDgdAlb+Ah/KJIDaOdc25DlpDjXH8EezO5CSyPStRivEgF41whknSHFxw/DYC9yU1EJVT5DQ==\n';
const PROOF_5 = [
  'gxFfiUeVX6/cKifn9MCFS72Nonuxs+NAXbVxya+Nvho=',
  'brzFS2cQ7gYQp/yCzeUXE9soDj3IRRW96WMqGbZaC5M=',
  'T2MQhKFXxU9U/Psj/164ZQxLoWDClbsTqYMrEJ1SZ34=',
];
const PROOF_TEXT = `c2sp.org/tlog-proof@v1\nindex 5\n${PROOF_5.join('\n')}\n\n${CHECKPOINT_8}`;
const leaf = (i: number): Uint8Array => new TextEncoder().encode(`leaf ${i}`);

void test('format and parse round trip (no extra line is emitted)', () => {
  const text = formatTlogProof({ index: 5, proof: PROOF_5.map((b) => Buffer.from(b, 'base64')), checkpoint: CHECKPOINT_8 });
  assert.equal(text, PROOF_TEXT);
  const p = parseTlogProof(text);
  assert.equal(p.index, 5);
  assert.equal(p.extra, undefined);
  assert.deepEqual(
    p.proof.map((h) => Buffer.from(h).toString('base64')),
    PROOF_5,
  );
  assert.equal(p.checkpoint, CHECKPOINT_8);
  assert.equal(p.tree.size, 8);
  assert.equal(p.note.signatures.length, 2);
  assert.equal(formatTlogProof(p), text);
  assert.deepEqual(parseTlogProof(new TextEncoder().encode(text)).proof, p.proof);
});

void test('formatTlogProofBase64 (hashes already encoded, as the anchor role lists them) writes the same text, with the same refusals', () => {
  assert.equal(formatTlogProofBase64(5, PROOF_5, CHECKPOINT_8), PROOF_TEXT);
  assert.equal(formatTlogProofBase64(0, [], CHECKPOINT_8), formatTlogProof({ index: 0, proof: [], checkpoint: CHECKPOINT_8 }));
  // not the encoding of 32 bytes: 31 bytes, 33 bytes
  assert.throws(() => formatTlogProofBase64(5, [Buffer.alloc(31).toString('base64')], CHECKPOINT_8), /32 bytes/);
  assert.throws(() => formatTlogProofBase64(5, [Buffer.alloc(33).toString('base64')], CHECKPOINT_8), /32 bytes/);
  assert.throws(() => formatTlogProofBase64(-1, PROOF_5, CHECKPOINT_8), /index/);
  assert.throws(
    () =>
      formatTlogProofBase64(
        5,
        Array.from({ length: MAX_TLOG_PROOF_HASHES + 1 }, () => PROOF_5[0]!),
        CHECKPOINT_8,
      ),
    /more than/,
  );
  assert.throws(() => formatTlogProofBase64(5, PROOF_5, 'not a checkpoint'));
});

void test('an extra line is parsed and kept', () => {
  const withExtra = PROOF_TEXT.replace('index 5', 'extra YWdlLXYxLjIuMS1kYXJ3aW4tYXJtNjQudGFyLmd6\nindex 5');
  const p = parseTlogProof(withExtra);
  assert.equal(new TextDecoder().decode(p.extra), 'age-v1.2.1-darwin-arm64.tar.gz');
  assert.equal(formatTlogProof(p), withExtra);
});

void test('verifyTlogProof: the leaf-5 inclusion proof of Appendix C', () => {
  assert.equal(Buffer.from(hashLeaf(leaf(5))).toString('base64'), 'la3xW37122c4aouvvv7k0UVmKvpFB0DhhoVT6DSO06A=');
  const log = parseVkey(LOG_VKEY);
  const witness = parseVkey(WITNESS_VKEY);
  const r = verifyTlogProof(PROOF_TEXT, { data: leaf(5) }, [log, witness], { origin: 'example.com/log' });
  assert.equal(r.index, 5);
  assert.equal(r.tree.size, 8);
  assert.deepEqual(
    r.note.verified.map((v) => v.verifier.name),
    ['example.com/log', 'witness.example/w1'],
  );
  assert.equal(r.note.verified[1]!.timestamp, 1700000000n);
  assert.equal(verifyTlogProof(PROOF_TEXT, { hash: hashLeaf(leaf(5)) }, [log]).note.unverified.length, 1);
  // Wrong leaf, wrong index, wrong origin, wrong key, tampered proof.
  assert.throws(() => verifyTlogProof(PROOF_TEXT, { data: leaf(4) }, [log]), { code: 'inclusion_proof_invalid' });
  assert.throws(() => verifyTlogProof(PROOF_TEXT.replace('index 5', 'index 4'), { data: leaf(5) }, [log]), {
    code: 'inclusion_proof_invalid',
  });
  assert.throws(() => verifyTlogProof(PROOF_TEXT.replace('index 5', 'index 8'), { data: leaf(5) }, [log]), {
    code: 'inclusion_proof_invalid',
  });
  assert.throws(() => verifyTlogProof(PROOF_TEXT, { data: leaf(5) }, [log], { origin: 'example.com/other' }), { code: 'origin_mismatch' });
  assert.throws(() => verifyTlogProof(PROOF_TEXT, { data: leaf(5) }, []), { code: 'unverified_note' });
  const lines = PROOF_TEXT.split('\n');
  lines[2] = lines[3]!;
  assert.throws(() => verifyTlogProof(lines.join('\n'), { data: leaf(5) }, [log]), { code: 'inclusion_proof_invalid' });
  // Tampered checkpoint: signature fails before inclusion is looked at.
  assert.throws(() => verifyTlogProof(PROOF_TEXT.replace('\n8\n', '\n9\n'), { data: leaf(5) }, [log]), { code: 'invalid_signature' });
});

void test('size-1 tree: empty proof', () => {
  const logKey = ed25519KeyFromSeed(Uint8Array.from({ length: 32 }, (_, i) => 0x40 + i));
  const signer = ed25519NoteSigner('example.com/log', logKey);
  const root = Buffer.from(hashLeaf(leaf(0))).toString('base64');
  const checkpoint = signNote(`example.com/log\n1\n${root}\n`, [signer]);
  const text = formatTlogProof({ index: 0, proof: [], checkpoint });
  assert.equal(text, `c2sp.org/tlog-proof@v1\nindex 0\n\n${checkpoint}`);
  assert.equal(verifyTlogProof(text, { data: leaf(0) }, [signer.verifier]).index, 0);
});

void test('parse rejections', () => {
  const bad: [string, string][] = [
    [PROOF_TEXT.replace('c2sp.org/tlog-proof@v1', 'c2sp.org/tlog-proof@v2'), 'wrong header'],
    [PROOF_TEXT.replace('index 5', 'index 05'), 'leading zero'],
    [PROOF_TEXT.replace('index 5', 'index -5'), 'negative'],
    [PROOF_TEXT.replace('index 5', 'index  5'), 'two spaces'],
    [PROOF_TEXT.replace('index 5', 'index 9007199254740992'), 'index above 2^53 − 1'],
    [PROOF_TEXT.replace('index 5\n', ''), 'no index'],
    [PROOF_TEXT.replace('index 5', 'extra AA==\nextra AA==\nindex 5'), 'two extra lines'],
    [PROOF_TEXT.replace('index 5', 'index 5\nextra AA=='), 'extra after index'],
    [PROOF_TEXT.replace('index 5', 'extra AB==\nindex 5'), 'non-canonical extra'],
    [PROOF_TEXT.replace(PROOF_5[0]!, PROOF_5[0]!.slice(0, -1)), 'unpadded hash'],
    [PROOF_TEXT.replace(PROOF_5[0]!, 'AAAA'), 'short hash'],
    [PROOF_TEXT.replace('\n\nexample.com/log', '\nexample.com/log'), 'no blank line before the checkpoint'],
    [PROOF_TEXT.replace('index 5\n', 'index 5\r\n'), 'CR'],
    [PROOF_TEXT.replace('\n8\n', '\n08\n'), 'bad checkpoint'],
    [PROOF_TEXT.slice(0, -1), 'checkpoint without final newline'],
    [PROOF_TEXT.replace(/\n— .*\n— .*\n$/, '\n'), 'unsigned checkpoint'],
    [`c2sp.org/tlog-proof@v1\nindex 5\n${`${PROOF_5[0]!}\n`.repeat(MAX_TLOG_PROOF_HASHES + 1)}\n${CHECKPOINT_8}`, 'too many hashes'],
  ];
  for (const [text, why] of bad) assert.throws(() => parseTlogProof(text), { code: 'malformed_tlog_proof' }, why);
  assert.throws(() => parseTlogProof(new Uint8Array([0xc3, 0x28])), { code: 'malformed_tlog_proof' });
  assert.throws(() => formatTlogProof({ index: -1, proof: [], checkpoint: CHECKPOINT_8 }), { code: 'malformed_tlog_proof' });
  assert.throws(() => formatTlogProof({ index: 0, proof: [new Uint8Array(31)], checkpoint: CHECKPOINT_8 }), {
    code: 'malformed_tlog_proof',
  });
  assert.throws(() => formatTlogProof({ index: 0, proof: [], checkpoint: 'not a note' }), { code: 'malformed_tlog_proof' });
});
