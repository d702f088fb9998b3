/**
 * A key held in the process (a PKCS#8 PEM file, SPEC §1): the `Signer` interface over a KeyObject.
 * Always available; signing is synchronous work wrapped in a resolved promise, so callers that
 * sign in worker threads today can keep doing so with the KeyObject (`external` is false).
 */
import type { KeyObject } from 'node:crypto';
import { ed25519PublicKeyBytes, signEd25519 } from '../crypto/ed25519.ts';
import { p256PublicKeyBytes, signP256 } from '../crypto/p256.ts';
import type { Signer, SignerAlgorithm, SignerStatus } from './signer.ts';

export class FileSigner implements Signer {
  readonly algorithm: SignerAlgorithm;
  readonly publicKey: Uint8Array;
  readonly external = false;
  readonly privateKey: KeyObject;
  private readonly key: string;
  private readonly ref: string;
  private readonly since = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

  constructor(privateKey: KeyObject, key: string, ref: string, keyOf?: string | ((publicKey: Uint8Array) => string)) {
    this.privateKey = privateKey;
    this.algorithm = privateKey.asymmetricKeyType === 'ed25519' ? 'ed25519' : 'p256';
    this.publicKey = this.algorithm === 'ed25519' ? ed25519PublicKeyBytes(privateKey) : p256PublicKeyBytes(privateKey);
    this.key = keyOf === undefined ? key : typeof keyOf === 'string' ? keyOf : keyOf(this.publicKey);
    this.ref = ref;
  }

  /** Synchronous signing for callers on a hot path that know the key is in the process. */
  signSync(msg: Uint8Array): Uint8Array {
    return this.algorithm === 'ed25519' ? signEd25519(this.privateKey, msg) : signP256(this.privateKey, msg);
  }

  sign(msg: Uint8Array): Promise<Uint8Array> {
    try {
      return Promise.resolve(this.signSync(msg));
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
  }

  isAvailable(): boolean {
    return true;
  }

  status(): SignerStatus {
    return { key: this.key, ref: this.ref, state: 'ok', since: this.since, last_error: null };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
