/**
 * The product's one Ed25519 verifier, plus key handling and signing (no file I/O).
 *
 * verifyEd25519 is RFC 8032 verification made strict, independent of the Node/OpenSSL version:
 *   - 32-byte public key A, 64-byte signature R ‖ S;
 *   - S < L (the group order), compared as a little-endian integer;
 *   - A and R are canonical point encodings: y < p, and the sign bit is clear when x = 0
 *     (y = 1 or y = p − 1);
 *   - A and R are not small-order points (the identity-key forgery: key 01 00…00 with
 *     R = 01 00…00 and S = 0 "verifies" any message on Node 20/22);
 *   - then node:crypto (OpenSSL) checks the equation.
 * The byte-level rules are ed25519-strict.ts, shared with the WebCrypto path (webcrypto.ts).
 * Nothing else in the server calls crypto.verify for Ed25519.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { decodeBase58, encodeBase58 } from '../encoding/base58.ts';
import { checkEd25519PublicKey, ed25519StrictPrecheck } from './ed25519-strict.ts';
import { KeyError } from './errors.ts';

// The byte-level strict rules and key validation live in ed25519-strict.ts (no node: import, shared
// with the WebCrypto verifier); re-exported for the existing callers.
export { ED25519_SMALL_ORDER_ENCODINGS, checkEd25519PublicKey, ed25519StrictPrecheck, isValidEd25519PublicKey } from './ed25519-strict.ts';

/** DER prefix of an Ed25519 SubjectPublicKeyInfo; the raw 32-byte key follows. Do not mutate. */
export const ED25519_SPKI_PREFIX: Buffer = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

// ---- KeyObject cache ------------------------------------------------------------------------

const CACHE_LIMIT = 4096;
const keyCache = new Map<string, KeyObject>();

/** Public KeyObject for a raw 32-byte key, cached (building one per verify halves throughput). */
function publicKeyObject(publicKey: Uint8Array): KeyObject {
  const id = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength).toString('latin1');
  const hit = keyCache.get(id);
  if (hit !== undefined) {
    // Refresh on hit (Map keeps insertion order): the least recently used key is evicted first.
    keyCache.delete(id);
    keyCache.set(id, hit);
    return hit;
  }
  const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
  if (keyCache.size >= CACHE_LIMIT) {
    // Evict the least recently used key (the first in iteration order).
    const oldest = keyCache.keys().next();
    if (oldest.done !== true) keyCache.delete(oldest.value);
  }
  keyCache.set(id, key);
  return key;
}

// ---- Verification ---------------------------------------------------------------------------

/**
 * Strict Ed25519 verification (see the module comment). Returns false for every malformed input
 * (wrong lengths, S ≥ L, non-canonical or small-order A or R, points not on the curve); never throws.
 */
export function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (!ed25519StrictPrecheck(publicKey, signature)) return false;
  try {
    return verify(null, message, publicKeyObject(publicKey), signature);
  } catch {
    return false;
  }
}

// ---- Keys and signing -----------------------------------------------------------------------

function isEd25519(key: KeyObject, type: 'private' | 'public'): boolean {
  return key.type === type && key.asymmetricKeyType === 'ed25519';
}

