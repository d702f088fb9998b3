// Strict Ed25519 (src/crypto/ed25519.ts). Sources: RFC 8032 §7.1 test vectors 1 and 2; the
// identity-key forgery of ../shared/research/ts-stack.md §3; SPEC §3.1 key vectors; did:key values
// from ../shared/research/upstream-bridge-vectors.json (upstream auths fixture).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, randomBytes, verify as rawVerify } from 'node:crypto';
import {
  ED25519_SMALL_ORDER_ENCODINGS,
  checkEd25519PublicKey,
  ed25519FromDidKey,
  ed25519KeyFromSeed,
  ed25519PrivateKeyFromPem,
  ed25519PrivateKeyToPem,
  ed25519PublicKeyBytes,
  ed25519Seed,
  ed25519ToDidKey,
  generateEd25519,
  isValidEd25519PublicKey,
  signEd25519,
  verifyEd25519,
} from '../../src/crypto/ed25519.ts';
import { KeyError } from '../../src/crypto/errors.ts';
import { ProtocolError } from '../../src/errors.ts';

const hex = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, 'hex'));
const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

// ---- Independent BigInt reference arithmetic (affine twisted Edwards, for the tests only) ----
const p = (1n << 255n) - 19n;
const L = (1n << 252n) + 27742317777372353535851937790883648493n;
const mod = (a: bigint): bigint => ((a % p) + p) % p;
const pow = (b: bigint, e: bigint): bigint => {
  let r = 1n;
  let x = mod(b);
  let k = e;
  while (k > 0n) {
    if (k & 1n) r = (r * x) % p;
    x = (x * x) % p;
    k >>= 1n;
  }
  return r;
};
const inv = (a: bigint): bigint => pow(a, p - 2n);
const d = mod(-121665n * inv(121666n));
const sqrtM1 = pow(2n, (p - 1n) / 4n);
type Pt = [bigint, bigint];
const add = ([x1, y1]: Pt, [x2, y2]: Pt): Pt => {
  const t = (d * x1 * x2 * y1 * y2) % p;
  return [mod((x1 * y2 + y1 * x2) * inv(1n + t)), mod((y1 * y2 + x1 * x2) * inv(1n - t))];
};
const mul = (pt: Pt, k: bigint): Pt => {
  let r: Pt = [0n, 1n];
  let q = pt;
  for (let e = k; e > 0n; e >>= 1n) {
    if (e & 1n) r = add(r, q);
    q = add(q, q);
  }
  return r;
};
const isIdentity = ([x, y]: Pt): boolean => x === 0n && y === 1n;
const leToBig = (b: Uint8Array): bigint => {
  let v = 0n;
  for (let i = b.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i]!);
  return v;
};
const bigToLe = (v: bigint, n = 32): Uint8Array => {
  const out = new Uint8Array(n);
  let x = v;
  for (let i = 0; i < n; i++) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
};
const encode = ([x, y]: Pt): Uint8Array => bigToLe(y | ((x & 1n) << 255n));
/** RFC 8032 §5.1.3 decoding, without the canonical checks (y is reduced mod p). */
const decode = (b: Uint8Array): Pt | null => {
  const v = leToBig(b);
  const sign = v >> 255n;
  const y = mod(v & ((1n << 255n) - 1n));
  const x2 = mod((y * y - 1n) * inv(d * y * y + 1n));
  let x = pow(x2, (p + 3n) / 8n);
  if (mod(x * x - x2) !== 0n) x = (x * sqrtM1) % p;
  if (mod(x * x - x2) !== 0n) return null;
  if ((x & 1n) !== sign) x = mod(-x);
  return [x, y];
};

// RFC 8032 §7.1
const RFC1 = {
  seed: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
  pk: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
  msg: '',
  sig: 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
};
const RFC2 = {
  seed: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
  pk: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
  msg: '72',
  sig: '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
};

