// Signing keys (SPEC §7): keys.json lifecycle (rotate with pre-publication, promotion, retirement,
// prune), the key directory on disk (0600 files, refusals), JWKS contents, RFC 7638 kids, and the
// issuer URL rules. Known answers: the upstream TEST_RSA_PEM JWKS kid from
// ../shared/research/upstream-bridge-vectors.json (jwks_test_rsa_pem).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { calculateJwkThumbprint } from 'jose';
import { loadSigningKey } from '../../src/bridge/signing.ts';
import { addKey, encodeKeysJson, parseKeysJson, promote, prune, publicationOrder, retentionSeconds } from '../../src/bridge/keyring.ts';
import type { KeyEntry } from '../../src/bridge/keyring.ts';
import { KeyDir } from '../../src/bridge/key-dir.ts';
import { SigningKeyring } from '../../src/bridge/signing-keyring.ts';
import { BridgeConfigError } from '../../src/bridge/errors.ts';
import { validateIssuer } from '../../src/bridge/issuer.ts';
import { discoveryDocument } from '../../src/bridge/oidc.ts';
import { tempDir } from '../helpers/tmp.ts';
import { VECTORS } from './_helpers.ts';

const T = 1_800_000_000;
const K = (c: string) => c.repeat(43);

const configError = (code: string) => (e: unknown) => e instanceof BridgeConfigError && e.code === code;

void test('keys.json lifecycle: first key active, next key pre-published, promotion retires the old key for max TTL + 300 s, prune', () => {
  let keys: readonly KeyEntry[] = [];
  keys = addKey(keys, K('a'), T, 3600);
  assert.deepEqual(keys, [{ kid: K('a'), state: 'active', notBefore: T, retireAfter: null }]);
  keys = addKey(keys, K('b'), T + 10, 3600);
  assert.deepEqual(keys[1], { kid: K('b'), state: 'next', notBefore: T + 3610, retireAfter: null });
  assert.throws(() => addKey(keys, K('c'), T + 20, 0), configError('next_key_pending'));
  assert.equal(promote(keys, T + 3609, retentionSeconds(900)), keys); // not yet
  const promoted = promote(keys, T + 3610, retentionSeconds(900));
  assert.deepEqual(promoted, [
    { kid: K('a'), state: 'retired', notBefore: T, retireAfter: T + 3610 + 900 + 300 },
    { kid: K('b'), state: 'active', notBefore: T + 3610, retireAfter: null },
  ]);
  assert.deepEqual(
    publicationOrder(promoted).map((e) => e.state),
    ['active', 'retired'],
  );
  assert.deepEqual(prune(promoted, T + 3610 + 1199).dropped, []);
  const { kept, dropped } = prune(promoted, T + 3610 + 1200);
  assert.deepEqual(
    dropped.map((e) => e.kid),
    [K('a')],
  );
  assert.deepEqual(
    kept.map((e) => e.kid),
    [K('b')],
  );
  // round trip through the file format
  const doc = encodeKeysJson(promoted);
  assert.deepEqual(doc.keys[0], {
    kid: K('a'),
    state: 'retired',
    not_before: '2027-01-15T08:00:00Z',
    retire_after: '2027-01-15T09:20:10Z',
  });
  assert.deepEqual(parseKeysJson(JSON.parse(JSON.stringify(doc))), promoted);
  for (const bad of [
    { keys: [{ kid: 'short', state: 'active', not_before: '2027-01-15T08:00:00Z', retire_after: null }] },
    {
      keys: [
        { kid: K('a'), state: 'active', not_before: '2027-01-15T08:00:00Z', retire_after: null },
        { kid: K('b'), state: 'active', not_before: '2027-01-15T08:00:00Z', retire_after: null },
      ],
    },
    { keys: [{ kid: K('a'), state: 'retired', not_before: '2027-01-15T08:00:00Z', retire_after: null }] },
    { keys: [{ kid: K('a'), state: 'old', not_before: '2027-01-15T08:00:00Z', retire_after: null }] },
    { keys: [{ kid: K('a'), state: 'active', not_before: 12, retire_after: null }] },
    {},
  ]) {
    assert.throws(() => parseKeysJson(bad), configError('key_dir_invalid'), JSON.stringify(bad));
  }
});

void test('RFC 7638 kid of the upstream TEST_RSA_PEM JWK', async () => {
  const jwk = VECTORS.jwks_test_rsa_pem.jwks.keys[0]!;
  assert.equal(await calculateJwkThumbprint({ kty: jwk.kty, n: jwk.n, e: jwk.e }), 'OGU_Pu4ONqctx39nvIxJEtJ1NjA7As8L4IHJkx4o19o');
});

