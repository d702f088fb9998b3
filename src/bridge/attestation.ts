/**
 * The `auths` v1 attestation (SPEC §7; research/upstream-bridge.md §3.1–3.2) in two forms:
 * `AttestationWire` as it travels in JSON and `Attestation` decoded (bytes, instants). The signed
 * bytes are always rebuilt from the decoded form — lowercase hex, timestamps re-printed in UTC with
 * 0/3/6/9 fraction digits — never taken from the request text.
 *
 * Decoding is strict: unknown members, wrong types, bad hex, unparseable timestamps and capability
 * strings outside `^[a-z0-9_:-]{1,64}$` are `malformed_body` with the JSON pointer of the field.
 * A signature that is absent or `""` decodes to `null`: that is not a schema error but a chain
 * failure (`chain_signature_invalid`, an empty issuer signature is never a skip).
 */
import { canonicalBytes } from '../encoding/jcs.ts';
import { decodeHex, encodeHex } from '../encoding/hex.ts';
import { formatRfc3339, parseRfc3339 } from '../encoding/time.ts';
import type { Instant } from '../encoding/time.ts';
import { signEd25519 } from '../crypto/ed25519.ts';
import type { KeyObject } from 'node:crypto';
import { malformed } from './errors.ts';
import { isJsonObject } from '../encoding/json.ts';

export const ROLES = ['admin', 'member', 'readonly'] as const;
export type Role = (typeof ROLES)[number];
export const SIGNER_TYPES = ['Human', 'Agent', 'Workload'] as const;
export type SignerType = (typeof SIGNER_TYPES)[number];

export const CAPABILITY_RE = /^[a-z0-9_:-]{1,64}$/;

/** JSON form (what clients send). Optional members may also be `null`. */
export interface AttestationWire {
  version: number;
  rid: string;
  issuer: string;
  subject: string;
  device_public_key: string;
  identity_signature?: string;
  device_signature?: string;
  expires_at?: string | null;
  revoked_at?: string | null;
  timestamp?: string | null;
  note?: string | null;
  payload?: unknown;
  role?: Role | null;
  capabilities?: string[] | null;
  delegated_by?: string | null;
  signer_type?: SignerType | null;
}

export interface Attestation {
  version: number;
  rid: string;
  issuer: string;
  subject: string;
  devicePublicKey: Uint8Array;
  /** null when absent or `""`. */
  identitySignature: Uint8Array | null;
  /** null when absent or `""`. */
  deviceSignature: Uint8Array | null;
  expiresAt: Instant | null;
  revokedAt: Instant | null;
  timestamp: Instant | null;
  note: string | null;
  /** Any JSON value; null when absent. */
  payload: unknown;
  role: Role | null;
  /** As signed (order and duplicates kept); empty when absent. */
  capabilities: string[];
  delegatedBy: string | null;
  signerType: SignerType | null;
}

const FIELDS = new Set([
  'version',
  'rid',
  'issuer',
  'subject',
  'device_public_key',
  'identity_signature',
  'device_signature',
  'expires_at',
  'revoked_at',
  'timestamp',
  'note',
  'payload',
  'role',
  'capabilities',
  'delegated_by',
  'signer_type',
]);

const ptr = (base: string, key: string | number): string => `${base}/${String(key).replaceAll('~', '~0').replaceAll('/', '~1')}`;

function str(o: Record<string, unknown>, key: string, at: string): string {
  const v = o[key];
  if (v === undefined) throw malformed(ptr(at, key), 'required');
  if (typeof v !== 'string') throw malformed(ptr(at, key), 'must be a string');
  return v;
}

function optStr(o: Record<string, unknown>, key: string, at: string): string | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw malformed(ptr(at, key), 'must be a string or null');
  return v;
}

/** RFC 3339 as chrono reads it: `T` or a space between date and time, `Z` or an offset, ≤ 9 fraction digits. */
export function parseAttestationTime(text: string): Instant {
  const t = /^\d{4}-\d{2}-\d{2} /.test(text) ? `${text.slice(0, 10)}T${text.slice(11)}` : text;
  return parseRfc3339(t);
}

function optTime(o: Record<string, unknown>, key: string, at: string): Instant | null {
  const v = optStr(o, key, at);
  if (v === null) return null;
  try {
    return parseAttestationTime(v);
  } catch (e) {
    throw malformed(ptr(at, key), `not an RFC 3339 date-time (${(e as Error).message})`);
  }
}

function signature(o: Record<string, unknown>, key: string, at: string): Uint8Array | null {
  const v = o[key];
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string') throw malformed(ptr(at, key), 'must be a hex string');
  try {
    return decodeHex(v, 64);
  } catch {
    throw malformed(ptr(at, key), 'must be 64 bytes of hex (or empty)');
  }
}

function oneOf<T extends string>(o: Record<string, unknown>, key: string, at: string, allowed: readonly T[]): T | null {
  const v = optStr(o, key, at);
  if (v === null) return null;
  if (!(allowed as readonly string[]).includes(v)) throw malformed(ptr(at, key), `must be one of ${allowed.join(', ')}`);
  return v as T;
}

