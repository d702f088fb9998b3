/**
 * Private signing keys whose algorithm comes from the PKCS#8 algorithm OID (SPEC §5.1): Ed25519
 * (1.3.101.112) or ML-DSA-44 (2.16.840.1.101.3.4.3.17, `seed` or `both` form). No file I/O: the
 * caller reads the PEM (src/keys/keyfile.ts checks the mode).
 */
import { createPrivateKey } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { decodeBase64 } from '../encoding/base64.ts';
import { ed25519PrivateKeyFromPem, ed25519PublicKeyBytes } from './ed25519.ts';
import { KeyError } from './errors.ts';
import { checkMlDsa44PrivateKey, mlDsa44PublicKeyBytes, requireMlDsa44 } from './ml-dsa.ts';

export type SigningAlgorithm = 'ed25519' | 'ml-dsa-44';

export interface SigningKey {
  readonly algorithm: SigningAlgorithm;
  readonly privateKey: KeyObject;
  /** Raw public key: 32 bytes (Ed25519) or 1312 bytes (ML-DSA-44). */
  readonly publicKey: Uint8Array;
}

const PEM_RE = /^-----BEGIN PRIVATE KEY-----\r?\n([A-Za-z0-9+/=\r\n]+)-----END PRIVATE KEY-----$/;
/** AlgorithmIdentifier { id-ml-dsa-44 } (no parameters), as it follows the version in PKCS#8. */
const ML_DSA_44_ALGORITHM = Buffer.from('300b0609608648016503040311', 'hex');
/** AlgorithmIdentifier { id-Ed25519 }. */
const ED25519_ALGORITHM = Buffer.from('300506032b6570', 'hex');

/** The AlgorithmIdentifier of a PKCS#8 PrivateKeyInfo: SEQUENCE { INTEGER 0|1, AlgorithmIdentifier, … }. */
function algorithmOf(der: Uint8Array): 'ed25519' | 'ml-dsa-44' | undefined {
  // Skip the outer SEQUENCE header (short or long length form) and the 3-byte version INTEGER.
  if (der[0] !== 0x30 || der.length < 2) return undefined;
  const lenByte = der[1]!;
  const header = lenByte < 0x80 ? 2 : 2 + (lenByte & 0x7f);
  const at = header + 3;
  const has = (alg: Buffer): boolean => Buffer.from(der.buffer, der.byteOffset + at, Math.min(alg.length, der.length - at)).equals(alg);
  if (has(ML_DSA_44_ALGORITHM)) return 'ml-dsa-44';
  if (has(ED25519_ALGORITHM)) return 'ed25519';
  return undefined;
}

/**
 * Load an unencrypted PKCS#8 PEM private key of type Ed25519 or ML-DSA-44 (one block). Throws
 * KeyError `invalid_private_key` (unreadable), `key_type_unsupported` (another algorithm, or an
 * ML-DSA-44 key without its seed), `mldsa_unsupported` (an ML-DSA-44 key on a runtime without it).
 */
export function signingKeyFromPem(pem: string): SigningKey {
  const trimmed = pem.trim();
  const m = PEM_RE.exec(trimmed);
  if (m === null) throw new KeyError('invalid_private_key', 'expected one unencrypted PKCS#8 PEM block (-----BEGIN PRIVATE KEY-----)');
  let der: Uint8Array;
  try {
    der = decodeBase64(m[1]!.replace(/\r?\n/g, ''));
  } catch {
    throw new KeyError('invalid_private_key', 'the PEM body is not base64');
  }
  const algorithm = algorithmOf(der);
  if (algorithm === 'ed25519') {
    const privateKey = ed25519PrivateKeyFromPem(trimmed);
    return { algorithm, privateKey, publicKey: ed25519PublicKeyBytes(privateKey) };
  }
  if (algorithm === 'ml-dsa-44') {
    requireMlDsa44();
    let key: KeyObject;
    try {
      key = createPrivateKey({ key: trimmed, format: 'pem' });
    } catch (err) {
      throw new KeyError('invalid_private_key', `unreadable ML-DSA-44 PKCS#8 key: ${(err as Error).message}`);
    }
    const privateKey = checkMlDsa44PrivateKey(key);
    return { algorithm, privateKey, publicKey: mlDsa44PublicKeyBytes(privateKey) };
  }
  throw new KeyError('key_type_unsupported', 'unsupported key type: a cosign key is Ed25519 or ML-DSA-44 (PKCS#8)');
}

/** PKCS#8 PEM of a signing key (ML-DSA-44: the `both` form, as node:crypto exports it). */
export function signingKeyToPem(key: SigningKey): string {
  return key.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
}
