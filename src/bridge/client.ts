/**
 * Client side of `/token`: build a request body with its proof of possession, and (optionally) a
 * demo chain. Used by `token-bridge token`, the dev demo, the benchmark and the tests; the federation
 * `credentials` command can reuse it.
 */
import type { KeyObject } from 'node:crypto';
import { ed25519PublicKeyBytes, ed25519ToDidKey } from '../crypto/ed25519.ts';
import { encodeHex } from '../encoding/hex.ts';
import { encodeAttestation, signAttestation } from './attestation.ts';
import type { AttestationWire } from './attestation.ts';
import { newNonce, signProof } from './pop.ts';

export interface TokenRequestInput {
  /** The chain as JSON (root → leaf), sent as is. */
  chain: readonly unknown[];
  /** hex Ed25519 root key */
  rootPublicKey: string;
  audience: string;
  /** The bridge's issuer URL (what the proof is bound to). */
  issuer: string;
  /** The leaf device key; omit for a request without proof of possession. */
  deviceKey?: KeyObject;
  ttlSecs?: number;
  requestedCapabilities?: readonly string[];
  /** unix seconds for the proof's iat (default: now) */
  iat?: number;
  nonce?: string;
  /** SPEC §7.2: `{bundle, agent?, proof}` for a bridge with `--require-finalized-anchor` (covered by the proof). */
  finalizedAnchor?: unknown;
}

/** The `/token` JSON body, with `proof` when a device key is given. */
export function buildTokenRequest(input: TokenRequestInput): Record<string, unknown> {
  const req: Record<string, unknown> = {
    attestation_chain: [...input.chain],
    root_public_key: input.rootPublicKey,
    audience: input.audience,
  };
  if (input.ttlSecs !== undefined) req.ttl_secs = input.ttlSecs;
  if (input.requestedCapabilities !== undefined) req.requested_capabilities = [...input.requestedCapabilities];
  if (input.finalizedAnchor !== undefined) req.finalized_anchor = input.finalizedAnchor;
  if (input.deviceKey !== undefined) {
    req.proof = signProof(input.deviceKey, input.issuer, req, input.iat ?? Math.floor(Date.now() / 1000), input.nonce ?? newNonce());
  }
  return req;
}

export interface LinkSpec {
  /** The key this link delegates to (its device key). */
  deviceKey: KeyObject;
  capabilities?: string[];
  /** unix seconds */
  expiresAt?: number;
  timestamp?: number;
  rid?: string;
  signerType?: 'Human' | 'Agent' | 'Workload';
}

/**
 * A signed did:key chain root → leaf: link i is issued by the previous key (the root key for link 0)
 * to `links[i].deviceKey`, with issuer/subject the did:key of those keys.
 */
export function buildDidKeyChain(rootKey: KeyObject, links: readonly LinkSpec[], issuerDid?: string): AttestationWire[] {
  let issuerKey = rootKey;
  let issuer = issuerDid ?? ed25519ToDidKey(ed25519PublicKeyBytes(rootKey));
  return links.map((l, i) => {
    const devicePublicKey = ed25519PublicKeyBytes(l.deviceKey);
    const subject = ed25519ToDidKey(devicePublicKey);
    const att = signAttestation(
      {
        version: 1,
        rid: l.rid ?? `link-${i}`,
        issuer,
        subject,
        devicePublicKey,
        expiresAt: l.expiresAt === undefined ? null : { seconds: l.expiresAt, nanos: 0 },
        revokedAt: null,
        timestamp: l.timestamp === undefined ? null : { seconds: l.timestamp, nanos: 0 },
        note: null,
        payload: null,
        role: null,
        capabilities: l.capabilities ?? [],
        delegatedBy: null,
        signerType: l.signerType ?? null,
      },
      issuerKey,
      l.deviceKey,
    );
    issuerKey = l.deviceKey;
    issuer = subject;
    return encodeAttestation(att);
  });
}

export const hexKey = (key: KeyObject): string => encodeHex(ed25519PublicKeyBytes(key));