/** The Ed25519 private KeyObject for a 32-byte RFC 8032 seed. */
export function ed25519KeyFromSeed(seed: Uint8Array): KeyObject {
  if (seed.length !== 32) throw new KeyError('invalid_seed', `Ed25519 seed must be 32 bytes, got ${seed.length}`);
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/** The 32-byte seed of an Ed25519 private KeyObject. */
export function ed25519Seed(privateKey: KeyObject): Uint8Array {
  if (!isEd25519(privateKey, 'private')) throw new KeyError('invalid_private_key', 'not an Ed25519 private key');
  const der = privateKey.export({ format: 'der', type: 'pkcs8' });
  return new Uint8Array(der.subarray(der.length - 32));
}

/** The raw 32-byte public key of an Ed25519 KeyObject (private or public). */
export function ed25519PublicKeyBytes(key: KeyObject): Uint8Array {
  const pub = isEd25519(key, 'private') ? createPublicKey(key) : key;
  if (!isEd25519(pub, 'public')) throw new KeyError('invalid_public_key', 'not an Ed25519 key');
  const der = pub.export({ format: 'der', type: 'spki' });
  if (der.length !== 44 || !der.subarray(0, 12).equals(ED25519_SPKI_PREFIX)) {
    throw new KeyError('invalid_public_key', 'unexpected Ed25519 SPKI encoding');
  }
  return new Uint8Array(der.subarray(12));
}

const PEM_RE = /^-----BEGIN PRIVATE KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PRIVATE KEY-----$/;

/**
 * Load an unencrypted PKCS#8 PEM Ed25519 private key (`-----BEGIN PRIVATE KEY-----`, exactly one
 * block, surrounding whitespace allowed). Anything else (other PEM types, encrypted keys, other
 * algorithms, trailing blocks) is KeyError `invalid_private_key`.
 */
export function ed25519PrivateKeyFromPem(pem: string): KeyObject {
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
  if (!isEd25519(key, 'private')) {
    throw new KeyError('invalid_private_key', `expected an Ed25519 key, got ${key.asymmetricKeyType ?? 'unknown'}`);
  }
  return key;
}

/** PKCS#8 PEM of an Ed25519 private key. */
export function ed25519PrivateKeyToPem(privateKey: KeyObject): string {
  if (!isEd25519(privateKey, 'private')) throw new KeyError('invalid_private_key', 'not an Ed25519 private key');
  return privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
}

export interface Ed25519KeyPair {
  privateKey: KeyObject;
  /** Raw 32-byte public key. */
  publicKey: Uint8Array;
}

export function generateEd25519(): Ed25519KeyPair {
  const { privateKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKey: ed25519PublicKeyBytes(privateKey) };
}

/** RFC 8032 Ed25519 signature (64 bytes, deterministic). */
export function signEd25519(privateKey: KeyObject, message: Uint8Array): Uint8Array {
  if (!isEd25519(privateKey, 'private')) throw new KeyError('invalid_private_key', 'not an Ed25519 private key');
  return new Uint8Array(sign(null, message, privateKey));
}

// ---- did:key --------------------------------------------------------------------------------

const DID_KEY_PREFIX = 'did:key:z';

/** `did:key:z` + base58btc(0xed 0x01 ‖ public key) (multicodec ed25519-pub). */
export function ed25519ToDidKey(publicKey: Uint8Array): string {
  if (publicKey.length !== 32) throw new KeyError('invalid_public_key', `Ed25519 public key must be 32 bytes, got ${publicKey.length}`);
  const bytes = new Uint8Array(34);
  bytes[0] = 0xed;
  bytes[1] = 0x01;
  bytes.set(publicKey, 2);
  return DID_KEY_PREFIX + encodeBase58(bytes);
}

/**
 * The Ed25519 public key of a `did:key:z6Mk…` DID. Throws KeyError `invalid_did_key` when it is
 * not an Ed25519 did:key (no fragment or query accepted), or a checkEd25519PublicKey code when
 * the key itself is unusable.
 */
export function ed25519FromDidKey(did: string): Uint8Array {
  if (!did.startsWith(DID_KEY_PREFIX)) throw new KeyError('invalid_did_key', 'not a base58btc did:key');
  let bytes: Uint8Array;
  try {
    bytes = decodeBase58(did.slice(DID_KEY_PREFIX.length), 34);
  } catch {
    throw new KeyError('invalid_did_key', 'did:key is not 34 bytes of base58btc');
  }
  if (bytes[0] !== 0xed || bytes[1] !== 0x01) throw new KeyError('invalid_did_key', 'did:key is not an Ed25519 key (multicodec 0xed01)');
  const publicKey = bytes.subarray(2);
  checkEd25519PublicKey(publicKey);
  return publicKey;
}