void test('RFC 8032 test vectors 1 (empty message) and 2 verify and sign deterministically', () => {
  for (const v of [RFC1, RFC2]) {
    const key = ed25519KeyFromSeed(hex(v.seed));
    assert.equal(toHex(ed25519PublicKeyBytes(key)), v.pk);
    assert.equal(toHex(signEd25519(key, hex(v.msg))), v.sig);
    assert.equal(verifyEd25519(hex(v.pk), hex(v.msg), hex(v.sig)), true);
    assert.equal(toHex(ed25519Seed(key)), v.seed);
    checkEd25519PublicKey(hex(v.pk));
  }
  // Wrong message, wrong key.
  assert.equal(verifyEd25519(hex(RFC1.pk), hex('00'), hex(RFC1.sig)), false);
  assert.equal(verifyEd25519(hex(RFC2.pk), hex(RFC1.msg), hex(RFC1.sig)), false);
});

void test('identity-key forgery (key 01 00…00, R = 01 00…00, S = 0) is refused', (t) => {
  const identity = hex(`01${'00'.repeat(31)}`);
  const sig = hex(`01${'00'.repeat(63)}`);
  for (const msg of [new Uint8Array(0), new TextEncoder().encode('any message at all')]) {
    assert.equal(verifyEd25519(identity, msg, sig), false);
  }
  // Document what the raw runtime does (research/ts-stack.md §3: Node 20/22 accept, Node 24 refuses).
  const keyObject = createPublicKey({
    key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), identity]),
    format: 'der',
    type: 'spki',
  });
  let raw: boolean | string;
  try {
    raw = rawVerify(null, Buffer.from('any message at all'), keyObject, sig);
  } catch (err) {
    raw = `throws: ${(err as Error).message}`;
  }
  t.diagnostic(`raw crypto.verify on Node ${process.version} (OpenSSL ${process.versions.openssl}) for the forgery: ${String(raw)}`);
  assert.throws(
    () => {
      checkEd25519PublicKey(identity);
    },
    { code: 'small_order_key' },
  );
});

void test('non-canonical S (S + L) is refused', (t) => {
  const sig = hex(RFC1.sig);
  const s = leToBig(sig.subarray(32));
  assert.ok(s < L);
  const malleated = new Uint8Array(64);
  malleated.set(sig.subarray(0, 32));
  malleated.set(bigToLe(s + L), 32);
  assert.equal(verifyEd25519(hex(RFC1.pk), hex(RFC1.msg), malleated), false);
  // S = L exactly, and S with the top bits set, are refused too.
  malleated.set(bigToLe(L), 32);
  assert.equal(verifyEd25519(hex(RFC1.pk), hex(RFC1.msg), malleated), false);
  malleated.fill(0xff, 32);
  assert.equal(verifyEd25519(hex(RFC1.pk), hex(RFC1.msg), malleated), false);
  const raw = createPublicKey({
    key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), hex(RFC1.pk)]),
    format: 'der',
    type: 'spki',
  });
  malleated.set(bigToLe(s + L), 32);
  t.diagnostic(`raw crypto.verify for S + L: ${String(rawVerify(null, hex(RFC1.msg), raw, malleated))}`);
});

void test('the 8 listed small-order encodings are exactly the torsion subgroup, canonically encoded', () => {
  // Derive the torsion subgroup independently: [L]P for points P on the curve lands in it; find
  // an element of order 8 and take its 8 multiples.
  let gen: Pt | null = null;
  for (let y = 2n; gen === null; y++) {
    const pt = decode(bigToLe(y));
    if (pt === null) continue;
    const tors = mul(pt, L);
    if (!isIdentity(mul(tors, 4n))) gen = tors;
  }
  const derived = new Set<string>();
  let q: Pt = [0n, 1n];
  for (let i = 0; i < 8; i++) {
    derived.add(toHex(encode(q)));
    q = add(q, gen);
  }
  assert.ok(isIdentity(q));
  assert.equal(derived.size, 8);
  assert.deepEqual(new Set(ED25519_SMALL_ORDER_ENCODINGS.map(toHex)), derived);
});

