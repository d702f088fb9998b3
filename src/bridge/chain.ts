/**
 * Attestation chain verification (SPEC §7; research/upstream-bridge.md §3.4 with its holes closed),
 * root → leaf, in two passes so a validity verdict is only given about bytes whose signatures
 * verified (docs/bridge.md, "Chain check order"): 1. authenticity, link by link (`chain_broken`,
 * `chain_signature_invalid`; both signatures required); 2. validity (`attestation_revoked`,
 * `attestation_expired` when now > expires_at, `attestation_future` beyond now + 300 s). Every
 * failure names the link index. Capability narrowing (`checkNarrowing`) comes after root binding.
 */
import { verifyEd25519 } from '../crypto/ed25519.ts';
import { encodeHex } from '../encoding/hex.ts';
import { formatRfc3339 } from '../encoding/time.ts';
import type { Instant } from '../encoding/time.ts';
import { attestationSignedBytes } from './attestation.ts';
import type { Attestation } from './attestation.ts';
import { BridgeError } from './errors.ts';
import type { TrustedRoots } from './trusted-roots.ts';

export const MAX_CHAIN_LINKS = 8;
export const MAX_FUTURE_SKEW_SECONDS = 300;

export function compareInstants(a: Instant, b: Instant): number {
  return a.seconds !== b.seconds ? a.seconds - b.seconds : a.nanos - b.nanos;
}

/** Unix milliseconds → Instant. */
export function instantFromMillis(ms: number): Instant {
  const seconds = Math.floor(ms / 1000);
  return { seconds, nanos: Math.round((ms - seconds * 1000) * 1e6) };
}

const show = (s: string): string => JSON.stringify(s.length > 120 ? s.slice(0, 120) + '…' : s);

function verifyLinkSignatures(a: Attestation, i: number, issuerKey: Uint8Array): void {
  const bytes = attestationSignedBytes(a);
  const who = i === 0 ? 'root_public_key' : `link ${i - 1}'s device_public_key`;
  if (a.identitySignature === null)
    throw new BridgeError('chain_signature_invalid', `link ${i}: identity_signature is missing or empty; it must be signed by ${who}`);
  if (!verifyEd25519(issuerKey, bytes, a.identitySignature)) {
    throw new BridgeError('chain_signature_invalid', `link ${i}: identity_signature does not verify under ${who}`);
  }
  if (a.deviceSignature === null) throw new BridgeError('chain_signature_invalid', `link ${i}: device_signature is missing or empty`);
  if (!verifyEd25519(a.devicePublicKey, bytes, a.deviceSignature)) {
    throw new BridgeError('chain_signature_invalid', `link ${i}: device_signature does not verify under the link's device_public_key`);
  }
}

/**
 * Verify `chain` (root → leaf) against `rootKey` at `now`. Throws BridgeError with one of
 * chain_broken, chain_signature_invalid, attestation_revoked, attestation_expired,
 * attestation_future. The chain length (1..8) is a schema rule checked when the request is decoded.
 */
export function verifyChain(chain: readonly Attestation[], rootKey: Uint8Array, now: Instant, roots?: TrustedRoots): void {
  if (chain.length === 0) throw new BridgeError('chain_broken', 'empty attestation chain');
  chain.forEach((a, i) => {
    if (i > 0) {
      const prev = chain[i - 1]!;
      if (a.issuer !== prev.subject) {
        throw new BridgeError('chain_broken', `link ${i}: issuer ${show(a.issuer)} is not link ${i - 1}'s subject ${show(prev.subject)}`);
      }
    }
    verifyLinkSignatures(a, i, i === 0 ? rootKey : chain[i - 1]!.devicePublicKey);
  });
  const latestTimestamp: Instant = { seconds: now.seconds + MAX_FUTURE_SKEW_SECONDS, nanos: now.nanos };
  chain.forEach((a, i) => {
    if (a.revokedAt !== null) throw new BridgeError('attestation_revoked', `link ${i}: revoked at ${formatRfc3339(a.revokedAt)}`);
    if (roots !== undefined) {
      if (roots.revokedKeys.has(encodeHex(a.devicePublicKey))) {
        throw new BridgeError(
          'attestation_revoked',
          `link ${i}: device_public_key ${encodeHex(a.devicePublicKey)} is revoked by the trusted roots`,
        );
      }
      if (roots.revokedRids.has(a.rid))
        throw new BridgeError('attestation_revoked', `link ${i}: rid ${show(a.rid)} is revoked by the trusted roots`);
    }
    if (a.expiresAt !== null && compareInstants(now, a.expiresAt) > 0) {
      throw new BridgeError('attestation_expired', `link ${i}: expired at ${formatRfc3339(a.expiresAt)}`);
    }
    if (a.timestamp !== null && compareInstants(a.timestamp, latestTimestamp) > 0) {
      throw new BridgeError(
        'attestation_future',
        `link ${i}: timestamp ${formatRfc3339(a.timestamp)} is more than ${MAX_FUTURE_SKEW_SECONDS} s ahead of the bridge clock (${formatRfc3339(now)})`,
      );
    }
  });
}

/** The earliest `expires_at` of the chain, or null when no link expires. */
export function earliestExpiry(chain: readonly Attestation[]): Instant | null {
  let min: Instant | null = null;
  for (const a of chain) if (a.expiresAt !== null && (min === null || compareInstants(a.expiresAt, min) < 0)) min = a.expiresAt;
  return min;
}

/** Each link's capability set must be a subset of the previous link's (link 0 is unrestricted). */
export function checkNarrowing(chain: readonly Attestation[]): void {
  for (let i = 1; i < chain.length; i++) {
    const held = new Set(chain[i - 1]!.capabilities);
    const widened = [...new Set(chain[i]!.capabilities)].filter((c) => !held.has(c));
    if (widened.length > 0) {
      throw new BridgeError('capability_escalation', `link ${i}: grants ${widened.map(show).join(', ')} not held by link ${i - 1}`);
    }
  }
}

/**
 * The JWT capability set: sorted, de-duplicated `requested ∩ leaf`, or the leaf's set when nothing
 * is requested. A requested capability the leaf does not hold is `insufficient_capabilities`.
 */
export function grantCapabilities(leaf: readonly string[], requested: readonly string[] | undefined): string[] {
  const held = new Set(leaf);
  if (requested === undefined) return [...held].sort();
  const missing = [...new Set(requested)].filter((c) => !held.has(c));
  if (missing.length > 0) {
    throw new BridgeError(
      'insufficient_capabilities',
      `requested ${missing.map(show).join(', ')} not held by the leaf attestation (holds ${[...held].sort().map(show).join(', ') || 'nothing'})`,
    );
  }
  return [...new Set(requested)].sort();
}
