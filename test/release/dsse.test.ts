// DSSE envelopes (src/release/dsse.ts): PAE known answer and the reference signature from
// secure-systems-lab/dsse protocol.md v1.0.0 "Test Vectors", Ed25519 signing/verification, and the
// decoding rules (either base64 alphabet, canonical only, unknown members refused).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { sha256Hex } from '../../src/crypto/sha256.ts';
import {
  decodeDsseBase64,
  ed25519KeyId,
  pae,
  parseEnvelope,
  signEnvelope,
  verifyEnvelope,
  type DsseEnvelope,
} from '../../src/release/dsse.ts';
import { BuildError } from '../../src/release/errors.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();
const seed = (b: number) => new Uint8Array(32).fill(b);
const KEY = ed25519KeyFromSeed(seed(7));
const PUB = ed25519PublicKeyBytes(KEY);
const OTHER = ed25519PublicKeyBytes(ed25519KeyFromSeed(seed(8)));

const code = (c: string) => (e: unknown) => e instanceof BuildError && e.code === c;

void test('PAE: the DSSE protocol.md test vector', () => {
  assert.equal(
    dec.decode(pae('http://example.com/HelloWorld', enc.encode('hello world'))),
    'DSSEv1 29 http://example.com/HelloWorld 11 hello world',
  );
  // lengths are byte lengths (UTF-8), and an empty body is "0 "
  assert.equal(dec.decode(pae('t/é', new Uint8Array(0))), 'DSSEv1 4 t/é 0 ');
});

void test("PAE: the protocol.md reference envelope's P-256 signature verifies over our PAE bytes", () => {
  // protocol.md: ECDSA P-256 / SHA-256, signature = raw r ‖ s; X, Y in decimal.
  const b64u = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex').toString('base64url');
  const key = createPublicKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: b64u(46950820868899156662930047687818585632848591499744589407958293238635476079160n),
      y: b64u(5640078356564379163099075877009565129882514886557779369047442380624545832820n),
    },
    format: 'jwk',
  });
  const envelope = parseEnvelope({
    payload: 'aGVsbG8gd29ybGQ=',
    payloadType: 'http://example.com/HelloWorld',
    signatures: [{ sig: 'A3JqsQGtVsJ2O2xqrI5IcnXip5GToJ3F+FnZ+O88SjtR6rDAajabZKciJTfUiHqJPcIAriEGAHTVeCUjW2JIZA==' }],
  });
  const message = pae(envelope.payloadType, envelope.payload);
  assert.equal(verify('sha256', message, { key, dsaEncoding: 'ieee-p1363' }, envelope.signatures[0]!.sig), true);
  assert.equal(
    verify(
      'sha256',
      pae(envelope.payloadType, enc.encode('hello world!')),
      { key, dsaEncoding: 'ieee-p1363' },
      envelope.signatures[0]!.sig,
    ),
    false,
  );
});

void test('sign → verify; keyid is the hex SHA-256 of the raw public key', () => {
  const env = signEnvelope('application/vnd.in-toto+json', enc.encode('{"a":1}'), KEY);
  assert.equal(env.signatures.length, 1);
  assert.equal(env.signatures[0]!.keyid, sha256Hex(PUB));
  assert.equal(ed25519KeyId(PUB), sha256Hex(PUB));
  const parsed = parseEnvelope(JSON.parse(JSON.stringify(env)));
  assert.equal(verifyEnvelope(parsed, PUB), sha256Hex(PUB));
  assert.equal(dec.decode(parsed.payload), '{"a":1}');
  // deterministic (Ed25519): the same statement and key give the same envelope
  assert.deepEqual(signEnvelope('application/vnd.in-toto+json', enc.encode('{"a":1}'), KEY), env);
});