/** Validate a list of capability strings (verbatim, no folding). */
export function decodeCapabilities(v: unknown, at: string): string[] {
  if (!Array.isArray(v)) throw malformed(at, 'must be an array of capability strings');
  return v.map((c: unknown, i) => {
    if (typeof c !== 'string' || !CAPABILITY_RE.test(c)) throw malformed(ptr(at, i), 'capability must match ^[a-z0-9_:-]{1,64}$');
    return c;
  });
}

/** Decode one attestation at JSON pointer `at`; throws BridgeError `malformed_body`. */
export function decodeAttestation(v: unknown, at: string): Attestation {
  if (!isJsonObject(v)) throw malformed(at, 'attestation must be an object');
  for (const k of Object.keys(v)) if (!FIELDS.has(k)) throw malformed(ptr(at, k), 'unknown field');
  const version = v.version;
  if (version === undefined) throw malformed(ptr(at, 'version'), 'required');
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0 || version > 0xffffffff) {
    throw malformed(ptr(at, 'version'), 'must be an integer 0..4294967295');
  }
  const dpkText = str(v, 'device_public_key', at);
  let devicePublicKey: Uint8Array;
  try {
    devicePublicKey = decodeHex(dpkText, 32);
  } catch {
    throw malformed(ptr(at, 'device_public_key'), 'must be 32 bytes of hex');
  }
  const caps = v.capabilities;
  return {
    version,
    rid: str(v, 'rid', at),
    issuer: str(v, 'issuer', at),
    subject: str(v, 'subject', at),
    devicePublicKey,
    identitySignature: signature(v, 'identity_signature', at),
    deviceSignature: signature(v, 'device_signature', at),
    expiresAt: optTime(v, 'expires_at', at),
    revokedAt: optTime(v, 'revoked_at', at),
    timestamp: optTime(v, 'timestamp', at),
    note: optStr(v, 'note', at),
    payload: v.payload ?? null,
    role: oneOf(v, 'role', at, ROLES),
    capabilities: caps === undefined || caps === null ? [] : decodeCapabilities(caps, ptr(at, 'capabilities')),
    delegatedBy: optStr(v, 'delegated_by', at),
    signerType: oneOf(v, 'signer_type', at, SIGNER_TYPES),
  };
}

const time = (t: Instant | null): string | null => (t === null ? null : formatRfc3339(t));

/** The object whose JCS is signed (SPEC §7 "Signed bytes"). */
export function signedObject(a: Attestation): Record<string, unknown> {
  const o: Record<string, unknown> = {
    version: a.version,
    rid: a.rid,
    issuer: a.issuer,
    subject: a.subject,
    device_public_key: encodeHex(a.devicePublicKey),
    payload: a.payload,
    timestamp: time(a.timestamp),
    expires_at: time(a.expiresAt),
    revoked_at: time(a.revokedAt),
    note: a.note,
  };
  if (a.role !== null) o.role = a.role;
  if (a.capabilities.length > 0) o.capabilities = a.capabilities;
  if (a.delegatedBy !== null) o.delegated_by = a.delegatedBy;
  if (a.signerType !== null) o.signer_type = a.signerType;
  return o;
}

/** Canonical signed bytes: JCS (RFC 8785) of `signedObject`, UTF-8. */
export function attestationSignedBytes(a: Attestation): Uint8Array {
  return canonicalBytes(signedObject(a));
}

/** The wire form of a decoded attestation (lowercase hex, re-printed timestamps, empty signatures as ""). */
export function encodeAttestation(a: Attestation): AttestationWire {
  const w: AttestationWire = {
    version: a.version,
    rid: a.rid,
    issuer: a.issuer,
    subject: a.subject,
    device_public_key: encodeHex(a.devicePublicKey),
    identity_signature: a.identitySignature === null ? '' : encodeHex(a.identitySignature),
    device_signature: a.deviceSignature === null ? '' : encodeHex(a.deviceSignature),
    timestamp: time(a.timestamp),
  };
  if (a.expiresAt !== null) w.expires_at = time(a.expiresAt);
  if (a.revokedAt !== null) w.revoked_at = time(a.revokedAt);
  if (a.note !== null) w.note = a.note;
  if (a.payload !== null) w.payload = a.payload;
  if (a.role !== null) w.role = a.role;
  if (a.capabilities.length > 0) w.capabilities = [...a.capabilities];
  if (a.delegatedBy !== null) w.delegated_by = a.delegatedBy;
  if (a.signerType !== null) w.signer_type = a.signerType;
  return w;
}

/** Fields of a new attestation; the signatures are made by `signAttestation`. */
export type UnsignedAttestation = Omit<Attestation, 'identitySignature' | 'deviceSignature'>;

/**
 * Sign an attestation (issuer key = root key for link 0, the previous link's device key after;
 * device key = the key of `devicePublicKey`). For clients, demos and tests.
 */
export function signAttestation(fields: UnsignedAttestation, issuerKey: KeyObject, deviceKey: KeyObject): Attestation {
  const unsigned: Attestation = { ...fields, identitySignature: null, deviceSignature: null };
  const bytes = attestationSignedBytes(unsigned);
  return { ...unsigned, identitySignature: signEd25519(issuerKey, bytes), deviceSignature: signEd25519(deviceKey, bytes) };
}
