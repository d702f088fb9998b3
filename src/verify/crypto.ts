/**
 * The verifier SDK's view of src/crypto/webcrypto.ts: the same functions, with a platform that
 * lacks WebCrypto reported as VerificationError `crypto_unavailable`, and ML-DSA-44 from a crypto
 * backend the caller supplies (setCryptoBackend) where WebCrypto lacks it (SPEC §6.2: a pinned
 * key's line is verified or the verdict is `algorithm_unsupported`, never ignored).
 */
import * as web from '../crypto/webcrypto.ts';
import { VerificationError } from './errors.ts';

/** Implementations the caller supplies for algorithms the platform's WebCrypto may lack. */
export interface CryptoBackend {
  /**
   * Pure ML-DSA-44 verification (FIPS 204, empty context): true only for a valid signature, e.g.
   * `@noble/post-quantum`'s `ml_dsa44.verify(signature, message, publicKey)`. Used instead of
   * WebCrypto when given; a throw counts as an invalid signature.
   */
  mlDsa44Verify?: (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => boolean | Promise<boolean>;
}

let backend: CryptoBackend = {};

/** Install (or, with undefined, remove) the crypto backend used by every async verifier of this SDK. */
export function setCryptoBackend(b: CryptoBackend | undefined): void {
  if (b !== undefined && b.mlDsa44Verify !== undefined && typeof b.mlDsa44Verify !== 'function')
    throw new VerificationError('usage', 'crypto backend: mlDsa44Verify must be a function');
  backend = b === undefined ? {} : { ...b };
}

async function guarded<T>(p: () => Promise<T>): Promise<T> {
  try {
    return await p();
  } catch (e) {
    if (e instanceof web.WebCryptoUnavailable) throw new VerificationError('crypto_unavailable', e.message);
    throw e;
  }
}

export const sha256 = (...parts: Uint8Array[]): Promise<Uint8Array> => guarded(() => web.sha256(...parts));
export const verifyEd25519 = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> =>
  guarded(() => web.verifyEd25519(publicKey, message, signature));
export const verifyP256 = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> =>
  guarded(() => web.verifyP256(publicKey, message, signature));

/**
 * Pure ML-DSA-44 verification: by the crypto backend's mlDsa44Verify when one was set, else by
 * WebCrypto (`crypto_unavailable` where it lacks ML-DSA-44).
 */
export async function verifyMlDsa44(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  const own = backend.mlDsa44Verify;
  if (own === undefined) return guarded(() => web.verifyMlDsa44(publicKey, message, signature));
  if (publicKey.length !== 1312 || signature.length !== 2420) return false;
  try {
    // A caller's function (plain JS in a browser) may return anything: only `true` is valid.
    const valid: unknown = await own(Uint8Array.from(publicKey), Uint8Array.from(message), Uint8Array.from(signature));
    return valid === true;
  } catch {
    return false;
  }
}

/** Whether ML-DSA-44 can be verified here: a crypto backend supplies it, or this platform's WebCrypto has it. */
export const mlDsa44Available = async (): Promise<boolean> => backend.mlDsa44Verify !== undefined || web.mlDsa44Available();
