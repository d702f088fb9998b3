// NodeKeys (src/keys/node-keys.ts): every key of the node read through loadKey, and "one key, one
// purpose" (SPEC §1) checked in one place on PUBLIC keys, one code per condition. Before NodeKeys the
// checks lived in four places (the node, the bastion backends, the cosign role, the cosign service)
// with four codes; cosign_key_reused and cosign_key_duplicate had no test at all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { NodeKeyError } from '../../src/keys/errors.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { loadKey, NodeKeys, type NodeKeysConfig } from '../../src/keys/node-keys.ts';
import { WITNESS_PKCS8_SEED_PEM } from '../helpers/mldsa-vectors.ts';
import { fill } from '../helpers/anchors.ts';
import { tempDir } from '../helpers/tmp.ts';

const quiet = { warn: () => undefined };
const tmp = tempDir('aw-node-keys-');
test.after(() => {
  tmp.cleanup();
});

let n = 0;
/** A new key file (its own path) holding the Ed25519 key of `seed`. */
function edFile(seed: number): string {
  const path = join(tmp.dir, `k${n++}.pem`);
  writeNewKeyFile(path, ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(seed))));
  return path;
}
function mlDsaFile(): string {
  const path = join(tmp.dir, `k${n++}.pem`);
  writeNewKeyFile(path, WITNESS_PKCS8_SEED_PEM);
  return path;
}

const base = (over: Partial<NodeKeysConfig>): NodeKeysConfig => ({
  dataDir: tmp.dir,
  name: 'witness.example/w',
  dev: false,
  roles: ['anchor', 'cosign'],
  keyFile: edFile(1),
  cosignKeyFiles: [edFile(2)],
  ...over,
});

const refusedWith = (code: string) => (e: unknown) => e instanceof NodeKeyError && e.code === code;

void test('the keys of a valid configuration load, each for its purpose', async () => {
  const keys = await NodeKeys.load(
    base({ cosignKeyFiles: [edFile(2), mlDsaFile()], bastions: ['b.example:443'], bastionKeyFile: edFile(3) }),
    quiet,
  );
  assert.deepEqual(keys.witness.publicKey, ed25519PublicKeyBytes(ed25519KeyFromSeed(fill(1))));
  assert.deepEqual(
    keys.cosign.map((k) => k.algorithm),
    ['ed25519', 'ml-dsa-44'],
  );
  assert.match(keys.bastion?.keyHash ?? '', /^[0-9a-f]{64}$/);
  // without --bastion the bastion key is not read; without the cosign role no cosign key is
  assert.equal((await NodeKeys.load(base({ bastionKeyFile: join(tmp.dir, 'absent.pem') }), quiet)).bastion, undefined);
  assert.deepEqual((await NodeKeys.load(base({ roles: ['anchor'], cosignKeyFiles: undefined }), quiet)).cosign, []);
});

void test('cosign_key_reused: a cosign key that is the witness key, from another file (public keys compared, not references)', async () => {
  await assert.rejects(
    () => NodeKeys.load(base({ keyFile: edFile(5), cosignKeyFiles: [edFile(2), edFile(5)] }), quiet),
    refusedWith('cosign_key_reused'),
  );
});

void test('cosign_key_duplicate: two --cosign-key files holding one key', async () => {
  await assert.rejects(
    () => NodeKeys.load(base({ cosignKeyFiles: [edFile(6), mlDsaFile(), mlDsaFile()] }), quiet),
    (e: unknown) => refusedWith('cosign_key_duplicate')(e) && /--cosign-key 3 .* --cosign-key 2/.test((e as Error).message),
  );
  const same = edFile(7);
  await assert.rejects(() => NodeKeys.load(base({ cosignKeyFiles: [same, same] }), quiet), refusedWith('cosign_key_duplicate'));
});

void test('bastion_key_reused: the bastion key is the witness key or a cosign key', async () => {
  const withBastion = (file: string) =>
    base({ keyFile: edFile(8), cosignKeyFiles: [edFile(9)], bastions: ['b.example:443'], bastionKeyFile: file });
  await assert.rejects(() => NodeKeys.load(withBastion(edFile(8)), quiet), refusedWith('bastion_key_reused'));
  await assert.rejects(() => NodeKeys.load(withBastion(edFile(9)), quiet), refusedWith('bastion_key_reused'));
});

void test('key_required: a missing key outside --dev, and --bastion without --bastion-key', async () => {
  await assert.rejects(() => NodeKeys.load(base({ keyFile: undefined }), quiet), refusedWith('key_required'));
  await assert.rejects(() => NodeKeys.load(base({ cosignKeyFiles: [] }), quiet), refusedWith('key_required'));
  await assert.rejects(() => NodeKeys.load(base({ bastions: ['b.example:443'] }), quiet), refusedWith('key_required'));
});

void test('--dev creates the missing witness and cosign keys once in the data dir, distinct, and keeps them', async () => {
  const dev = tempDir('aw-node-keys-dev-');
  try {
    const config = { dataDir: dev.dir, name: 'witness.example/w', dev: true, roles: ['anchor', 'cosign'] };
    const first = await NodeKeys.load(config, quiet);
    assert.ok(existsSync(join(dev.dir, 'witness-key.pem')) && existsSync(join(dev.dir, 'cosign-key.pem')));
    const again = await NodeKeys.load(config, quiet);
    assert.deepEqual(again.witness.publicKey, first.witness.publicKey);
    assert.deepEqual(again.cosign[0]?.publicKey, first.cosign[0]?.publicKey);
    assert.notDeepEqual(first.witness.publicKey, first.cosign[0]?.publicKey);
  } finally {
    dev.cleanup();
  }
});

void test('loadKey: the purpose decides the algorithms (an ML-DSA-44 key is a cosign key only) and the flag in the message', () => {
  const ml = mlDsaFile();
  assert.equal(loadKey(ml, 'cosign').algorithm, 'ml-dsa-44');
  assert.throws(
    () => loadKey(ml, 'witness'),
    (e: unknown) => e instanceof Error && e.message.startsWith(`--key ${ml}: `),
  );
  assert.throws(
    () => loadKey(ml, 'bastion'),
    (e: unknown) => e instanceof Error && e.message.startsWith(`--bastion-key ${ml}: `),
  );
  const loose = join(tmp.dir, 'loose.pem');
  writeFileSync(loose, ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(10))), { mode: 0o644 });
  assert.throws(
    () => loadKey(loose, 'cosign'),
    (e: unknown) => (e as { code?: string }).code === 'key_permissions',
  );
});
