/**
 * The client certificate a C2SP https-bastion backend presents (https-bastion v1.0.0-rc.1,
 * Appendix B; SPEC §5.6): a self-signed X.509 v3 Ed25519 certificate, built fresh at each
 * connect since Node cannot create X.509 itself.
 *
 *   serial 1, issuer = subject = CN "Bastion backend", validity UTCTime now − 1 h .. now + 24 h,
 *   SubjectPublicKeyInfo Ed25519 (1.3.101.112), extensions keyUsage digitalSignature (critical)
 *   and extKeyUsage clientAuth, signed with the same key (Ed25519, RFC 8410).
 *
 * A bastion identifies the backend by the SHA-256 of the 32-byte public key (the "key hash",
 * `bastionKeyHash`), which is also the path prefix clients use. Pure: the time is a parameter.
 */
import { sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import {
  derBitString,
  derBoolean,
  derExplicit,
  derInteger,
  derNamedBits,
  derOctetString,
  derOid,
  derSequence,
  derSet,
  derUtcTime,
  derUtf8String,
} from '../encoding/der.ts';
import { ed25519PublicKeyBytes } from './ed25519.ts';
import { sha256Hex } from './sha256.ts';

export const BASTION_CERT_COMMON_NAME = 'Bastion backend';
/** Validity starts this long before the build time (clock skew)… */
export const BASTION_CERT_BACKDATE_MS = 3_600_000;
/** …and ends this long after it. */
export const BASTION_CERT_LIFETIME_MS = 24 * 3_600_000;

const OID_ED25519 = '1.3.101.112';
const OID_COMMON_NAME = '2.5.4.3';
const OID_KEY_USAGE = '2.5.29.15';
const OID_EXT_KEY_USAGE = '2.5.29.37';
const OID_CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const KEY_USAGE_DIGITAL_SIGNATURE = 0;

/** Lowercase hex SHA-256 of the raw 32-byte Ed25519 public key: the backend's key hash. */
export function bastionKeyHash(key: KeyObject): string {
  return sha256Hex(ed25519PublicKeyBytes(key));
}

/** The DER certificate for the Ed25519 private `key`, valid around `nowMs` (ms since the epoch). */
export function bastionClientCertificate(key: KeyObject, nowMs: number): Uint8Array {
  const ed25519 = derSequence(derOid(OID_ED25519)); // RFC 8410: parameters absent
  const name = derSequence(derSet(derSequence(derOid(OID_COMMON_NAME), derUtf8String(BASTION_CERT_COMMON_NAME))));
  const extensions = derSequence(
    derSequence(derOid(OID_KEY_USAGE), derBoolean(true), derOctetString(derNamedBits([KEY_USAGE_DIGITAL_SIGNATURE]))),
    derSequence(derOid(OID_EXT_KEY_USAGE), derOctetString(derSequence(derOid(OID_CLIENT_AUTH)))),
  );
  const tbs = derSequence(
    derExplicit(0, derInteger(2)), // v3
    derInteger(1),
    ed25519,
    name,
    derSequence(derUtcTime(nowMs - BASTION_CERT_BACKDATE_MS), derUtcTime(nowMs + BASTION_CERT_LIFETIME_MS)),
    name,
    derSequence(ed25519, derBitString(ed25519PublicKeyBytes(key))),
    derExplicit(3, extensions),
  );
  return derSequence(tbs, ed25519, derBitString(new Uint8Array(sign(null, tbs, key))));
}

/** PEM text (`-----BEGIN CERTIFICATE-----`, 64-column base64) of a DER certificate. */
export function certificatePem(der: Uint8Array): string {
  const b64 = Buffer.from(der).toString('base64');
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}