void test('all 8 small-order keys are refused by checkEd25519PublicKey and as key or R in verifyEd25519', () => {
  const good = generateEd25519();
  const msg = new TextEncoder().encode('m');
  const sig = signEd25519(good.privateKey, msg);
  for (const so of ED25519_SMALL_ORDER_ENCODINGS) {
    assert.throws(
      () => {
        checkEd25519PublicKey(so);
      },
      { code: 'small_order_key', name: 'KeyError' },
    );
    assert.equal(isValidEd25519PublicKey(so), false);
    // as the public key, with R = identity and S = 0 (the forgery shape) and with a real signature
    assert.equal(verifyEd25519(so, msg, hex(`01${'00'.repeat(63)}`)), false);
    assert.equal(verifyEd25519(so, msg, sig), false);
    // as R
    const badR = new Uint8Array(64);
    badR.set(so);
    badR.set(sig.subarray(32), 32);
    assert.equal(verifyEd25519(good.publicKey, msg, badR), false);
  }
});

void test('non-canonical point encodings are refused (keys and R)', () => {
  // x = 0 with the sign bit set: (0, 1) and (0, −1).
  const nonCanonical = [hex(`01${'00'.repeat(30)}80`), hex(`ec${'ff'.repeat(31)}`)];
  // y ≥ p: p + k for every k with p + k < 2^255 (y reduced would be k).
  for (let k = 0n; k < 19n; k++) nonCanonical.push(bigToLe(p + k));
  // with the sign bit also set
  nonCanonical.push(bigToLe(p + 2n + (1n << 255n)));
  for (const enc of nonCanonical) {
    assert.throws(
      () => {
        checkEd25519PublicKey(enc);
      },
      { code: 'non_canonical_key' },
      toHex(enc),
    );
    assert.equal(verifyEd25519(enc, new Uint8Array(0), hex(RFC1.sig)), false);
    const sig = hex(RFC1.sig);
    sig.set(enc, 0);
    assert.equal(verifyEd25519(hex(RFC1.pk), hex(RFC1.msg), sig), false);
  }
  // Some of those are non-canonical encodings of points whose canonical encoding is a valid key.
  const onCurve = [...Array(19).keys()].map((k) => BigInt(k)).filter((k) => k > 1n && decode(bigToLe(k)) !== null);
  assert.ok(onCurve.length > 0);
  for (const k of onCurve) {
    assert.equal(isValidEd25519PublicKey(bigToLe(k)), true);
    assert.equal(isValidEd25519PublicKey(bigToLe(p + k)), false);
  }
});

void test('points not on the curve are refused with not_on_curve', () => {
  let found = 0;
  for (let y = 2n; found < 5; y++) {
    const enc = bigToLe(y);
    if (decode(enc) !== null) continue;
    found++;
    assert.throws(
      () => {
        checkEd25519PublicKey(enc);
      },
      { code: 'not_on_curve' },
    );
    assert.equal(verifyEd25519(enc, new Uint8Array(0), hex(RFC1.sig)), false);
  }
  // A valid key: its decoding agrees with the BigInt reference.
  assert.deepEqual(encode(decode(hex(RFC1.pk))!), hex(RFC1.pk));
});

void test('wrong lengths are refused, never thrown', () => {
  assert.equal(verifyEd25519(hex(RFC1.pk).subarray(1), hex(RFC1.msg), hex(RFC1.sig)), false);
  assert.equal(verifyEd25519(hex(RFC1.pk), hex(RFC1.msg), hex(RFC1.sig).subarray(1)), false);
  assert.equal(verifyEd25519(hex(RFC1.pk), hex(RFC1.msg), new Uint8Array(65)), false);
  assert.throws(
    () => {
      checkEd25519PublicKey(new Uint8Array(31));
    },
    { code: 'invalid_public_key' },
  );
  assert.throws(() => ed25519KeyFromSeed(new Uint8Array(31)), { code: 'invalid_seed' });
});

