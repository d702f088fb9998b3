/**
 * The crypto port of the verifier core: every verifier of src/verify reaches SHA-256, Ed25519,
 * P-256 and ML-DSA-44 through the four functions below, never through a library directly.
 *
 * The strict rules are applied HERE, before any backend is asked, so no backend can weaken them:
 * Ed25519 by src/crypto/ed25519-strict.ts (lengths, S < L, canonical and not small-order A and R),
 * P-256 by src/crypto/p256-strict.ts (compressed key on the curve, r ‖ s, low S), ML-DSA-44 by
 * its lengths (FIPS 204, empty context). A backend only does the arithmetic.
 *
 * Backends (a `CryptoBackend`, each function optional; what it leaves out is WebCrypto's):
 *  - default: WebCrypto (`globalThis.crypto.subtle`, src/crypto/webcrypto.ts) — browsers and Node;
 *  - `anchor-witness/client` installs node:crypto for everything (src/client/node-crypto.ts);
 *  - a browser application may supply a pure-JS ML-DSA-44 (`mlDsa44Verify`, e.g.
 *    `@noble/post-quantum`) where its WebCrypto lacks it (SPEC §6.2: a pinned key's line is verified
 *    or the verdict is `algorithm_unsupported`, never ignored).
 *
 * The choice of one process-wide backend (setCryptoBackend) over a port passed per call: every
 * backend gives the same verdict on every input (the strict rules above are ours, not the
 * backend's; test/verify runs every verifier under node:crypto and WebCrypto), so the backend is a
 * matter of speed and availability, never of meaning — threading a port through ~40 functions would
 * buy nothing a caller could observe. A platform that lacks WebCrypto (or an algorithm in it) and
 * has no backend for it is VerificationError `crypto_unavailable`.
 */
import { ed25519StrictPrecheck } from '../crypto/ed25519-strict.ts';
import { p256StrictPrecheck } from '../crypto/p256-strict.ts';
import * as web from '../crypto/webcrypto.ts';
import { VerificationError, UsageError } from './errors.ts';

type Verify = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => boolean | Promise<boolean>;

/**
 * Implementations a caller supplies instead of WebCrypto's. Each verify function gets inputs that
 * already passed the strict byte rules and must return true only for a valid signature (anything
 * else, or a throw, counts as invalid).
 */
export interface CryptoBackend {
  /** SHA-256 of the concatenation of `parts`. */
  sha256?: (...parts: Uint8Array[]) => Uint8Array | Promise<Uint8Array>;
  /** Ed25519 (RFC 8032) over a 32-byte key and a 64-byte signature. */
  ed25519Verify?: Verify;
  /** ECDSA P-256/SHA-256 over a 33-byte compressed SEC1 key and a 64-byte r ‖ s signature. */
  p256Verify?: Verify;
  /**
   * Pure ML-DSA-44 verification (FIPS 204, empty context), e.g. `@noble/post-quantum`'s
   * `ml_dsa44.verify(signature, message, publicKey)`.
   */
  mlDsa44Verify?: Verify;
}

const FIELDS = ['sha256', 'ed25519Verify', 'p256Verify', 'mlDsa44Verify'] as const;

let backend: CryptoBackend = {};

/**
 * Install (or, with undefined, remove) the crypto backend every verifier of this SDK uses. It
 * replaces the previous one as a whole (`anchor-witness/client` installs node:crypto at import).
 */
export function setCryptoBackend(b: CryptoBackend | undefined): void {
  if (b !== undefined) {
    for (const f of FIELDS)
      if (b[f] !== undefined && typeof b[f] !== 'function') throw new UsageError(`crypto backend: ${f} must be a function`);
  }
  backend = b === undefined ? {} : { ...b };
}

/** The installed backend (a copy), e.g. to extend it: `setCryptoBackend({ ...cryptoBackend(), mlDsa44Verify })`. */
export function cryptoBackend(): CryptoBackend {
  return { ...backend };
}

async function guarded<T>(p: () => Promise<T>): Promise<T> {
  try {
    return await p();
  } catch (e) {
    if (e instanceof web.WebCryptoUnavailable) throw new VerificationError('crypto_unavailable', e.message);
    throw e;
  }
}

/** A caller's function (plain JS in a browser) may return anything or throw: only `true` is valid. */
async function own(f: Verify, publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  try {
    const valid: unknown = await f(Uint8Array.from(publicKey), Uint8Array.from(message), Uint8Array.from(signature));
    return valid === true;
  } catch {
    return false;
  }
}

/** SHA-256 of the concatenation of `parts`. */
export async function sha256(...parts: Uint8Array[]): Promise<Uint8Array> {
  const f = backend.sha256;
  if (f === undefined) return guarded(() => web.sha256(...parts));
  const digest: unknown = await f(...parts);
  if (!(digest instanceof Uint8Array) || digest.length !== 32)
    throw new VerificationError('crypto_unavailable', 'crypto backend: sha256 must return 32 bytes');
  return digest;
}

/** Strict Ed25519 verification (src/crypto/ed25519-strict.ts rules, then the backend's arithmetic). */
export async function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  const f = backend.ed25519Verify;
  if (f === undefined) return guarded(() => web.verifyEd25519(publicKey, message, signature));
  if (!ed25519StrictPrecheck(publicKey, signature)) return false;
  return own(f, publicKey, message, signature);
}

/** Strict ECDSA P-256/SHA-256 verification (compressed key, r ‖ s, low S: src/crypto/p256-strict.ts). */
export async function verifyP256(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  const f = backend.p256Verify;
  if (f === undefined) return guarded(() => web.verifyP256(publicKey, message, signature));
  if (!p256StrictPrecheck(publicKey, signature)) return false;
  return own(f, publicKey, message, signature);
}

/**
 * Pure ML-DSA-44 verification: by the backend's mlDsa44Verify when there is one, else by WebCrypto
 * (`crypto_unavailable` where it lacks ML-DSA-44).
 */
export async function verifyMlDsa44(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  const f = backend.mlDsa44Verify;
  if (f === undefined) return guarded(() => web.verifyMlDsa44(publicKey, message, signature));
  if (publicKey.length !== 1312 || signature.length !== 2420) return false;
  return own(f, publicKey, message, signature);
}

/** Whether ML-DSA-44 can be verified here: a crypto backend supplies it, or this platform's WebCrypto has it. */
export const mlDsa44Available = async (): Promise<boolean> => backend.mlDsa44Verify !== undefined || web.mlDsa44Available();
