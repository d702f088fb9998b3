/**
 * ML-DSA-44 (FIPS 204) through node:crypto: key import and export, pure ML-DSA signing and
 * verification with the empty context string (never HashML-DSA), as C2SP tlog-cosignature's
 * `subtree/v1` signatures use it (SPEC §5.2).
 *
 * Node ≥ 24.6 with OpenSSL ≥ 3.5 has ML-DSA-44 (`generateKeyPairSync('ml-dsa-44')`); older runtimes
 * do not. `mlDsa44Supported()` probes once; every function that needs the algorithm throws KeyError
 * `mldsa_unsupported` on a runtime without it instead of crashing, so start-up can refuse an
 * ML-DSA key with a clear message.
 *
 * Private keys are PKCS#8 with OID 2.16.840.1.101.3.4.3.17 in the RFC 9881 `seed` or `both` form;
 * the `expandedKey`-only form (no seed: the key cannot be re-derived or checked) is refused with
 * `key_type_unsupported`. Public keys are handled as the raw 1312-byte FIPS 204 encoding.
 * Signing is hedged (randomized) as OpenSSL does it: tests compare messages, never signature bytes.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { KeyError } from './errors.ts';

/** Raw FIPS 204 ML-DSA-44 public key length. */
export const ML_DSA_44_PUBLIC_KEY_LENGTH = 1312;
/** ML-DSA-44 signature length. */
export const ML_DSA_44_SIGNATURE_LENGTH = 2420;
/** ML-DSA-44 key generation seed length (ξ). */
export const ML_DSA_44_SEED_LENGTH = 32;

/** DER prefix of an ML-DSA-44 SubjectPublicKeyInfo; the raw key follows. Do not mutate. */
export const ML_DSA_44_SPKI_PREFIX: Buffer = Buffer.from('30820532300b06096086480165030403110382052100', 'hex');
/** DER prefix of an ML-DSA-44 PKCS#8 key in the RFC 9881 `seed` form; the 32-byte seed follows. */
const PKCS8_SEED_PREFIX = Buffer.from('3034020100300b060960864801650304031104228020', 'hex');

let supported: boolean | undefined;

/** Whether this runtime's node:crypto has ML-DSA-44 (probed once). */
export function mlDsa44Supported(): boolean {
  if (supported === undefined) {
    try {
      createPrivateKey({ key: Buffer.concat([PKCS8_SEED_PREFIX, Buffer.alloc(32)]), format: 'der', type: 'pkcs8' });
      supported = true;
    } catch {
      supported = false;
    }
  }
  return supported;
}

/** Throws KeyError `mldsa_unsupported` unless the runtime has ML-DSA-44. */
export function requireMlDsa44(): void {
  if (!mlDsa44Supported()) {
    throw new KeyError(
      'mldsa_unsupported',
      "ML-DSA-44 is not available in this runtime's node:crypto (it needs Node >= 24.6 with OpenSSL >= 3.5)",
    );
  }
}

function isMlDsa44(key: KeyObject, type: 'private' | 'public'): boolean {
  return key.type === type && key.asymmetricKeyType === 'ml-dsa-44';
}

/**
 * Check an ML-DSA-44 private KeyObject (as createPrivateKey gives it from PKCS#8): it must carry
 * its seed (`seed` or `both` form). Throws `key_type_unsupported` for the `expandedKey`-only form.
 */
export function checkMlDsa44PrivateKey(key: KeyObject): KeyObject {
  requireMlDsa44();
  if (!isMlDsa44(key, 'private')) throw new KeyError('invalid_private_key', 'not an ML-DSA-44 private key');
  try {
    key.export({ format: 'raw-seed' });
  } catch {
    throw new KeyError(
      'key_type_unsupported',
      'ML-DSA-44 key in the expandedKey-only PKCS#8 form: use the seed or both form (anchor-witness keygen --type ml-dsa-44)',
    );
  }
  return key;
}

/** The ML-DSA-44 private KeyObject for a 32-byte key generation seed (FIPS 204 ML-DSA.KeyGen_internal). */
export function mlDsa44KeyFromSeed(seed: Uint8Array): KeyObject {
  requireMlDsa44();
  if (seed.length !== ML_DSA_44_SEED_LENGTH) throw new KeyError('invalid_seed', `ML-DSA-44 seed must be 32 bytes, got ${seed.length}`);
  return createPrivateKey({ key: Buffer.concat([PKCS8_SEED_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/** A new ML-DSA-44 private key (exported as PKCS#8 it is the 2626-byte `both` form). */
export function generateMlDsa44(): { privateKey: KeyObject; publicKey: Uint8Array } {
  requireMlDsa44();
  const { privateKey } = generateKeyPairSync('ml-dsa-44');
  return { privateKey, publicKey: mlDsa44PublicKeyBytes(privateKey) };
}

/** The raw 1312-byte public key of an ML-DSA-44 KeyObject (private or public). */
export function mlDsa44PublicKeyBytes(key: KeyObject): Uint8Array {
  requireMlDsa44();
  const pub = isMlDsa44(key, 'private') ? createPublicKey(key) : key;
  if (!isMlDsa44(pub, 'public')) throw new KeyError('invalid_public_key', 'not an ML-DSA-44 key');
  const der = pub.export({ format: 'der', type: 'spki' });
  if (
    der.length !== ML_DSA_44_SPKI_PREFIX.length + ML_DSA_44_PUBLIC_KEY_LENGTH ||
    !der.subarray(0, ML_DSA_44_SPKI_PREFIX.length).equals(ML_DSA_44_SPKI_PREFIX)
  ) {
    throw new KeyError('invalid_public_key', 'unexpected ML-DSA-44 SPKI encoding');
  }
  return new Uint8Array(der.subarray(ML_DSA_44_SPKI_PREFIX.length));
}

const CACHE_LIMIT = 256;
const keyCache = new Map<string, KeyObject | null>();

/** Public KeyObject for a raw key, cached; null when OpenSSL refuses the bytes. */
function publicKeyObject(publicKey: Uint8Array): KeyObject | null {
  const id = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength).toString('latin1');
  if (keyCache.has(id)) return keyCache.get(id)!;
  let key: KeyObject | null;
  try {
    key = createPublicKey({ key: Buffer.concat([ML_DSA_44_SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
  } catch {
    key = null;
  }
  if (keyCache.size >= CACHE_LIMIT) keyCache.delete(keyCache.keys().next().value!);
  keyCache.set(id, key);
  return key;
}

/**
 * Pure ML-DSA-44 verification, empty context. False for wrong lengths and every failing input;
 * throws only `mldsa_unsupported` (a missing algorithm is never reported as a bad signature).
 */
export function verifyMlDsa44(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  requireMlDsa44();
  if (publicKey.length !== ML_DSA_44_PUBLIC_KEY_LENGTH || signature.length !== ML_DSA_44_SIGNATURE_LENGTH) return false;
  const key = publicKeyObject(publicKey);
  if (key === null) return false;
  try {
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}

/** Pure ML-DSA-44 signature (hedged, empty context), 2420 bytes. Runs on the calling thread. */
export function signMlDsa44(privateKey: KeyObject, message: Uint8Array): Uint8Array {
  requireMlDsa44();
  if (!isMlDsa44(privateKey, 'private')) throw new KeyError('invalid_private_key', 'not an ML-DSA-44 private key');
  return new Uint8Array(sign(null, message, privateKey));
}