void test('random signatures: valid ones verify, tampered ones are refused', () => {
  for (let i = 0; i < 20; i++) {
    const { privateKey, publicKey } = generateEd25519();
    checkEd25519PublicKey(publicKey);
    const msg = new Uint8Array(Buffer.from(`message ${i}`));
    const sig = signEd25519(privateKey, msg);
    assert.equal(verifyEd25519(publicKey, msg, sig), true);
    const bit = (i * 37) % 512;
    const tampered = Uint8Array.from(sig);
    tampered[bit >> 3]! ^= 1 << (bit & 7);
    assert.equal(verifyEd25519(publicKey, msg, tampered), false, `bit ${bit}`);
    const otherMsg = Uint8Array.from(msg);
    otherMsg[0]! ^= 1;
    assert.equal(verifyEd25519(publicKey, otherMsg, sig), false);
  }
});

void test('the KeyObject cache stays correct across many keys', () => {
  const keys = Array.from({ length: 50 }, () => generateEd25519());
  const msg = new Uint8Array([1, 2, 3]);
  for (let round = 0; round < 2; round++) {
    for (const [i, k] of keys.entries()) {
      const sig = signEd25519(k.privateKey, msg);
      assert.equal(verifyEd25519(k.publicKey, msg, sig), true);
      assert.equal(verifyEd25519(keys[(i + 1) % keys.length]!.publicKey, msg, sig), false);
    }
  }
});

void test('a hot key survives the eviction of 4 200 cold ones (bounded cache)', () => {
  const hot = generateEd25519();
  const msg = new Uint8Array([4, 2]);
  const sig = signEd25519(hot.privateKey, msg);
  const junkSig = hex(RFC1.sig);
  for (let i = 0; i < 4200; i++) {
    const cold = new Uint8Array(randomBytes(32));
    cold[31]! &= 0x7f;
    assert.equal(verifyEd25519(cold, msg, junkSig), false);
    if (i % 100 === 0) assert.equal(verifyEd25519(hot.publicKey, msg, sig), true);
  }
  assert.equal(verifyEd25519(hot.publicKey, msg, sig), true);
  assert.equal(verifyEd25519(hex(RFC1.pk), hex(RFC1.msg), hex(RFC1.sig)), true);
});

void test('SPEC §3.1 key vectors: party seed 09×32 and witness seed 01×32', () => {
  const party = ed25519KeyFromSeed(new Uint8Array(32).fill(0x09));
  assert.equal(toHex(ed25519PublicKeyBytes(party)), 'fd1724385aa0c75b64fb78cd602fa1d991fdebf76b13c58ed702eac835e9f618');
  const witness = ed25519KeyFromSeed(new Uint8Array(32).fill(0x01));
  assert.equal(toHex(ed25519PublicKeyBytes(witness)), '8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c');
  // Public KeyObjects work too.
  assert.equal(toHex(ed25519PublicKeyBytes(createPublicKey(witness))), '8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c');
});

void test('upstream auths fixture: identity and device signatures verify with the strict verifier', () => {
  // research/upstream-bridge-vectors.json repo_fixture_attestation
  const canonical = new TextEncoder().encode(
    '{"device_public_key":"8139770ea87d175f56a35466c34c7ecccb8d8a91b4ee37a25df60f5b8fc9b394","expires_at":null,"issuer":"did:key:z6Mkon3Necd6NkkyfoGoHxid2znGc59LU3K7mubaRcFbLfLX","note":null,"payload":null,"revoked_at":null,"rid":"test-rid","subject":"did:key:z6Mko9hTggMwjSTEaJaPUfE6tqcy2xvU6BnNq3e3o8qVBiyH","timestamp":null,"version":1}',
  );
  const root = hex('8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c');
  const device = hex('8139770ea87d175f56a35466c34c7ecccb8d8a91b4ee37a25df60f5b8fc9b394');
  const identitySig = hex(
    '1690dee2371b2bd586e696c6f891c509140ff808b82cda8c83ecfa0ea396cb3e295006ad2e6498389b5e3b1ff9d089a9ab654c30adb68d55bde04a64d7e80208',
  );
  const deviceSig = hex(
    'df199539fd0367b3684fef8b484f829c679c1d02373acf9787150032a573a3e79c878e3c4c403dfeffc25f5d4695aecb64ea67a286068ed7ca4a51f042adfc08',
  );
  assert.equal(verifyEd25519(root, canonical, identitySig), true);
  assert.equal(verifyEd25519(device, canonical, deviceSig), true);
});