void test('signing keys: RSA below 2048 bits and curves other than P-256 are refused; only PKCS#8 PEM', async () => {
  const pem = (type: 'rsa' | 'ec', opts: object) =>
    generateKeyPairSync(type as 'rsa', opts as { modulusLength: number })
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
  await assert.rejects(
    loadSigningKey(pem('rsa', { modulusLength: 1024 })),
    (e: unknown) => configError('key_unreadable')(e) && /at least 2048/.test((e as Error).message),
  );
  await assert.rejects(loadSigningKey(pem('ec', { namedCurve: 'secp384r1' })), configError('key_unreadable'));
  const rsa2048 = await loadSigningKey(pem('rsa', { modulusLength: 2048 }));
  assert.equal(rsa2048.alg, 'RS256');
  assert.equal(await calculateJwkThumbprint({ kty: 'RSA', n: rsa2048.jwk.n!, e: rsa2048.jwk.e! }), rsa2048.kid);
  const pkcs1 = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs1' }).toString();
  await assert.rejects(loadSigningKey(pkcs1), configError('key_unreadable'));
});

void test('key directory: created on first start (0600 PEM, keys.json), reloaded unchanged, refuses unreadable or mismatched keys', async () => {
  const { dir, cleanup } = tempDir('tb-keys-');
  try {
    const keyDir = join(dir, 'keys');
    const ring = await SigningKeyring.open(keyDir, { alg: 'ES256', maxTtl: 900, create: true }, T);
    const kid = ring.active.kid;
    assert.equal(ring.active.alg, 'ES256');
    assert.equal(statSync(join(keyDir, `${kid}.pem`)).mode & 0o777, 0o600);
    assert.match(readFileSync(join(keyDir, `${kid}.pem`), 'utf8'), /^-----BEGIN PRIVATE KEY-----/);
    assert.deepEqual(JSON.parse(readFileSync(join(keyDir, 'keys.json'), 'utf8')), {
      keys: [{ kid, state: 'active', not_before: '2027-01-15T08:00:00Z', retire_after: null }],
    });
    const jwks = ring.jwks();
    assert.equal(jwks.keys.length, 1);
    const { kty, crv, x, y } = jwks.keys[0]!;
    assert.deepEqual(
      { ...jwks.keys[0], x: undefined, y: undefined },
      { kty: 'EC', alg: 'ES256', use: 'sig', kid, crv: 'P-256', x: undefined, y: undefined },
    );
    assert.equal(await calculateJwkThumbprint({ kty, crv: crv!, x: x!, y: y! }), kid);
    // a restart loads the same key, never a new one
    const again = await SigningKeyring.open(keyDir, { alg: 'RS256', maxTtl: 900, create: true }, T + 5);
    assert.equal(again.active.kid, kid);
    assert.deepEqual(new KeyDir(keyDir).pemFiles(), [`${kid}.pem`]);

    // group-readable key file: refused
    chmodSync(join(keyDir, `${kid}.pem`), 0o640);
    await assert.rejects(
      SigningKeyring.open(keyDir, { alg: 'ES256', maxTtl: 900, create: true }, T),
      (e: unknown) => configError('key_unreadable')(e) && /chmod 600/.test((e as Error).message),
    );
    chmodSync(join(keyDir, `${kid}.pem`), 0o600);
    // a key file that is not the listed kid: refused
    const other = join(dir, 'other');
    const otherRing = await SigningKeyring.open(other, { alg: 'ES256', maxTtl: 900, create: true }, T);
    renameSync(join(keyDir, `${kid}.pem`), join(dir, 'saved.pem'));
    renameSync(join(other, `${otherRing.active.kid}.pem`), join(keyDir, `${kid}.pem`));
    await assert.rejects(SigningKeyring.open(keyDir, { alg: 'ES256', maxTtl: 900, create: true }, T), configError('key_mismatch'));
    renameSync(join(dir, 'saved.pem'), join(keyDir, `${kid}.pem`));
    // a missing key file: refused, not regenerated
    renameSync(join(keyDir, `${kid}.pem`), join(dir, 'saved.pem'));
    await assert.rejects(SigningKeyring.open(keyDir, { alg: 'ES256', maxTtl: 900, create: true }, T), configError('key_unreadable'));
    assert.ok(!existsSync(join(keyDir, `${kid}.pem`)));
    // key files without keys.json: refused (states unknown)
    renameSync(join(keyDir, 'keys.json'), join(dir, 'keys.json.saved'));
    renameSync(join(dir, 'saved.pem'), join(keyDir, `${kid}.pem`));
    await assert.rejects(SigningKeyring.open(keyDir, { alg: 'ES256', maxTtl: 900, create: true }, T), configError('key_dir_invalid'));
    // a corrupt keys.json: refused
    writeFileSync(join(keyDir, 'keys.json'), '{"keys": [');
    await assert.rejects(SigningKeyring.open(keyDir, { alg: 'ES256', maxTtl: 900, create: true }, T), configError('key_dir_invalid'));
  } finally {
    cleanup();
  }
});