void test('tampering: payload, payloadType, signature bit, wrong key — all rejected', () => {
  const env = signEnvelope('application/vnd.in-toto+json', enc.encode('{"a":1}'), KEY);
  const tamper = (f: (e: DsseEnvelope) => void) => {
    const copy = structuredClone(env);
    f(copy);
    return parseEnvelope(copy);
  };
  assert.throws(
    () =>
      verifyEnvelope(
        tamper((e) => (e.payload = Buffer.from('{"a":2}').toString('base64'))),
        PUB,
      ),
    code('bad_signature'),
  );
  assert.throws(
    () =>
      verifyEnvelope(
        tamper((e) => (e.payloadType = 'application/json')),
        PUB,
      ),
    code('bad_signature'),
  );
  assert.throws(
    () =>
      verifyEnvelope(
        tamper((e) => {
          const s = Buffer.from(e.signatures[0]!.sig, 'base64');
          s[5]! ^= 1;
          e.signatures[0]!.sig = s.toString('base64');
        }),
        PUB,
      ),
    code('bad_signature'),
  );
  assert.throws(() => verifyEnvelope(parseEnvelope(env), OTHER), code('bad_signature'));
  // a signature under a keyid that names another key is skipped, even if it would verify
  assert.throws(
    () =>
      verifyEnvelope(
        tamper((e) => (e.signatures[0]!.keyid = sha256Hex(OTHER))),
        PUB,
      ),
    code('bad_signature'),
  );
  // an absent or empty keyid is tried; extra foreign signatures do not hurt
  assert.equal(
    verifyEnvelope(
      tamper((e) => delete e.signatures[0]!.keyid),
      PUB,
    ),
    sha256Hex(PUB),
  );
  assert.equal(
    verifyEnvelope(
      tamper((e) => (e.signatures[0]!.keyid = '')),
      PUB,
    ),
    sha256Hex(PUB),
  );
  assert.equal(
    verifyEnvelope(
      tamper((e) => e.signatures.unshift({ keyid: 'x', sig: Buffer.alloc(64).toString('base64') })),
      PUB,
    ),
    sha256Hex(PUB),
  );
});

void test('the small-order forgery (identity key, R = identity, S = 0) is refused by the strict verifier', () => {
  const identity = new Uint8Array(32);
  identity[0] = 1;
  const forged = parseEnvelope({
    payloadType: 'application/vnd.in-toto+json',
    payload: 'e30=',
    signatures: [{ sig: Buffer.concat([Buffer.from(identity), Buffer.alloc(32)]).toString('base64') }],
  });
  assert.throws(() => verifyEnvelope(forged, identity), code('bad_signature'));
});

void test('base64: standard or URL-safe, padded or not, canonical only', () => {
  const bytes = Uint8Array.from([0xfb, 0xff, 0xbf, 0x01]);
  for (const t of ['+/+/AQ==', '+/+/AQ', '-_-_AQ==', '-_-_AQ']) assert.deepEqual(decodeDsseBase64(t, 'x'), bytes, t);
  for (const t of ['+/-_AQ==', '+/+/AQ=', '+/+/AR==', '+/+/A', ' +/+/AQ==', '+/+/AQ==\n', '+/+/AQ===']) {
    assert.throws(() => decodeDsseBase64(t, 'x'), code('malformed_envelope'), t);
  }
});

void test('envelope shape: unknown members, empty signatures, wrong signature length, non-object', () => {
  const ok = { payloadType: 't', payload: 'e30=', signatures: [{ sig: Buffer.alloc(64).toString('base64') }] };
  assert.doesNotThrow(() => parseEnvelope(ok));
  const bad: unknown[] = [
    null,
    [],
    'x',
    { ...ok, extra: 1 },
    { ...ok, signatures: [] },
    { ...ok, signatures: [{ sig: Buffer.alloc(63).toString('base64') }] },
    { ...ok, signatures: [{ sig: Buffer.alloc(64).toString('base64'), cert: 'x' }] },
    { ...ok, signatures: [{ keyid: 1, sig: Buffer.alloc(64).toString('base64') }] },
    { ...ok, payloadType: '' },
    { ...ok, payload: 5 },
    { payloadType: 't', signatures: ok.signatures },
  ];
  for (const b of bad) assert.throws(() => parseEnvelope(b), code('malformed_envelope'), JSON.stringify(b));
});
