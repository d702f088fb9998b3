/**
 * ECDSA P-256 with SHA-256: 33-byte compressed SEC1 public keys, 64-byte r ‖ s signatures
 * (IEEE P1363). Verification is strict: r and s in [1, n−1] and low S (s ≤ (n−1)/2), so a
 * signature has exactly one accepted encoding. The signer always emits low S. The byte-level
 * rules are p256-strict.ts, shared with the WebCrypto path (webcrypto.ts).
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { KeyError } from './errors.ts';
import {
  P256_HALF_N as HALF_N,
  P256_N as N,
  P256_P as P,
  bigIntFromBytes as toBigInt,
  bytes32FromBigInt as toBytes32,
  p256StrictPrecheck,
} from './p256-strict.ts';

/** SPKI DER prefix for an id-ecPublicKey / prime256v1 key with a 33-byte compressed point. */
const SPKI_COMPRESSED_PREFIX = Buffer.from('3039301306072a8648ce3d020106082a8648ce3d030107032200', 'hex');

// ---- KeyObject cache ------------------------------------------------------------------------

const CACHE_LIMIT = 4096;
const keyCache = new Map<string, KeyObject>();

function buildPublicKey(publicKey: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_COMPRESSED_PREFIX, publicKey]), format: 'der', type: 'spki' });
}

function publicKeyObject(publicKey: Uint8Array): KeyObject {
  const id = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength).toString('latin1');
  const hit = keyCache.get(id);
  if (hit !== undefined) {
    // Refresh on hit (Map keeps insertion order): the least recently used key is evicted first.
    keyCache.delete(id);
    keyCache.set(id, hit);
    return hit;
  }
  const key = buildPublicKey(publicKey);
  if (keyCache.size >= CACHE_LIMIT) {
    const oldest = keyCache.keys().next();
    if (oldest.done !== true) keyCache.delete(oldest.value);
  }
  keyCache.set(id, key);
  return key;
}

// ---- Keys -----------------------------------------------------------------------------------

/**
 * Validate a compressed SEC1 P-256 public key. Throws KeyError `invalid_public_key` (not 33 bytes
 * or prefix not 02/03), `non_canonical_key` (x ≥ p) or `not_on_curve` (no point with that x:
 * OpenSSL refuses to decompress it).
 */
export function checkP256PublicKey(publicKey: Uint8Array): void {
  if (publicKey.length !== 33 || (publicKey[0] !== 0x02 && publicKey[0] !== 0x03)) {
    throw new KeyError('invalid_public_key', 'P-256 public key must be 33 bytes of compressed SEC1 (02|03 ‖ x)');
  }
  if (toBigInt(publicKey, 1, 33) >= P) throw new KeyError('non_canonical_key', 'P-256 x coordinate ≥ p');
  try {
    publicKeyObject(publicKey);
  } catch {
    throw new KeyError('not_on_curve', 'P-256 public key is not a point on the curve');
  }
}

export function isValidP256PublicKey(publicKey: Uint8Array): boolean {
  try {
    checkP256PublicKey(publicKey);
    return true;
  } catch {
    return false;
  }
}

function isP256(key: KeyObject, type: 'private' | 'public'): boolean {
  return key.type === type && key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
}

/** The 33-byte compressed SEC1 public key of a P-256 KeyObject (private or public). */
export function p256PublicKeyBytes(key: KeyObject): Uint8Array {
  const pub = isP256(key, 'private') ? createPublicKey(key) : key;
  if (!isP256(pub, 'public')) throw new KeyError('invalid_public_key', 'not a P-256 key');
  const jwk = pub.export({ format: 'jwk' });
  if (typeof jwk.x !== 'string' || typeof jwk.y !== 'string') throw new KeyError('invalid_public_key', 'P-256 key without coordinates');
  const x = Buffer.from(jwk.x, 'base64url');
  const y = Buffer.from(jwk.y, 'base64url');
  if (x.length !== 32 || y.length !== 32) throw new KeyError('invalid_public_key', 'unexpected P-256 coordinate length');
  const out = new Uint8Array(33);
  out[0] = (y[31]! & 1) === 1 ? 0x03 : 0x02;
  out.set(x, 1);
  return out;
}

export interface P256KeyPair {
  privateKey: KeyObject;
  /** 33-byte compressed SEC1 public key. */
  publicKey: Uint8Array;
}

export function generateP256(): P256KeyPair {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { privateKey, publicKey: p256PublicKeyBytes(privateKey) };
}

const PEM_RE = /^-----BEGIN PRIVATE KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PRIVATE KEY-----$/;

/** Load an unencrypted PKCS#8 PEM P-256 private key; anything else is KeyError `invalid_private_key`. */
export function p256PrivateKeyFromPem(pem: string): KeyObject {
  const trimmed = pem.trim();
  if (!PEM_RE.test(trimmed)) {
    throw new KeyError('invalid_private_key', 'expected one unencrypted PKCS#8 PEM block (-----BEGIN PRIVATE KEY-----)');
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: trimmed, format: 'pem' });
  } catch (err) {
    throw new KeyError('invalid_private_key', `unreadable PKCS#8 key: ${(err as Error).message}`);
  }
  if (!isP256(key, 'private')) throw new KeyError('invalid_private_key', 'expected a P-256 (prime256v1) EC key');
  return key;
}

/** PKCS#8 PEM of a P-256 private key. */
export function p256PrivateKeyToPem(privateKey: KeyObject): string {
  if (!isP256(privateKey, 'private')) throw new KeyError('invalid_private_key', 'not a P-256 private key');
  return privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
}

// ---- Signatures -----------------------------------------------------------------------------

/** ECDSA P-256/SHA-256 signature as 64 bytes r ‖ s, normalised to low S (s ≤ (n−1)/2). */
export function signP256(privateKey: KeyObject, message: Uint8Array): Uint8Array {
  if (!isP256(privateKey, 'private')) throw new KeyError('invalid_private_key', 'not a P-256 private key');
  const sig = new Uint8Array(sign('sha256', message, { key: privateKey, dsaEncoding: 'ieee-p1363' }));
  const s = toBigInt(sig, 32, 64);
  if (s > HALF_N) sig.set(toBytes32(N - s), 32);
  return sig;
}

/**
 * Strict ECDSA P-256/SHA-256 verification of a 64-byte r ‖ s signature under a 33-byte compressed
 * key. False for wrong lengths, r or s outside [1, n−1], high S, invalid points; never throws.
 */
export function verifyP256(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  return verifyP256Signature(publicKey, message, signature, 'reject');
}

/**
 * verifyP256 with the low-S rule lifted: only for KERI key event signatures (SPEC §3.5, high S
 * accepted; src/keri). Everything else (anchors, receipts) uses verifyP256.
 */
export function verifyP256AllowingHighS(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  return verifyP256Signature(publicKey, message, signature, 'accept');
}

function verifyP256Signature(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array, highS: 'reject' | 'accept'): boolean {
  if (!p256StrictPrecheck(publicKey, signature, highS)) return false;
  try {
    return verify('sha256', message, { key: publicKeyObject(publicKey), dsaEncoding: 'ieee-p1363' }, signature);
  } catch {
    return false;
  }
}
