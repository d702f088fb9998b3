/**
 * Portable SHA-256, Ed25519 and P-256 verification through WebCrypto (`globalThis.crypto.subtle`),
 * for the verifier SDK (src/verify) that runs in browsers as well as in Node: no node: import, no
 * Buffer. The strict rules are ours (ed25519-strict.ts, p256-strict.ts — the same code the server's
 * node:crypto verifiers run); WebCrypto only does the curve arithmetic. Compressed P-256 keys are
 * decompressed here, since WebCrypto need not import them. Everything is async, as WebCrypto is.
 *
 * Verifiers return false for every malformed or failing input; they throw WebCryptoUnavailable
 * (code `crypto_unavailable`) only when the platform lacks WebCrypto or the algorithm, so that a
 * missing feature is never reported as a bad signature.
 */
import { ProtocolError } from '../errors.ts';
import { ed25519StrictPrecheck } from './ed25519-strict.ts';
import { decompressP256, p256StrictPrecheck } from './p256-strict.ts';

/** The platform has no WebCrypto, or no Ed25519/ECDSA P-256 in it. Code: `crypto_unavailable`. */
export class WebCryptoUnavailable extends ProtocolError {
  declare readonly code: 'crypto_unavailable';
}

/** The part of SubtleCrypto used here (declared locally: this module compiles without the DOM lib). */
interface Subtle {
  digest(algorithm: string, data: Uint8Array<ArrayBuffer>): Promise<ArrayBuffer>;
  importKey(
    format: 'raw' | 'raw-public',
    key: Uint8Array<ArrayBuffer>,
    algorithm: { name: string; namedCurve?: string },
    extractable: boolean,
    usages: string[],
  ): Promise<unknown>;
  verify(
    algorithm: { name: string; hash?: string },
    key: unknown,
    signature: Uint8Array<ArrayBuffer>,
    data: Uint8Array<ArrayBuffer>,
  ): Promise<boolean>;
}

function subtle(): Subtle {
  const s = (globalThis as { crypto?: { subtle?: Subtle } }).crypto?.subtle;
  if (s === undefined)
    throw new WebCryptoUnavailable(
      'crypto_unavailable',
      'WebCrypto (crypto.subtle) is not available here (browsers offer it only in secure contexts)',
    );
  return s;
}

/** WebCrypto wants ArrayBuffer-backed views; ours always are, a SharedArrayBuffer one is copied. */
function view(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return bytes.buffer instanceof ArrayBuffer ? (bytes as Uint8Array<ArrayBuffer>) : Uint8Array.from(bytes);
}

const isNotSupported = (e: unknown): boolean =>
  typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'NotSupportedError';

/** SHA-256 of the concatenation of `parts`. */
export async function sha256(...parts: Uint8Array[]): Promise<Uint8Array> {
  let data: Uint8Array;
  if (parts.length === 1) data = parts[0]!;
  else {
    data = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      data.set(p, at);
      at += p.length;
    }
  }
  return new Uint8Array(await subtle().digest('SHA-256', view(data)));
}

// ---- Imported keys, cached (a verifier checks many signatures by a few keys) -----------------

const CACHE_LIMIT = 256;
const keyCache = new Map<string, Promise<unknown>>();

function keyId(tag: string, key: Uint8Array): string {
  let s = tag;
  for (const b of key) s += String.fromCharCode(b);
  return s;
}

/** The imported key, or null when WebCrypto refuses the key data (not a point on the curve). */
async function importKey(
  tag: 'ed' | 'p256' | 'mldsa44',
  raw: Uint8Array,
  algorithm: { name: string; namedCurve?: string },
): Promise<unknown> {
  const id = keyId(tag, raw);
  let pending = keyCache.get(id);
  if (pending === undefined) {
    if (keyCache.size >= CACHE_LIMIT) keyCache.delete(keyCache.keys().next().value!);
    pending = subtle()
      .importKey(tag === 'mldsa44' ? 'raw-public' : 'raw', view(raw), algorithm, false, ['verify'])
      .catch((e: unknown) => {
        keyCache.delete(id);
        if (isNotSupported(e))
          throw new WebCryptoUnavailable(
            'crypto_unavailable',
            `WebCrypto here has no ${algorithm.name}${algorithm.namedCurve === undefined ? '' : ` ${algorithm.namedCurve}`}`,
          );
        return null;
      });
    keyCache.set(id, pending);
  }
  return pending;
}

async function subtleVerify(
  algorithm: { name: string; hash?: string },
  key: unknown,
  signature: Uint8Array,
  message: Uint8Array,
): Promise<boolean> {
  try {
    return await subtle().verify(algorithm, key, view(signature), view(message));
  } catch (e) {
    if (isNotSupported(e) || e instanceof WebCryptoUnavailable) throw e;
    return false;
  }
}

/** Strict Ed25519 verification (the rules of src/crypto/ed25519-strict.ts), arithmetic by WebCrypto. */
export async function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  if (!ed25519StrictPrecheck(publicKey, signature)) return false;
  const key = await importKey('ed', publicKey, { name: 'Ed25519' });
  if (key === null) return false;
  return subtleVerify({ name: 'Ed25519' }, key, signature, message);
}

/** Strict ECDSA P-256/SHA-256 verification (compressed key, r ‖ s, low S), arithmetic by WebCrypto. */
export async function verifyP256(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  if (!p256StrictPrecheck(publicKey, signature)) return false;
  const point = decompressP256(publicKey);
  if (point === null) return false;
  const key = await importKey('p256', point, { name: 'ECDSA', namedCurve: 'P-256' });
  if (key === null) return false;
  return subtleVerify({ name: 'ECDSA', hash: 'SHA-256' }, key, signature, message);
}

// ---- ML-DSA-44 (FIPS 204), where the platform has it -----------------------------------------

const ML_DSA_44 = { name: 'ML-DSA-44' };
let mlDsaProbe: Promise<boolean> | undefined;

/**
 * Whether this platform's WebCrypto verifies ML-DSA-44 (WICG "modern algorithms": Node ≥ 24.7 has
 * it, browsers mostly do not yet). Probed once by importing a public key; false when WebCrypto
 * itself is missing.
 */
export function mlDsa44Available(): Promise<boolean> {
  mlDsaProbe ??= (async () => {
    const s = (globalThis as { crypto?: { subtle?: Subtle } }).crypto?.subtle;
    if (s === undefined) return false;
    try {
      await s.importKey('raw-public', new Uint8Array(1312), ML_DSA_44, false, ['verify']);
      return true;
    } catch (e) {
      // A platform that knows ML-DSA-44 may still refuse these key bytes (DataError); one that does
      // not know the algorithm or the 'raw-public' format throws NotSupportedError or TypeError.
      return typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'DataError';
    }
  })();
  return mlDsaProbe;
}

/**
 * Pure ML-DSA-44 verification (empty context) by WebCrypto. False for wrong lengths and failing
 * signatures; throws WebCryptoUnavailable (`crypto_unavailable`) when the platform lacks ML-DSA-44
 * (check mlDsa44Available first to treat that case apart).
 */
export async function verifyMlDsa44(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  if (publicKey.length !== 1312 || signature.length !== 2420) return false;
  if (!(await mlDsa44Available())) throw new WebCryptoUnavailable('crypto_unavailable', 'WebCrypto here has no ML-DSA-44');
  const key = await importKey('mldsa44', publicKey, ML_DSA_44);
  if (key === null) return false;
  return subtleVerify(ML_DSA_44, key, signature, message);
}
