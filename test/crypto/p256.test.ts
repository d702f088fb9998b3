// ECDSA P-256/SHA-256 with compressed keys and r ‖ s signatures (src/crypto/p256.ts), SPEC §3.1:
// 33-byte compressed SEC1 key, 64-byte r ‖ s, low S only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, sign as rawSign, verify as rawVerify } from 'node:crypto';
import {
  checkP256PublicKey,
  generateP256,
  isValidP256PublicKey,
  p256PrivateKeyFromPem,
  p256PrivateKeyToPem,
  p256PublicKeyBytes,
  signP256,
  verifyP256,
  verifyP256AllowingHighS,
} from '../../src/crypto/p256.ts';

const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
const B = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn;

const toBig = (b: Uint8Array): bigint => BigInt(`0x${Buffer.from(b).toString('hex') || '0'}`);
const to32 = (v: bigint): Uint8Array => Uint8Array.from(Buffer.from(v.toString(16).padStart(64, '0'), 'hex'));
const modPow = (b: bigint, e: bigint, m: bigint): bigint => {
  let r = 1n;
  let x = b % m;
  for (let k = e; k > 0n; k >>= 1n) {
    if (k & 1n) r = (r * x) % m;
    x = (x * x) % m;
  }
  return r;
};
/** Whether x³ − 3x + b is a square mod p (i.e. some point has this x). */
const hasPoint = (x: bigint): boolean => {
  const rhs = (((x * x * x - 3n * x + B) % P) + P) % P;
  return rhs === 0n || modPow(rhs, (P - 1n) / 2n, P) === 1n;
};
const compressed = (x: bigint, odd: boolean): Uint8Array => {
  const out = new Uint8Array(33);
  out[0] = odd ? 0x03 : 0x02;
  out.set(to32(x), 1);
  return out;
};

void test('sign/verify round trip; signatures are always low S', () => {
  for (let i = 0; i < 30; i++) {
    const { privateKey, publicKey } = generateP256();
    assert.equal(publicKey.length, 33);
    checkP256PublicKey(publicKey);
    const msg = new TextEncoder().encode(`party message ${i}`);
    const sig = signP256(privateKey, msg);
    assert.equal(sig.length, 64);
    assert.ok(toBig(sig.subarray(32)) <= (N - 1n) / 2n);
    assert.equal(verifyP256(publicKey, msg, sig), true);
    assert.equal(verifyP256(publicKey, new TextEncoder().encode('other'), sig), false);
    const tampered = Uint8Array.from(sig);
    tampered[i % 64]! ^= 0x01;
    assert.equal(verifyP256(publicKey, msg, tampered), false);
  }
});

void test('compressed key bytes agree with the uncompressed JWK form', () => {
  const { privateKey, publicKey } = generateP256();
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  assert.equal(Buffer.from(publicKey.subarray(1)).toString('base64url'), jwk.x);
  const y = Buffer.from(jwk.y!, 'base64url');
  assert.equal(publicKey[0], (y[31]! & 1) === 1 ? 0x03 : 0x02);
  assert.deepEqual(p256PublicKeyBytes(createPublicKey(privateKey)), publicKey);
});

void test('high S is refused (the malleated twin of a valid signature)', () => {
  const { privateKey, publicKey } = generateP256();
  const msg = new TextEncoder().encode('m');
  const sig = signP256(privateKey, msg);
  const high = Uint8Array.from(sig);
  high.set(to32(N - toBig(sig.subarray(32))), 32);
  // OpenSSL itself accepts both (ECDSA is malleable); the strict verifier accepts only low S.
  assert.equal(rawVerify('sha256', msg, { key: createPublicKey(privateKey), dsaEncoding: 'ieee-p1363' }, high), true);
  assert.equal(verifyP256(publicKey, msg, high), false);
  assert.equal(verifyP256(publicKey, msg, sig), true);
});

void test('verifyP256AllowingHighS (KEL event signatures only, SPEC §3.5) accepts both twins and nothing else', () => {
  const { privateKey, publicKey } = generateP256();
  const msg = new TextEncoder().encode('m');
  const sig = signP256(privateKey, msg);
  const s = toBig(sig.subarray(32));
  const with32 = (v: bigint): Uint8Array => {
    const out = Uint8Array.from(sig);
    out.set(to32(v), 32);
    return out;
  };
  assert.equal(verifyP256AllowingHighS(publicKey, msg, sig), true);
  assert.equal(verifyP256AllowingHighS(publicKey, msg, with32(N - s)), true);
  assert.equal(verifyP256AllowingHighS(publicKey, msg, with32(0n)), false);
  assert.equal(verifyP256AllowingHighS(publicKey, msg, with32(N + s)), false, 's ≥ n is not reduced');
  assert.equal(verifyP256AllowingHighS(publicKey, new TextEncoder().encode('n'), with32(N - s)), false);
});

