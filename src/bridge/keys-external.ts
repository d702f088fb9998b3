/**
 * Bridge ES256 keys on a PKCS#11 token (SPEC §1.1 "Bridge keys"): a `keys.json` entry with
 * `"ref":"pkcs11:…"` and `"jwk":{"kty":"EC","crv":"P-256","x","y"}` instead of a `<kid>.pem`.
 *
 *  - `kid` must be the RFC 7638 thumbprint of `jwk` (`key_mismatch`); the JWKS comes from `jwk`.
 *  - Only the active key signs, so only its signer is opened (a ManagedSigner: public key read,
 *    probe signature verified, every signature verified and normalized to low S, recovery by
 *    itself); the token's key must be the one `jwk` names (`key_mismatch`).
 *  - `token-bridge keys rotate --ref URI` reads the token's public key (`readTokenJwk`) and never
 *    changes token objects.
 * Its signers appear in `/health` `signers` as `bridge:<kid>` and gate `/ready`.
 */
import { calculateJwkThumbprint } from 'jose';
import type { Registry } from 'prom-client';
import { decompressP256 } from '../crypto/p256-strict.ts';
import { encodeBase64url } from '../encoding/base64.ts';
import { parseKeyRef, redactKeyRef } from '../keys/ref.ts';
import { openSigner, readRefPublicKey } from '../keys/open-signer.ts';
import type { SignerSettings } from '../keys/external.ts';
import { signerMetrics } from '../keys/signer-metrics.ts';
import type { Signer, SignerEvents, SignerLog } from '../keys/signer.ts';
import { BridgeConfigError } from './errors.ts';
import type { EcPublicJwk } from './keyring.ts';

/** The JWK of a compressed (33-byte) P-256 public key. */
export function jwkOfP256(publicKey: Uint8Array): EcPublicJwk {
  const point = decompressP256(publicKey);
  if (point === null) throw new BridgeConfigError('key_unreadable', 'the token key is not a P-256 public key');
  return { kty: 'EC', crv: 'P-256', x: encodeBase64url(point.subarray(1, 33)), y: encodeBase64url(point.subarray(33, 65)) };
}

export function jwkThumbprint(jwk: EcPublicJwk): Promise<string> {
  return calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }, 'sha256');
}

/** Refuse anything but a `pkcs11:` reference for a bridge key (ssh-agent keys are Ed25519 only). */
export function checkBridgeRef(ref: string): void {
  if (parseKeyRef(ref).kind !== 'pkcs11')
    throw new BridgeConfigError(
      'invalid_option',
      `--ref ${redactKeyRef(ref)}: a bridge key outside the key directory must be a pkcs11: URI`,
    );
}

/** `keys rotate --ref URI`: the token key's public JWK and kid, read without signing or changing anything. */
export async function readTokenJwk(ref: string): Promise<{ kid: string; jwk: EcPublicJwk }> {
  checkBridgeRef(ref);
  const jwk = jwkOfP256(await readRefPublicKey(ref, 'p256'));
  return { kid: await jwkThumbprint(jwk), jwk };
}

/**
 * The bridge's open token signers: the node's signer settings and log, and the signer metrics,
 * attached once the HTTP server (and its registry) exists.
 */
export class BridgeSigners {
  private readonly settings: SignerSettings;
  private readonly log: SignerLog | undefined;
  private events: (SignerEvents & { up(key: string, ok: boolean): void }) | undefined;
  private readonly open_ = new Set<Signer>();

  constructor(settings: SignerSettings | undefined, log: SignerLog | undefined) {
    this.settings = settings ?? {};
    this.log = log;
  }

  /** Feed `signer_*` metrics to `registry` from now on (the current signers' `signer_up` too). */
  attachMetrics(registry: Registry): void {
    this.events = signerMetrics(registry);
    for (const s of this.open_) this.events.up(s.status().key, s.isAvailable());
  }

  /** Open and probe the token key of `kid`; it must hold the public key `jwk` names. */
  async open(kid: string, ref: string, jwk: EcPublicJwk): Promise<Signer> {
    checkBridgeRef(ref);
    const events: SignerEvents = {
      request: (...a) => this.events?.request?.(...a),
      stateChanged: (...a) => this.events?.stateChanged?.(...a),
    };
    const signer = await openSigner(ref, {
      algorithm: 'p256',
      key: `bridge:${kid}`,
      timeoutMs: this.settings.timeoutMs,
      maxPending: this.settings.maxPending,
      startTimeoutMs: this.settings.startTimeoutMs,
      pkcs11Sessions: this.settings.pkcs11Sessions,
      log: this.log,
      events,
    });
    const held = jwkOfP256(signer.publicKey);
    if (held.x !== jwk.x || held.y !== jwk.y) {
      await signer.close();
      throw new BridgeConfigError('key_mismatch', `${redactKeyRef(ref)} holds another public key than keys.json's jwk of ${kid}`);
    }
    this.open_.add(signer);
    return signer;
  }

  async close(signer: Signer): Promise<void> {
    this.open_.delete(signer);
    await signer.close();
  }

  async closeAll(): Promise<void> {
    for (const s of [...this.open_]) await this.close(s);
  }
}
