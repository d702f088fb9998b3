/** Shared fixtures for the token-bridge tests: deterministic keys, chains, requests and policies. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KeyObject } from 'node:crypto';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes, ed25519ToDidKey } from '../../src/crypto/ed25519.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { encodeAttestation, signAttestation } from '../../src/bridge/attestation.ts';
import type { AttestationWire, UnsignedAttestation } from '../../src/bridge/attestation.ts';
import { buildTokenRequest } from '../../src/bridge/client.ts';
import type { BridgePolicy } from '../../src/bridge/decide.ts';

/** ../shared/research/upstream-bridge-vectors.json (derived from the upstream auths repository). */
export const VECTORS = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../../shared/research/upstream-bridge-vectors.json'), 'utf8'),
) as {
  repo_fixture_attestation: { root_public_key_hex: string; attestation: Record<string, unknown>; canonical_bytes_utf8: string };
  derived_two_link_chain: {
    root_public_key_hex: string;
    attestation_chain: Record<string, unknown>[];
    canonical_bytes_utf8: string[];
    expected_bridge_result: { sub: string; capabilities_no_request: string[]; capabilities_requested_deploy_staging: string[] };
  };
  jwks_test_rsa_pem: { jwks: { keys: { kty: string; kid: string; n: string; e: string }[] } };
};

export interface Key {
  key: KeyObject;
  pub: Uint8Array;
  hex: string;
  did: string;
}

export function seedKey(byte: number): Key {
  const key = ed25519KeyFromSeed(new Uint8Array(32).fill(byte));
  const pub = ed25519PublicKeyBytes(key);
  return { key, pub, hex: encodeHex(pub), did: ed25519ToDidKey(pub) };
}

export const ISSUER = 'https://bridge.example';
export const AUD = 'sts.amazonaws.com';
/** A fixed clock: 2026-01-01T00:00:00Z. */
export const NOW_S = 1_767_225_600;
export const NOW_MS = NOW_S * 1000;

export function policy(over: Partial<BridgePolicy> = {}): BridgePolicy {
  return {
    issuer: ISSUER,
    audiences: [AUD],
    defaultTtl: 900,
    maxTtl: 3600,
    proofOfPossession: true,
    awsSessionTags: false,
    startedAt: NOW_MS - 3_600_000,
    ...over,
  };
}

export interface LinkOpts {
  device: Key;
  issuer?: string;
  subject?: string;
  capabilities?: string[];
  expiresAt?: number | null;
  revokedAt?: number | null;
  timestamp?: number | null;
  rid?: string;
  /** sign the identity signature with this key instead of the issuer key */
  signIdentityWith?: KeyObject;
}

/**
 * A chain root → leaf: link i is issued by the previous key (root for link 0). Defaults: did:key
 * names, expires 30 days after NOW_S, timestamp one day before.
 */
export function chain(root: Key, links: LinkOpts[]): AttestationWire[] {
  let issuerKey = root;
  return links.map((l, i) => {
    const fields: UnsignedAttestation = {
      version: 1,
      rid: l.rid ?? `link-${i}`,
      issuer: l.issuer ?? issuerKey.did,
      subject: l.subject ?? l.device.did,
      devicePublicKey: l.device.pub,
      expiresAt: l.expiresAt === null ? null : { seconds: l.expiresAt ?? NOW_S + 30 * 86400, nanos: 0 },
      revokedAt: l.revokedAt === undefined || l.revokedAt === null ? null : { seconds: l.revokedAt, nanos: 0 },
      timestamp: l.timestamp === null ? null : { seconds: l.timestamp ?? NOW_S - 86400, nanos: 0 },
      note: null,
      payload: null,
      role: null,
      capabilities: l.capabilities ?? [],
      delegatedBy: null,
      signerType: null,
    };
    const signed = signAttestation(fields, l.signIdentityWith ?? issuerKey.key, l.device.key);
    issuerKey = l.device;
    return encodeAttestation(signed);
  });
}

export const ROOT = seedKey(0x11);
export const DEV1 = seedKey(0x12);
export const DEV2 = seedKey(0x13);
export const DEV3 = seedKey(0x14);

/** A 2-link chain ROOT → DEV1 → DEV2 with narrowing capabilities. */
export function twoLinks(over: { l0?: Partial<LinkOpts>; l1?: Partial<LinkOpts> } = {}): AttestationWire[] {
  return chain(ROOT, [
    { device: DEV1, capabilities: ['deploy:production', 'deploy:staging', 'sign_commit'], ...over.l0 },
    { device: DEV2, capabilities: ['deploy:staging', 'sign_commit'], ...over.l1 },
  ]);
}

let nonceCounter = 0;
export function freshNonce(): string {
  nonceCounter++;
  return `test-nonce-${String(nonceCounter).padStart(8, '0')}`;
}

export interface RequestOpts {
  chain?: readonly unknown[];
  root?: string;
  audience?: string;
  issuer?: string;
  device?: KeyObject | null;
  ttlSecs?: number;
  requestedCapabilities?: string[];
  iat?: number;
  nonce?: string;
}

/** A signed /token request (PoP by `device`, default DEV2, the leaf of `twoLinks`). */
export function request(o: RequestOpts = {}): Record<string, unknown> {
  const device = o.device === undefined ? DEV2.key : o.device;
  return buildTokenRequest({
    chain: o.chain ?? twoLinks(),
    rootPublicKey: o.root ?? ROOT.hex,
    audience: o.audience ?? AUD,
    issuer: o.issuer ?? ISSUER,
    ...(device === null ? {} : { deviceKey: device }),
    ...(o.ttlSecs === undefined ? {} : { ttlSecs: o.ttlSecs }),
    ...(o.requestedCapabilities === undefined ? {} : { requestedCapabilities: o.requestedCapabilities }),
    iat: o.iat ?? NOW_S,
    nonce: o.nonce ?? freshNonce(),
  });
}

/** JSON round trip (what the wire does to a request object). */
export const wire = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