void test('rotation on disk: the next key is published before it signs, promoted when due, the old one stays published until pruned', async () => {
  const { dir, cleanup } = tempDir('tb-rotate-');
  try {
    const ring = await SigningKeyring.open(dir, { alg: 'ES256', maxTtl: 900, create: true }, T);
    const first = ring.active.kid;
    const next = await new KeyDir(dir).rotate(T + 100, 3600, 'ES256');
    assert.equal(next.state, 'next');
    assert.equal(next.notBefore, T + 3700);
    await assert.rejects(new KeyDir(dir).rotate(T + 101, 0, 'ES256'), configError('next_key_pending'));
    let r = await ring.refresh(T + 200);
    assert.deepEqual(r, { changed: true, promoted: null });
    assert.equal(ring.active.kid, first); // published, not signing
    assert.deepEqual(
      ring.jwks().keys.map((k) => k.kid),
      [first, next.kid],
    );
    r = await ring.refresh(T + 3700);
    assert.deepEqual(r, { changed: true, promoted: next.kid });
    assert.equal(ring.active.kid, next.kid);
    assert.deepEqual(
      ring.jwks().keys.map((k) => k.kid),
      [next.kid, first],
    );
    const retired = ring.entries.find((e) => e.kid === first)!;
    assert.deepEqual({ state: retired.state, retireAfter: retired.retireAfter }, { state: 'retired', retireAfter: T + 3700 + 1200 });
    // the promotion was written to keys.json (so `keys list` and a restart agree)
    assert.deepEqual(
      new KeyDir(dir).readEntries().map((e) => e.state),
      ['retired', 'active'],
    );
    assert.deepEqual(await new KeyDir(dir).prune(T + 4899), []);
    assert.deepEqual(
      (await new KeyDir(dir).prune(T + 4900)).map((e) => e.kid),
      [first],
    );
    assert.ok(!existsSync(join(dir, `${first}.pem`)));
    await ring.refresh(T + 4901);
    assert.deepEqual(
      ring.jwks().keys.map((k) => k.kid),
      [next.kid],
    );
    assert.deepEqual(ring.algs(), ['ES256']);
  } finally {
    cleanup();
  }
});

void test('issuer URL: https://host[/path], no port, query, fragment or trailing slash; --dev allows http and a port on loopback', () => {
  assert.deepEqual(validateIssuer('https://bridge.example', false), { issuer: 'https://bridge.example', pathPrefix: '', loopback: false });
  assert.deepEqual(validateIssuer('https://bridge.example/tenant/a', false), {
    issuer: 'https://bridge.example/tenant/a',
    pathPrefix: '/tenant/a',
    loopback: false,
  });
  const bad = [
    'http://bridge.example',
    'https://bridge.example:8443',
    'https://bridge.example/',
    'https://bridge.example/a/',
    'https://bridge.example?x=1',
    'https://bridge.example#f',
    'https://user@bridge.example',
    'https://Bridge.Example',
    'bridge.example',
    'http://127.0.0.1:8080',
  ];
  for (const b of bad) assert.throws(() => validateIssuer(b, false), configError('invalid_issuer'), b);
  assert.equal(validateIssuer('http://127.0.0.1:8080', true).loopback, true);
  assert.equal(validateIssuer('http://localhost:1234', true).issuer, 'http://localhost:1234');
  assert.equal(validateIssuer('https://[::1]:8443', true).loopback, true);
  assert.throws(() => validateIssuer('http://bridge.example', true), configError('invalid_issuer'));
  assert.throws(() => validateIssuer('https://bridge.example:8443', true), configError('invalid_issuer'));
  assert.throws(() => validateIssuer('http://127.0.0.1:8080/', true), configError('invalid_issuer'));
  const d = discoveryDocument('https://bridge.example/t', ['RS256'], false);
  assert.equal(d.jwks_uri, 'https://bridge.example/t/.well-known/jwks.json');
  assert.equal(d.token_endpoint, 'https://bridge.example/t/token');
  assert.ok(!d.claims_supported.includes('azp'));
});

void test('a key directory that cannot be written (a read-only volume shared by replicas): a due key is promoted in memory, as of its not_before, the same on every replica', async () => {
  const { dir, cleanup } = tempDir('tb-keys-ro-');
  try {
    const rw = new KeyDir(dir);
    await rw.ensureFirstKey(T, 'ES256');
    const next = await rw.rotate(T + 10, 60, 'ES256');
    const before = readFileSync(rw.jsonPath, 'utf8');
    class ReadOnlyKeyDir extends KeyDir {
      override writeEntries(): void {
        throw Object.assign(new Error('EROFS: read-only file system'), { code: 'EROFS' });
      }
    }
    const ro = new ReadOnlyKeyDir(dir);
    const a = await ro.promote(T + 200, 900);
    const b = await ro.promote(T + 260, 900); // another replica, or a later refresh
    assert.deepEqual(a, b);
    assert.equal(a.find((e) => e.state === 'active')?.kid, next.kid);
    assert.equal(a.find((e) => e.state === 'retired')?.retireAfter, next.notBefore + retentionSeconds(900));
    assert.equal(readFileSync(rw.jsonPath, 'utf8'), before); // nothing written
    // other failures still surface
    class Broken extends KeyDir {
      override writeEntries(): void {
        throw Object.assign(new Error('EIO'), { code: 'EIO' });
      }
    }
    await assert.rejects(new Broken(dir).promote(T + 200, 900), /EIO/);
  } finally {
    cleanup();
  }
});
