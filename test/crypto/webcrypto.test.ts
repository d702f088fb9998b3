// The WebCrypto verifiers (src/crypto/webcrypto.ts, used by the verifier SDK in browsers) against
// the server's node:crypto ones (src/crypto/ed25519.ts, p256.ts): the strictness vectors of
// test/crypto/ed25519.test.ts and p256.test.ts — RFC 8032 §7.1 vectors 1 and 2, the identity-key
// forgery, S + L / S = L / S = 2^256 − 1, the 8 small-order encodings as key and as R, non-canonical
// encodings (x = 0 with the sign bit, y ≥ p), points off the curve, wrong lengths; P-256 high S,
// r or s out of range, off-curve x, x ≥ p, bad prefix, DER and uncompressed forms — and random
// valid and tampered signatures: both paths give the same answer, and the expected one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateEd25519, signEd25519, verifyEd25519 as nodeEd25519, ED25519_SMALL_ORDER_ENCODINGS } from '../../src/crypto/ed25519.ts';
import { decompressP256 } from '../../src/crypto/p256-strict.ts';
import { generateP256, signP256, verifyP256 as nodeP256 } from '../../src/crypto/p256.ts';
import { sha256 as nodeSha256 } from '../../src/crypto/sha256.ts';
import { sha256 as webSha256, verifyEd25519 as webEd25519, verifyP256 as webP256 } from '../../src/crypto/webcrypto.ts';

const hex = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, 'hex'));
const p = (1n << 255n) - 19n;
const L = (1n << 252n) + 27742317777372353535851937790883648493n;
const bigToLe = (v: bigint): Uint8Array => Uint8Array.from({ length: 32 }, (_, i) => Number((v >> BigInt(8 * i)) & 0xffn));
const leToBig = (b: Uint8Array): bigint => b.reduceRight((acc, x) => (acc << 8n) | BigInt(x), 0n);
const RFC = [
  {
    pk: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    msg: '',
    sig: 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
  },
  {
    pk: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
    msg: '72',
    sig: '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
  },
];

async function same(
  kind: 'ed25519' | 'p256',
  pk: Uint8Array,
  msg: Uint8Array,
  sig: Uint8Array,
  expected: boolean,
  what: string,
): Promise<void> {
  const node = kind === 'ed25519' ? nodeEd25519(pk, msg, sig) : nodeP256(pk, msg, sig);
  const web = await (kind === 'ed25519' ? webEd25519(pk, msg, sig) : webP256(pk, msg, sig));
  assert.equal(node, expected, `node:crypto, ${what}`);
  assert.equal(web, expected, `WebCrypto, ${what}`);
}

void test('Ed25519: RFC 8032 vectors verify on both paths; the strictness vectors are refused on both', async () => {
  for (const v of RFC) {
    await same('ed25519', hex(v.pk), hex(v.msg), hex(v.sig), true, 'RFC 8032');
    await same('ed25519', hex(v.pk), hex('00'), hex(v.sig), false, 'RFC 8032, other message');
  }
  const [v] = RFC;
  const msg = new TextEncoder().encode('any message');
  await same('ed25519', hex(`01${'00'.repeat(31)}`), msg, hex(`01${'00'.repeat(63)}`), false, 'identity-key forgery');
  const sig = hex(v!.sig);
  const s = leToBig(sig.subarray(32));
  for (const [label, S] of [
    ['S + L', s + L],
    ['S = L', L],
    ['S = 2^256 − 1', (1n << 256n) - 1n],
  ] as const) {
    const m = Uint8Array.from(sig);
    m.set(S < 1n << 256n ? Uint8Array.from({ length: 32 }, (_, i) => Number((S >> BigInt(8 * i)) & 0xffn)) : new Uint8Array(32), 32);
    await same('ed25519', hex(v!.pk), hex(v!.msg), m, false, label);
  }
  const good = generateEd25519();
  const goodSig = signEd25519(good.privateKey, msg);
  for (const so of ED25519_SMALL_ORDER_ENCODINGS) {
    await same('ed25519', so, msg, hex(`01${'00'.repeat(63)}`), false, 'small-order key');
    const badR = Uint8Array.from(goodSig);
    badR.set(so, 0);
    await same('ed25519', good.publicKey, msg, badR, false, 'small-order R');
  }
  const nonCanonical = [hex(`01${'00'.repeat(30)}80`), hex(`ec${'ff'.repeat(31)}`), bigToLe(p + 2n + (1n << 255n))];
  for (let k = 0n; k < 19n; k++) nonCanonical.push(bigToLe(p + k));
  for (const enc of nonCanonical) {
    await same('ed25519', enc, hex(v!.msg), hex(v!.sig), false, 'non-canonical key');
    const r = hex(v!.sig);
    r.set(enc, 0);
    await same('ed25519', hex(v!.pk), hex(v!.msg), r, false, 'non-canonical R');
  }
  await same('ed25519', bigToLe(2n), hex(v!.msg), hex(v!.sig), false, 'y = 2 (not on the curve)');
  await same('ed25519', hex(v!.pk).subarray(1), hex(v!.msg), hex(v!.sig), false, 'short key');
  await same('ed25519', hex(v!.pk), hex(v!.msg), hex(v!.sig).subarray(1), false, 'short signature');
  await same('ed25519', hex(v!.pk), hex(v!.msg), new Uint8Array(65), false, 'long signature');
});