void test('a raw OpenSSL signature with high S is normalised by signP256', () => {
  const { privateKey, publicKey } = generateP256();
  const msg = new TextEncoder().encode('normalise');
  let sawHigh = false;
  for (let i = 0; i < 64 && !sawHigh; i++) {
    const raw = rawSign('sha256', msg, { key: privateKey, dsaEncoding: 'ieee-p1363' });
    if (toBig(raw.subarray(32)) > (N - 1n) / 2n) {
      sawHigh = true;
      assert.equal(verifyP256(publicKey, msg, raw), false);
    }
  }
  assert.ok(sawHigh, 'expected a high-S raw signature within 64 tries');
  assert.ok(toBig(signP256(privateKey, msg).subarray(32)) <= (N - 1n) / 2n);
});

void test('r or s out of range and wrong lengths are refused', () => {
  const { privateKey, publicKey } = generateP256();
  const msg = new Uint8Array([1]);
  const sig = signP256(privateKey, msg);
  const withR = (r: bigint): Uint8Array => {
    const out = Uint8Array.from(sig);
    out.set(to32(r), 0);
    return out;
  };
  const withS = (s: bigint): Uint8Array => {
    const out = Uint8Array.from(sig);
    out.set(to32(s), 32);
    return out;
  };
  for (const bad of [withR(0n), withR(N), withR(N + 1n), withS(0n), withS(N), withS((N + 1n) / 2n)]) {
    assert.equal(verifyP256(publicKey, msg, bad), false);
  }
  assert.equal(verifyP256(publicKey, msg, sig.subarray(1)), false);
  assert.equal(verifyP256(publicKey, msg, new Uint8Array([...sig, 0])), false);
  assert.equal(verifyP256(publicKey.subarray(1), msg, sig), false);
  // A DER signature is not accepted.
  const der = rawSign('sha256', msg, privateKey);
  assert.equal(verifyP256(publicKey, msg, der), false);
  // An uncompressed key (65 bytes, 04 prefix) is not accepted.
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  const uncompressed = new Uint8Array([0x04, ...Buffer.from(jwk.x!, 'base64url'), ...Buffer.from(jwk.y!, 'base64url')]);
  assert.equal(verifyP256(uncompressed, msg, sig), false);
  assert.throws(
    () => {
      checkP256PublicKey(uncompressed);
    },
    { code: 'invalid_public_key' },
  );
});

void test('invalid points are refused with typed errors', () => {
  let x = 1n;
  while (hasPoint(x)) x++;
  for (const odd of [false, true]) {
    const key = compressed(x, odd);
    assert.throws(
      () => {
        checkP256PublicKey(key);
      },
      { code: 'not_on_curve', name: 'KeyError' },
    );
    assert.equal(isValidP256PublicKey(key), false);
    assert.equal(verifyP256(key, new Uint8Array(0), new Uint8Array(64).fill(1)), false);
  }
  // x ≥ p
  for (const big of [P, P + 1n, (1n << 256n) - 1n]) {
    assert.throws(
      () => {
        checkP256PublicKey(compressed(big, false));
      },
      { code: 'non_canonical_key' },
    );
  }
  // bad prefix
  const good = generateP256().publicKey;
  for (const prefix of [0x00, 0x01, 0x04, 0x05]) {
    const k = Uint8Array.from(good);
    k[0] = prefix;
    assert.throws(
      () => {
        checkP256PublicKey(k);
      },
      { code: 'invalid_public_key' },
    );
  }
  assert.throws(
    () => {
      checkP256PublicKey(new Uint8Array(0));
    },
    { code: 'invalid_public_key' },
  );
  assert.equal(isValidP256PublicKey(good), true);
  // A valid x gives a valid key with either parity.
  let y = 1n;
  while (!hasPoint(y)) y++;
  assert.equal(isValidP256PublicKey(compressed(y, false)), true);
  assert.equal(isValidP256PublicKey(compressed(y, true)), true);
});

void test('PKCS#8 PEM round trip; other keys are refused', () => {
  const { privateKey, publicKey } = generateP256();
  const back = p256PrivateKeyFromPem(p256PrivateKeyToPem(privateKey));
  assert.deepEqual(p256PublicKeyBytes(back), publicKey);
  const other = generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const ed = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const sec1 = privateKey.export({ format: 'pem', type: 'sec1' }).toString();
  for (const bad of [other, ed, sec1, 'junk']) assert.throws(() => p256PrivateKeyFromPem(bad), { code: 'invalid_private_key' });
  const edKey = generateKeyPairSync('ed25519').privateKey;
  assert.throws(() => signP256(edKey, new Uint8Array(0)), { code: 'invalid_private_key' });
});
