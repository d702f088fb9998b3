// One Cosigner per key (src/note/cosigner.ts): one constructor per key type, the lines production
// and tests sign, verified by the cosigner's own NoteVerifier; ML-DSA-44 signing and verifying on
// the workers when given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import { generateMlDsa44, mlDsa44Supported, signMlDsa44, verifyMlDsa44 } from '../../src/crypto/ml-dsa.ts';
import { formatCheckpoint } from '../../src/note/checkpoint.ts';
import { cosignerForKey, ed25519Cosigner, mlDsa44Cosigner, type CosignerWorkers } from '../../src/note/cosigner.ts';
import { SIG_TYPE_COSIGNATURE_V1, SIG_TYPE_SUBTREE_V1, parseNote, signNote, verifyNote } from '../../src/note/signed-note.ts';
import { parseSubtreeCosignatureLine, subtreeMessage } from '../../src/note/subtree-message.ts';
import { parseVkey } from '../../src/note/vkey.ts';

const TEXT = formatCheckpoint({ origin: 'example.com/log', size: 5, rootHash: new Uint8Array(32).fill(9), extensions: [] });
const sigBytes = (line: string): Uint8Array => parseNote(`${TEXT}\n${line}`).signatures[0]!.signature;

void test('Ed25519: type 0x04, the vkey is the verifier’s, the async and sync lines are the same bytes and verify', async () => {
  const c = ed25519Cosigner('w.example', ed25519KeyFromSeed(new Uint8Array(32).fill(1)));
  assert.equal(c.type, SIG_TYPE_COSIGNATURE_V1);
  assert.equal(parseVkey(c.vkey).keyId, c.keyId);
  assert.equal(c.verifier().vkey, c.vkey);
  const line = await c.cosignCheckpoint(TEXT, 1_700_000_000);
  assert.equal(line, c.noteSigner(1_700_000_000n).line(TEXT), 'Ed25519 is deterministic');
  assert.equal(signNote(TEXT, [c.noteSigner(1_700_000_000)]), `${TEXT}\n${line}`);
  const v = verifyNote(`${TEXT}\n${line}`, [c.verifier()]);
  assert.equal(v.verified[0]!.timestamp, 1_700_000_000n);
  assert.equal(await c.verifyCheckpoint(TEXT, sigBytes(line)), true);
  assert.equal(await c.verifyCheckpoint(TEXT.replace('5', '6'), sigBytes(line)), false);
  await assert.rejects(c.cosignCheckpoint(TEXT, -1), { code: 'invalid_timestamp' });
});

void test(
  'ML-DSA-44: type 0x06, checkpoint lines [0, size), subtree lines with T = 0, on the workers when given',
  { skip: !mlDsa44Supported() },
  async () => {
    const { privateKey } = generateMlDsa44();
    const calls = { sign: 0, verify: 0 };
    const workers: CosignerWorkers = {
      signMlDsa44: (key, message) => {
        calls.sign++;
        return Promise.resolve(signMlDsa44(key, message));
      },
      verifyMlDsa44: (publicKey, message, signature) => {
        calls.verify++;
        return Promise.resolve(verifyMlDsa44(publicKey, message, signature));
      },
    };
    const c = mlDsa44Cosigner('w.example', privateKey, workers);
    assert.equal(c.type, SIG_TYPE_SUBTREE_V1);
    assert.equal(c.verifier().vkey, c.vkey);
    const line = await c.cosignCheckpoint(TEXT, 1234);
    assert.equal(calls.sign, 1);
    assert.equal(verifyNote(`${TEXT}\n${line}`, [c.verifier()]).verified[0]!.timestamp, 1234n);
    assert.equal(await c.verifyCheckpoint(TEXT, sigBytes(line)), true);
    assert.equal(calls.verify, 1);
    // the sync form signs on the calling thread and verifies the same way
    const sync = c.noteSigner(7).line(TEXT);
    assert.equal(calls.sign, 1);
    assert.equal(verifyNote(`${TEXT}\n${sync}`, [c.verifier()]).verified.length, 1);
    // a subtree (sign-subtree): T = 0 by default, over the subtree/v1 message of [start, end)
    const subtree = { origin: 'example.com/log', start: 4n, end: 6n, hash: new Uint8Array(32).fill(3) };
    const sub = parseSubtreeCosignatureLine(await c.signSubtree(subtree));
    assert.equal(sub.timestamp, 0n);
    assert.equal(sub.keyId, c.keyId);
    assert.equal(verifyMlDsa44(c.publicKey, subtreeMessage({ name: 'w.example', timestamp: 0n, ...subtree }), sub.signature), true);
    // extension lines cannot be ML-DSA-44 cosigned
    await assert.rejects(c.cosignCheckpoint(`${TEXT}ext\n`, 1), { code: 'invalid_subtree_message' });
  },
);

void test('cosignerForKey: by the key’s algorithm; a public key or another algorithm is refused', { skip: !mlDsa44Supported() }, () => {
  const ed = ed25519KeyFromSeed(new Uint8Array(32).fill(2));
  assert.equal(cosignerForKey('w.example', ed).type, SIG_TYPE_COSIGNATURE_V1);
  assert.equal(cosignerForKey('w.example', generateMlDsa44().privateKey).type, SIG_TYPE_SUBTREE_V1);
  assert.throws(() => cosignerForKey('w.example', createPublicKey(ed)), /not a private key/);
  const p256: KeyObject = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  assert.throws(() => cosignerForKey('w.example', p256), /Ed25519/);
});
