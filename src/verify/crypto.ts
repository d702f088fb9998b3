/**
 * The verifier SDK's view of src/crypto/webcrypto.ts: the same functions, with a platform that
 * lacks WebCrypto reported as VerificationError `crypto_unavailable`.
 */
import * as web from '../crypto/webcrypto.ts';
import { VerificationError } from './errors.ts';

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
export const verifyMlDsa44 = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> =>
  guarded(() => web.verifyMlDsa44(publicKey, message, signature));
/** Whether this platform's WebCrypto has ML-DSA-44 (see src/crypto/webcrypto.ts). */
export const mlDsa44Available = (): Promise<boolean> => web.mlDsa44Available();
