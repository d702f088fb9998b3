// SPEC §1.1 "Bridge keys" without a token (the SoftHSM2 end-to-end run is pkcs11-bridge.test.ts):
//   - keys.json entries with "ref":"pkcs11:…" and "jwk" parse and round-trip; a ref without jwk, a
//     jwk with other members, and a ref that is not pkcs11: are key_dir_invalid;
//   - an entry whose kid is not the thumbprint of its jwk is key_mismatch at load;
//   - a token key as the active key of a read-only keyring (no signers: the CLI) is refused, as a
//     next key it is published from its jwk only;
//   - signToken through a Signer (what a token key signs with) makes a JWT that jose verifies with
//     the published JWK, with the same header and claims a PEM key would produce.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { BridgeConfigError } from '../../src/bridge/errors.ts';
import { KeyDir } from '../../src/bridge/key-dir.ts';
import { SigningKeyring } from '../../src/bridge/signing-keyring.ts';
import { encodeKeysJson, parseKeysJson } from '../../src/bridge/keyring.ts';
import { jwkOfP256, jwkThumbprint } from '../../src/bridge/keys-external.ts';
import { signToken, type SigningKey } from '../../src/bridge/signing.ts';
import type { TokenClaims } from '../../src/bridge/decide.ts';
import { generateP256 } from '../../src/crypto/p256.ts';
import { FileSigner } from '../../src/keys/file-signer.ts';
import { tempDir } from '../helpers/tmp.ts';

const REF = 'pkcs11:token=tb;object=bridge;type=private?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:/etc/tb/pin';
const configError = (code: string) => (e: unknown) => e instanceof BridgeConfigError && e.code === code;

async function tokenEntry(): Promise<{ kid: string; jwk: ReturnType<typeof jwkOfP256>; signer: FileSigner }> {
  const signer = new FileSigner(generateP256().privateKey, 'bridge:test', 'test');
  const jwk = jwkOfP256(signer.publicKey);
  return { kid: await jwkThumbprint(jwk), jwk, signer };
}

void test('keys.json: ref + jwk entries parse and round-trip; malformed ones are key_dir_invalid', async () => {
  const { kid, jwk } = await tokenEntry();
  const doc = { keys: [{ kid, state: 'active', not_before: '2026-01-01T00:00:00Z', retire_after: null, ref: REF, jwk }] };
  const entries = parseKeysJson(doc);
  assert.equal(entries[0]!.ref, REF);
  assert.deepEqual(entries[0]!.jwk, jwk);
  assert.deepEqual(encodeKeysJson(entries), doc);
  const bad = (over: Record<string, unknown>) => ({ keys: [{ ...doc.keys[0], ...over }] });
  assert.throws(() => parseKeysJson(bad({ jwk: undefined })), configError('key_dir_invalid'));
  assert.throws(() => parseKeysJson(bad({ jwk: { ...jwk, d: jwk.x } })), configError('key_dir_invalid'));
  assert.throws(() => parseKeysJson(bad({ jwk: { ...jwk, crv: 'P-384' } })), configError('key_dir_invalid'));
  assert.throws(() => parseKeysJson(bad({ ref: 'ssh-agent:SHA256:' + 'A'.repeat(43) })), configError('key_dir_invalid'));
  assert.throws(() => parseKeysJson(bad({ ref: undefined })), configError('key_dir_invalid'));
});

void test('a token entry whose kid is not its jwk thumbprint is key_mismatch; without signers it cannot be the active key', async () => {
  const { dir, cleanup } = tempDir('tb-keyref-');
  try {
    const a = await tokenEntry();
    const b = await tokenEntry();
    const keyDir = join(dir, 'keys');
    mkdirSync(keyDir);
    const write = (keys: unknown[]) => {
      writeFileSync(join(keyDir, 'keys.json'), JSON.stringify({ keys }));
    };
    const entry = (e: { kid: string; jwk: unknown }, state: string, notBefore = '2026-01-01T00:00:00Z') => ({
      kid: e.kid,
      state,
      not_before: notBefore,
      retire_after: null,
      ref: REF,
      jwk: e.jwk,
    });
    write([entry({ kid: a.kid, jwk: b.jwk }, 'active')]);
    await assert.rejects(new KeyDir(keyDir).loadEntry(new KeyDir(keyDir).readEntries()[0]!, undefined), configError('key_mismatch'));
    write([entry(a, 'active')]);
    await assert.rejects(
      SigningKeyring.open(keyDir, { alg: 'ES256', maxTtl: 900, create: false }, 1_767_225_600),
      configError('invalid_option'),
    );
    // As a next key (not signing), it is published from its jwk; a PEM key is active.
    const pemDir = join(dir, 'pem');
    const ring0 = await SigningKeyring.open(pemDir, { alg: 'ES256', maxTtl: 900, create: true }, 1_767_225_600);
    const pemEntry = encodeKeysJson(ring0.entries).keys[0]!;
    writeFileSync(join(pemDir, 'keys.json'), JSON.stringify({ keys: [pemEntry, entry(a, 'next', '2027-01-01T00:00:00Z')] }));
    const ring = await SigningKeyring.open(pemDir, { alg: 'ES256', maxTtl: 900, create: false }, 1_767_225_600);
    assert.deepEqual(
      ring.jwks().keys.map((k) => k.kid),
      [pemEntry.kid, a.kid],
    );
    assert.deepEqual(ring.jwks().keys[1], { kty: 'EC', alg: 'ES256', use: 'sig', kid: a.kid, crv: 'P-256', x: a.jwk.x, y: a.jwk.y });
    assert.deepEqual(ring.signers(), []);
  } finally {
    cleanup();
  }
});

void test('signToken through a Signer: jose verifies it with the published JWK; same header as a PEM key', async () => {
  const { kid, jwk, signer } = await tokenEntry();
  const key: SigningKey = {
    kid,
    alg: 'ES256',
    privateKey: signer,
    jwk: { kty: 'EC', alg: 'ES256', use: 'sig', kid, crv: 'P-256', x: jwk.x, y: jwk.y },
  };
  const claims = {
    iss: 'https://bridge.example',
    sub: 'did:keri:EAbc',
    aud: 'sts.amazonaws.com',
    iat: 1,
    exp: 2,
    jti: 'j',
  } as unknown as TokenClaims;
  const jwt = await signToken(key, claims);
  assert.deepEqual(decodeProtectedHeader(jwt), { alg: 'ES256', kid, typ: 'JWT' });
  const { payload } = await jwtVerify(jwt, createLocalJWKSet({ keys: [key.jwk] }), { currentDate: new Date(1500) });
  assert.deepEqual(payload, claims);
  await assert.rejects(signToken({ ...key, privateKey: null }, claims), /does not sign in this process/);
});
