// ML-DSA-44 through node:crypto (src/crypto/ml-dsa.ts) and key loading by OID
// (src/crypto/signing-key.ts), SPEC §5.1. Seeds and keys: ../shared/research/pq-cosign.md §1.4,
// §2.1, Appendix A/B (test/helpers/mldsa-vectors.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { ml_dsa44 } from '@noble/post-quantum/ml-dsa.js';
import { KeyError } from '../../src/crypto/errors.ts';
import {
  ML_DSA_44_PUBLIC_KEY_LENGTH,
  ML_DSA_44_SIGNATURE_LENGTH,
  generateMlDsa44,
  mlDsa44KeyFromSeed,
  mlDsa44PublicKeyBytes,
  mlDsa44Supported,
  signMlDsa44,
  verifyMlDsa44,
} from '../../src/crypto/ml-dsa.ts';
import { signingKeyFromPem, signingKeyToPem } from '../../src/crypto/signing-key.ts';
import { decodeHex } from '../../src/encoding/hex.ts';
import { parseVkey } from '../../src/note/vkey.ts';
import {
  TORCHWOOD_LOG_PKCS8_SEED_PEM,
  TORCHWOOD_LOG_SEED_HEX,
  TORCHWOOD_LOG_VKEY,
  WITNESS_PKCS8_SEED_PEM,
  WITNESS_PUBLIC_KEY_SHA256,
  WITNESS_SEED_HEX,
} from '../helpers/mldsa-vectors.ts';

const sha256hex = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

void test('this runtime has ML-DSA-44 (Node 24.21, OpenSSL 3.5)', () => {
  assert.equal(mlDsa44Supported(), true);
});

void test("torchwood's seed imports (seed form PEM and raw seed) to the key of its vkey", () => {
  const vkeyPk = parseVkey(TORCHWOOD_LOG_VKEY).publicKey;
  const fromSeed = mlDsa44PublicKeyBytes(mlDsa44KeyFromSeed(decodeHex(TORCHWOOD_LOG_SEED_HEX)));
  assert.deepEqual(fromSeed, vkeyPk);
  const loaded = signingKeyFromPem(TORCHWOOD_LOG_PKCS8_SEED_PEM);
  assert.equal(loaded.algorithm, 'ml-dsa-44');
  assert.deepEqual(loaded.publicKey, vkeyPk);
  // noble derives the same key from the seed (FIPS 204 ML-DSA.KeyGen_internal)
  assert.deepEqual(ml_dsa44.keygen(decodeHex(TORCHWOOD_LOG_SEED_HEX)).publicKey, vkeyPk);
});

void test('the witness vector seed 00..1f gives the Appendix B public key', () => {
  const pk = mlDsa44PublicKeyBytes(mlDsa44KeyFromSeed(decodeHex(WITNESS_SEED_HEX)));
  assert.equal(pk.length, ML_DSA_44_PUBLIC_KEY_LENGTH);
  assert.equal(sha256hex(pk), WITNESS_PUBLIC_KEY_SHA256);
  assert.deepEqual(signingKeyFromPem(WITNESS_PKCS8_SEED_PEM).publicKey, pk);
});

void test('sign/verify round trip, checked by noble too; a flipped bit or another message fails', () => {
  const { privateKey, publicKey } = generateMlDsa44();
  const msg = new TextEncoder().encode('subtree/v1 round trip');
  const sig = signMlDsa44(privateKey, msg);
  assert.equal(sig.length, ML_DSA_44_SIGNATURE_LENGTH);
  assert.equal(verifyMlDsa44(publicKey, msg, sig), true);
  assert.equal(ml_dsa44.verify(sig, msg, publicKey), true);
  const bad = Uint8Array.from(sig);
  bad[100]! ^= 1;
  assert.equal(verifyMlDsa44(publicKey, msg, bad), false);
  assert.equal(verifyMlDsa44(publicKey, new TextEncoder().encode('other'), sig), false);
  assert.equal(verifyMlDsa44(publicKey.subarray(1), msg, sig), false);
  assert.equal(verifyMlDsa44(publicKey, msg, sig.subarray(1)), false);
  assert.equal(verifyMlDsa44(new Uint8Array(1312), msg, sig), false);
});

void test('PKCS#8: the both form (2626 bytes, as node exports it) and the seed form load; expandedKey-only is key_type_unsupported', () => {
  const { privateKey, publicKey } = generateMlDsa44();
  const der = privateKey.export({ format: 'der', type: 'pkcs8' });
  assert.equal(der.length, 2626);
  const pem = signingKeyToPem({ algorithm: 'ml-dsa-44', privateKey, publicKey });
  assert.deepEqual(signingKeyFromPem(pem).publicKey, publicKey);
  // expandedKey-only: PrivateKeyInfo { 0, id-ml-dsa-44, OCTET STRING { OCTET STRING expandedKey(2560) } }
  const expanded = der.subarray(der.length - 2560);
  const inner = Buffer.concat([Buffer.from('04820a00', 'hex'), expanded]);
  const body = Buffer.concat([
    Buffer.from('020100300b0609608648016503040311', 'hex'),
    Buffer.from([0x04, 0x82, inner.length >> 8, inner.length & 255]),
    inner,
  ]);
  const full = Buffer.concat([Buffer.from([0x30, 0x82, body.length >> 8, body.length & 255]), body]);
  const expandedPem = createPrivateKey({ key: full, format: 'der', type: 'pkcs8' }).export({ format: 'pem', type: 'pkcs8' }).toString();
  assert.throws(
    () => signingKeyFromPem(expandedPem),
    (e: unknown) => e instanceof KeyError && e.code === 'key_type_unsupported',
  );
});

void test('key type from the OID: Ed25519 loads, P-256 and X25519 are key_type_unsupported, garbage invalid_private_key', () => {
  const ed = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const k = signingKeyFromPem(ed);
  assert.equal(k.algorithm, 'ed25519');
  assert.equal(k.publicKey.length, 32);
  const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  assert.throws(
    () => signingKeyFromPem(p256),
    (e: unknown) => e instanceof KeyError && e.code === 'key_type_unsupported',
  );
  const x25519 = generateKeyPairSync('x25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  assert.throws(
    () => signingKeyFromPem(x25519),
    (e: unknown) => e instanceof KeyError && e.code === 'key_type_unsupported',
  );
  assert.throws(
    () => signingKeyFromPem('not a key'),
    (e: unknown) => e instanceof KeyError && e.code === 'invalid_private_key',
  );
});