void test('did:key encode/decode (upstream fixture values)', () => {
  const cases: [string, string][] = [
    ['8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c', 'did:key:z6Mkon3Necd6NkkyfoGoHxid2znGc59LU3K7mubaRcFbLfLX'],
    ['8139770ea87d175f56a35466c34c7ecccb8d8a91b4ee37a25df60f5b8fc9b394', 'did:key:z6Mko9hTggMwjSTEaJaPUfE6tqcy2xvU6BnNq3e3o8qVBiyH'],
    ['ed4928c628d1c2c6eae90338905995612959273a5c63f93636c14614ac8737d1', 'did:key:z6MkvRXNYcE7MMduynWTgeKbDaT1iijDSC8pZqXZc8rHPrf2'],
  ];
  for (const [pk, did] of cases) {
    assert.equal(ed25519ToDidKey(hex(pk)), did);
    assert.equal(toHex(ed25519FromDidKey(did)), pk);
  }
  const good = cases[0]![1];
  for (const bad of [
    'did:key:' + good.slice('did:key:'.length + 1), // no multibase z
    good.replace('z6Mk', 'Z6Mk'),
    good + '#frag',
    good.slice(0, -1), // 33 bytes
    good + '1', // 35 bytes
    'did:keri:' + good.slice(8),
    good.replace('o', '0'), // 0 is not base58
  ]) {
    assert.throws(() => ed25519FromDidKey(bad), { code: 'invalid_did_key' }, bad);
  }
  // A P-256 did:key (multicodec 0x1200) is not an Ed25519 did:key.
  assert.throws(() => ed25519FromDidKey('did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169'), { code: 'invalid_did_key' });
  // A small-order key is refused at decode.
  const smallOrderDid = ed25519ToDidKey(ED25519_SMALL_ORDER_ENCODINGS[0]!);
  assert.throws(() => ed25519FromDidKey(smallOrderDid), { code: 'small_order_key' });
});

void test('PKCS#8 PEM round trip; other key types and formats are refused', () => {
  const key = ed25519KeyFromSeed(new Uint8Array(32).fill(0x01));
  const pem = ed25519PrivateKeyToPem(key);
  assert.match(pem, /^-----BEGIN PRIVATE KEY-----\n/);
  const back = ed25519PrivateKeyFromPem(`\n${pem}\n\n`);
  assert.deepEqual(ed25519Seed(back), new Uint8Array(32).fill(0x01));

  const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const ecPkcs8 = ec.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const ecSec1 = ec.privateKey.export({ format: 'pem', type: 'sec1' }).toString();
  const encrypted = key.export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'x' }).toString();
  const spki = createPublicKey(key).export({ format: 'pem', type: 'spki' }).toString();
  for (const bad of [ecPkcs8, ecSec1, encrypted, spki, pem + pem, 'not a pem', pem.replace('MC4', 'MC5')]) {
    assert.throws(
      () => ed25519PrivateKeyFromPem(bad),
      (err: unknown) => err instanceof KeyError && err instanceof ProtocolError && err.code === 'invalid_private_key',
    );
  }
  assert.throws(() => signEd25519(ec.privateKey, new Uint8Array(0)), { code: 'invalid_private_key' });
  assert.throws(() => ed25519PublicKeyBytes(ec.publicKey), { code: 'invalid_public_key' });
});