void test('Ed25519: random signatures verify on both paths, every flipped bit is refused on both', async () => {
  for (let i = 0; i < 8; i++) {
    const { privateKey, publicKey } = generateEd25519();
    const msg = Uint8Array.from({ length: i * 7 }, (_, j) => (j * 31 + i) & 0xff);
    const sig = signEd25519(privateKey, msg);
    await same('ed25519', publicKey, msg, sig, true, 'random');
    for (const bit of [0, 9, 255, 256, 300, 511]) {
      const t = Uint8Array.from(sig);
      t[bit >> 3]! ^= 1 << (bit & 7);
      await same('ed25519', publicKey, msg, t, false, `bit ${bit}`);
    }
  }
});

const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
const to32 = (v: bigint): Uint8Array => Uint8Array.from(Buffer.from(v.toString(16).padStart(64, '0'), 'hex'));

void test('P-256: round trips and the strictness vectors give the same answers on both paths', async () => {
  const msg = new TextEncoder().encode('p256');
  for (let i = 0; i < 12; i++) {
    const { privateKey, publicKey } = generateP256();
    const sig = signP256(privateKey, msg);
    await same('p256', publicKey, msg, sig, true, 'random');
    const tampered = Uint8Array.from(sig);
    tampered[40]! ^= 1;
    await same('p256', publicKey, msg, tampered, false, 'tampered');
    const s = BigInt(`0x${Buffer.from(sig.subarray(32)).toString('hex')}`);
    const high = Uint8Array.from(sig);
    high.set(to32(N - s), 32);
    await same('p256', publicKey, msg, high, false, 'high S');
    if (i === 0) {
      const withR = (r: bigint) => Uint8Array.from([...to32(r), ...sig.subarray(32)]);
      const withS = (v: bigint) => Uint8Array.from([...sig.subarray(0, 32), ...to32(v)]);
      for (const bad of [withR(0n), withR(N), withR(N + 1n), withS(0n), withS(N), withS((N + 1n) / 2n)])
        await same('p256', publicKey, msg, bad, false, 'r or s out of range');
      await same('p256', publicKey, msg, sig.subarray(1), false, 'short signature');
      await same('p256', publicKey.subarray(1), msg, sig, false, 'short key');
      const uncompressed = decompressP256(publicKey)!;
      await same('p256', uncompressed, msg, sig, false, 'uncompressed key');
      for (const big of [P, P + 1n, (1n << 256n) - 1n]) await same('p256', Uint8Array.from([0x02, ...to32(big)]), msg, sig, false, 'x ≥ p');
      await same('p256', Uint8Array.from([0x04, ...publicKey.subarray(1)]), msg, sig, false, 'bad prefix');
    }
  }
  // x with no curve point: both refuse, and decompression says so.
  let x = 1n;
  const B = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn;
  const isSquare = (v: bigint): boolean => {
    let r = 1n;
    let b = v % P;
    let e = (P - 1n) / 2n;
    while (e > 0n) {
      if (e & 1n) r = (r * b) % P;
      b = (b * b) % P;
      e >>= 1n;
    }
    return r === 1n || v % P === 0n;
  };
  while (isSquare((((x * x * x - 3n * x + B) % P) + P) % P)) x++;
  const off = Uint8Array.from([0x02, ...to32(x)]);
  assert.equal(decompressP256(off), null);
  await same('p256', off, msg, new Uint8Array(64).fill(1), false, 'x not on the curve');
});

void test('P-256 decompression agrees with node:crypto (JWK y) for both parities', async () => {
  const { createPublicKey } = await import('node:crypto');
  for (let i = 0; i < 16; i++) {
    const { privateKey, publicKey } = generateP256();
    const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
    assert.deepEqual(
      decompressP256(publicKey),
      Uint8Array.from([0x04, ...Buffer.from(jwk.x!, 'base64url'), ...Buffer.from(jwk.y!, 'base64url')]),
    );
  }
});

void test('SHA-256 agrees with node:crypto', async () => {
  for (const parts of [[], [new Uint8Array(0)], [Uint8Array.of(1, 2, 3)], [Uint8Array.of(0), new Uint8Array(1000).fill(7)]]) {
    assert.deepEqual(await webSha256(...parts), nodeSha256(...parts));
  }
});
