// The bastion backend's key hash and client certificate (SPEC §5.6), and the DER writer under it.
// Vector: research/pq-cosign.md §2.6, from torchwood cmd/litewitness/testdata/logbastion.txt.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import {
  BASTION_CERT_BACKDATE_MS,
  BASTION_CERT_LIFETIME_MS,
  bastionClientCertificate,
  bastionKeyHash,
  certificatePem,
} from '../../src/crypto/bastion-certificate.ts';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import {
  derBoolean,
  derInteger,
  derLength,
  derNamedBits,
  derOid,
  derTlv,
  derUtcTime,
  derUtf8String,
  derBitString,
} from '../../src/encoding/der.ts';
import { DerError } from '../../src/encoding/errors.ts';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

void test('torchwood logbastion vector: seed 31ffc211… → public key 64848ad8… → key hash e933707e…', () => {
  const key = ed25519KeyFromSeed(Buffer.from('31ffc2116ecbe003acaa800ab70757bd7d53206e3febef6a6d0796d95530b34f', 'hex'));
  assert.equal(hex(ed25519PublicKeyBytes(key)), '64848ad8abed6e85981b3b3875b252b8767ebb4b02f703aca3b1e71bbd6a8e50');
  assert.equal(bastionKeyHash(key), 'e933707e0e36c30f01d94b5d81e742da373679d88eb0f85f959ccd80b83b992a');
});

void test('the client certificate: self-signed v3 Ed25519, serial 1, CN "Bastion backend", now−1h..now+24h, digitalSignature (critical), clientAuth', () => {
  const { privateKey } = generateKeyPairSync('ed25519');
  const now = Date.UTC(2026, 10, 25, 21, 0, 7, 500);
  const der = bastionClientCertificate(privateKey, now);
  const cert = new X509Certificate(der);
  assert.equal(cert.verify(createPublicKey(privateKey)), true);
  assert.equal(cert.checkPrivateKey(privateKey), true);
  assert.equal(cert.subject, 'CN=Bastion backend');
  assert.equal(cert.issuer, 'CN=Bastion backend');
  assert.equal(cert.serialNumber, '01');
  assert.equal(cert.ca, false);
  assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.2']); // Node reports the extended key usage here
  assert.equal(cert.publicKey.asymmetricKeyType, 'ed25519');
  assert.equal(hex(ed25519PublicKeyBytes(cert.publicKey)), hex(ed25519PublicKeyBytes(privateKey)));
  assert.equal(cert.validFromDate.getTime(), Math.floor((now - BASTION_CERT_BACKDATE_MS) / 1000) * 1000);
  assert.equal(cert.validToDate.getTime(), Math.floor((now + BASTION_CERT_LIFETIME_MS) / 1000) * 1000);
  const bytes = Buffer.from(der);
  // version [0] INTEGER 2, serial INTEGER 1, then the Ed25519 AlgorithmIdentifier.
  assert.ok(bytes.includes(Buffer.from('a003020102020101300506032b6570', 'hex')));
  // UTCTime 261125200007Z (now − 1 h) and 261126210007Z (now + 24 h).
  assert.ok(bytes.includes(Buffer.concat([Buffer.from('170d', 'hex'), Buffer.from('261125200007Z')])));
  assert.ok(bytes.includes(Buffer.concat([Buffer.from('170d', 'hex'), Buffer.from('261126210007Z')])));
  // keyUsage: OID 2.5.29.15, critical TRUE, OCTET STRING { BIT STRING 07 80 } = digitalSignature only.
  assert.ok(bytes.includes(Buffer.from('0603551d0f0101ff040403020780', 'hex')));
  // extKeyUsage: OID 2.5.29.37, OCTET STRING { SEQUENCE { id-kp-clientAuth } }, not critical.
  assert.ok(bytes.includes(Buffer.from('0603551d25040c300a06082b06010505070302', 'hex')));
  // A changed byte in the signed part breaks the signature.
  const broken = Buffer.from(der);
  const cn = broken.indexOf(Buffer.from('Bastion backend'));
  broken.writeUInt8(broken.readUInt8(cn) ^ 0x20, cn);
  assert.equal(new X509Certificate(broken).verify(createPublicKey(privateKey)), false);
  assert.match(
    certificatePem(der),
    /^-----BEGIN CERTIFICATE-----\n([A-Za-z0-9+/=]{64}\n)+[A-Za-z0-9+/=]{1,64}\n-----END CERTIFICATE-----\n$/,
  );
});

void test('DER writer: lengths, INTEGER, OID, UTCTime, named bits, BOOLEAN and strings (X.690 examples)', () => {
  assert.equal(hex(derLength(0)), '00');
  assert.equal(hex(derLength(127)), '7f');
  assert.equal(hex(derLength(128)), '8180');
  assert.equal(hex(derLength(256)), '820100');
  assert.equal(hex(derLength(65536)), '83010000');
  assert.equal(hex(derInteger(0)), '020100');
  assert.equal(hex(derInteger(127)), '02017f');
  assert.equal(hex(derInteger(128)), '02020080');
  assert.equal(hex(derInteger(256)), '02020100');
  assert.equal(hex(derInteger(2n ** 64n)), '0209010000000000000000');
  assert.equal(hex(derOid('1.3.101.112')), '06032b6570');
  assert.equal(hex(derOid('1.2.840.113549.1.1.11')), '06092a864886f70d01010b');
  assert.equal(hex(derOid('2.999.3')), '0603883703');
  assert.equal(hex(derUtcTime(Date.UTC(1950, 0, 1))), '170d3530303130313030303030305a');
  assert.equal(hex(derUtcTime(Date.UTC(2049, 11, 31, 23, 59, 59))), '170d3439313233313233353935395a');
  assert.equal(hex(derNamedBits([0])), '03020780');
  assert.equal(hex(derNamedBits([0, 5])), '03020284');
  assert.equal(hex(derNamedBits([8])), '0303070080');
  assert.equal(hex(derNamedBits([])), '030100');
  assert.equal(hex(derBitString(Uint8Array.of(1, 2))), '0303000102');
  assert.equal(hex(derBoolean(true)), '0101ff');
  assert.equal(hex(derBoolean(false)), '010100');
  assert.equal(hex(derUtf8String('é')), '0c02c3a9');
  assert.equal(hex(derTlv(0x04, new Uint8Array(200))).slice(0, 6), '0481c8');
});

void test('DER writer refuses what it cannot encode (der_out_of_range)', () => {
  const refused = (f: () => unknown): void => {
    assert.throws(f, (e: unknown) => {
      assert.ok(e instanceof DerError);
      assert.equal(e.code, 'der_out_of_range');
      return true;
    });
  };
  refused(() => derInteger(-1));
  refused(() => derInteger(1.5));
  refused(() => derUtcTime(Date.UTC(2050, 0, 1)));
  refused(() => derUtcTime(Date.UTC(1949, 11, 31, 23, 59, 59)));
  refused(() => derUtcTime(Number.NaN));
  refused(() => derOid('1.40'));
  refused(() => derOid('3.1'));
  refused(() => derOid('1.2.03'));
  refused(() => derTlv(0x1f, new Uint8Array(0)));
  refused(() => derLength(-1));
  refused(() => derNamedBits([256]));
});
