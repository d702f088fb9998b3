/**
 * Proof of possession (SPEC §7): the leaf device key signs, with Ed25519, the JCS of
 *
 * ```
 * {"v":"token-bridge/pop/v1","iss":<the bridge's issuer>,"aud":<request audience>,
 *  "iat":<int>,"nonce":<string>,"req":<hex SHA-256 of JCS(the request object without "proof")>}
 * ```
 *
 * so a proof is bound to one bridge, one audience, one moment and the whole request (chain, root
 * key, TTL, requested capabilities). A copied chain alone mints nothing.
 */
import type { KeyObject } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import { canonicalBytes } from '../encoding/jcs.ts';
import { encodeHex } from '../encoding/hex.ts';
import { encodeBase64url } from '../encoding/base64.ts';
import { sha256Hex } from '../crypto/sha256.ts';
import { signEd25519 } from '../crypto/ed25519.ts';

export const POP_VERSION = 'token-bridge/pop/v1';
export const NONCE_RE = /^[A-Za-z0-9_-]{16,64}$/;
/** `iat` must be within ±60 s of the bridge clock. */
export const POP_MAX_SKEW_SECONDS = 60;
/**
 * A used nonce is remembered at least this long after its use (SPEC §7): an `iat` is acceptable
 * during 2 × 60 + 1 whole seconds of the bridge clock. With the in-memory nonce store, proofs that
 * may have been used before a restart are refused this long after the start.
 */
export const NONCE_MIN_RETENTION_SECONDS = 2 * POP_MAX_SKEW_SECONDS + 1;

/**
 * Until when (unix ms) a nonce used at `nowMs` with proof `iat` must be remembered: until its
 * `iat` can no longer be accepted (`iat` + 61 s: from then on the bridge's whole second is more
 * than 60 s past `iat`), and at least 121 s after use.
 */
export function nonceExpiryMs(iat: number, nowMs: number): number {
  return Math.max((iat + POP_MAX_SKEW_SECONDS + 1) * 1000, nowMs + NONCE_MIN_RETENTION_SECONDS * 1000);
}

/**
 * Whether a proof `iat` (unix s) is acceptable at `nowMs`: within ±60 s of the clock's whole second.
 * The PostgreSQL nonce store makes the same comparison with the database's `now()` in SQL.
 */
export function iatFresh(iat: number, nowMs: number): boolean {
  return Math.abs(iat - Math.floor(nowMs / 1000)) <= POP_MAX_SKEW_SECONDS;
}

export interface ProofWire {
  iat: number;
  nonce: string;
  signature: string;
}

export interface PopFields {
  iss: string;
  aud: string;
  iat: number;
  nonce: string;
  /** hex SHA-256 of JCS(request without "proof") */
  req: string;
}

/** hex SHA-256 of the JCS of the request object with its `proof` member removed. */
export function requestDigest(request: Readonly<Record<string, unknown>>): string {
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(request)) if (k !== 'proof') rest[k] = v;
  return sha256Hex(canonicalBytes(rest));
}

/** The bytes the leaf device key signs. */
export function popMessage(f: PopFields): Uint8Array {
  return canonicalBytes({ v: POP_VERSION, iss: f.iss, aud: f.aud, iat: f.iat, nonce: f.nonce, req: f.req });
}

/** A fresh random nonce (22 base64url characters). */
export function newNonce(): string {
  return encodeBase64url(randomBytes(16));
}

/**
 * Make the `proof` member for `request` (client side). `request` is the JSON request object as it
 * will be sent, without `proof`; its `audience` must be set.
 */
export function signProof(
  deviceKey: KeyObject,
  issuer: string,
  request: Readonly<Record<string, unknown>>,
  iat: number,
  nonce: string = newNonce(),
): ProofWire {
  const aud = request.audience;
  if (typeof aud !== 'string') throw new TypeError('the request needs an "audience" for proof of possession');
  const msg = popMessage({ iss: issuer, aud, iat, nonce, req: requestDigest(request) });
  return { iat, nonce, signature: encodeHex(signEd25519(deviceKey, msg)) };
}
