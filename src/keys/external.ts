/**
 * The node-side glue for external keys (SPEC §1.1): which `--key`-style values name a key outside
 * the process, and opening them with the node's signer settings, logger and metrics. File keys
 * keep their existing loaders (the PEM rules of SPEC §1, the `--dev` keys); only `ssh-agent:` and
 * `pkcs11:` references come here.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import type { Registry } from 'prom-client';
import { ED25519_SPKI_PREFIX } from '../crypto/ed25519.ts';
import { parseKeyRef } from './ref.ts';
import { openSigner } from './open-signer.ts';
import type { Signer, SignerAlgorithm, SignerLog } from './signer.ts';
import { signerMetrics } from './signer-metrics.ts';

/** `--signer-timeout`, `--signer-max-pending`, `--signer-start-timeout`, `--pkcs11-sessions`. */
export interface SignerSettings {
  readonly timeoutMs?: number;
  readonly maxPending?: number;
  readonly startTimeoutMs?: number;
  readonly pkcs11Sessions?: number;
}

/** True for an `ssh-agent:` or `pkcs11:` reference (throws `key_ref_invalid` for a malformed one). */
export function isExternalKeyRef(value: string | undefined): value is string {
  return value !== undefined && parseKeyRef(value).kind !== 'file';
}

export class ExternalSigners {
  private readonly list: Signer[] = [];
  private readonly settings: SignerSettings;
  private readonly log: SignerLog | undefined;
  private readonly metrics: ReturnType<typeof signerMetrics> | undefined;

  constructor(settings: SignerSettings | undefined, log: SignerLog | undefined, registry: Registry | undefined) {
    this.settings = settings ?? {};
    this.log = log;
    this.metrics = registry === undefined ? undefined : signerMetrics(registry);
  }

  /** Open (and probe) one external key; `key` is its `/health` name (`witness`, `cosign:<vkey>`, …). */
  async open(ref: string, key: string | ((publicKey: Uint8Array) => string), algorithm: SignerAlgorithm): Promise<Signer> {
    const s = await openSigner(ref, {
      algorithm,
      key,
      timeoutMs: this.settings.timeoutMs,
      maxPending: this.settings.maxPending,
      startTimeoutMs: this.settings.startTimeoutMs,
      pkcs11Sessions: this.settings.pkcs11Sessions,
      log: this.log,
      events: this.metrics,
    });
    this.list.push(s);
    return s;
  }

  /** Every signer opened here (the ones `/ready` waits for and `/health` lists). */
  all(): readonly Signer[] {
    return this.list;
  }

  async close(): Promise<void> {
    for (const s of this.list) await s.close();
  }
}

/** A public KeyObject for a raw Ed25519 key (the bastion key check compares SPKI encodings). */
export function ed25519PublicKeyObject(publicKey: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
}
