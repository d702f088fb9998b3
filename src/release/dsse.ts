/**
 * DSSE (Dead Simple Signing Envelope, secure-systems-lab/dsse protocol.md v1.0.0 and envelope.md)
 * with Ed25519 signatures. Pure: no I/O.
 *
 *   PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
 *
 * (LEN = ASCII decimal byte length, no leading zeros). The signature is Ed25519 over PAE(UTF-8 of
 * payloadType, payload bytes), verified with the product's one strict verifier (verifyEd25519).
 * `keyid` is an unauthenticated hint (DSSE): we write the lowercase hex SHA-256 of the raw 32-byte
 * public key, and on verification only use it to skip signatures that name another key.
 * Base64: we write standard padded base64; on input either standard or URL-safe alphabet, padded or
 * not, is accepted (DSSE: verifiers MUST accept either), but it must be canonical (no junk, no set
 * trailing bits).
 */
import type { KeyObject } from 'node:crypto';
import { ed25519PublicKeyBytes, signEd25519, verifyEd25519 } from '../crypto/ed25519.ts';
import { sha256Hex } from '../crypto/sha256.ts';
import { decodeBase64url, encodeBase64 } from '../encoding/base64.ts';
import { BuildError } from './errors.ts';
import { isJsonObject } from '../encoding/json.ts';

export interface DsseSignature {
  keyid?: string;
  sig: string;
}

export interface DsseEnvelope {
  payloadType: string;
  payload: string;
  signatures: DsseSignature[];
}

const utf8 = new TextEncoder();

/** DSSE pre-authentication encoding of (payloadType, body). */
export function pae(payloadType: string, body: Uint8Array): Uint8Array {
  const type = utf8.encode(payloadType);
  const head = utf8.encode(`DSSEv1 ${type.length} `);
  const mid = utf8.encode(` ${body.length} `);
  const out = new Uint8Array(head.length + type.length + mid.length + body.length);
  out.set(head, 0);
  out.set(type, head.length);
  out.set(mid, head.length + type.length);
  out.set(body, head.length + type.length + mid.length);
  return out;
}

/** The key ID we write: lowercase hex SHA-256 of the raw 32-byte Ed25519 public key. */
export function ed25519KeyId(publicKey: Uint8Array): string {
  return sha256Hex(publicKey);
}

/** Sign `payload` as a one-signature DSSE envelope. */
export function signEnvelope(payloadType: string, payload: Uint8Array, privateKey: KeyObject): DsseEnvelope {
  const sig = signEd25519(privateKey, pae(payloadType, payload));
  return {
    payloadType,
    payload: encodeBase64(payload),
    signatures: [{ keyid: ed25519KeyId(ed25519PublicKeyBytes(privateKey)), sig: encodeBase64(sig) }],
  };
}

const DSSE_B64_RE = /^(?:([A-Za-z0-9+/]*)|([A-Za-z0-9_-]*))(={0,2})$/;

/** Decode DSSE base64: standard or URL-safe alphabet (not mixed), padding optional but exact when present, canonical. */
export function decodeDsseBase64(text: string, what: string): Uint8Array {
  const m = DSSE_B64_RE.exec(text);
  const body = m === null ? undefined : (m[1] ?? m[2]);
  const pad = m?.[3] ?? '';
  if (body === undefined || body.length % 4 === 1 || (pad !== '' && (body.length + pad.length) % 4 !== 0)) {
    throw new BuildError('malformed_envelope', `${what} is not base64`);
  }
  try {
    return decodeBase64url(body.replaceAll('+', '-').replaceAll('/', '_'));
  } catch {
    throw new BuildError('malformed_envelope', `${what} is not canonical base64`);
  }
}

function onlyKeys(v: Record<string, unknown>, allowed: readonly string[], at: string): void {
  for (const k of Object.keys(v)) {
    if (!allowed.includes(k)) throw new BuildError('malformed_envelope', `${at}: unknown member ${JSON.stringify(k)}`);
  }
}

export interface ParsedEnvelope {
  /** The envelope as it will be re-served (known members only). */
  envelope: DsseEnvelope;
  payloadType: string;
  payload: Uint8Array;
  signatures: { keyid: string | undefined; sig: Uint8Array }[];
}

/**
 * Decode a DSSE JSON envelope (already parsed JSON). Refuses unknown members, an empty signature
 * list, and signatures that are not 64 bytes (Ed25519). Does not verify signatures.
 */
export function parseEnvelope(value: unknown): ParsedEnvelope {
  if (!isJsonObject(value)) throw new BuildError('malformed_envelope', 'the DSSE envelope must be a JSON object');
  onlyKeys(value, ['payloadType', 'payload', 'signatures'], 'envelope');
  const { payloadType, payload, signatures } = value;
  if (typeof payloadType !== 'string' || payloadType === '')
    throw new BuildError('malformed_envelope', 'envelope.payloadType must be a non-empty string');
  if (typeof payload !== 'string') throw new BuildError('malformed_envelope', 'envelope.payload must be a base64 string');
  if (!Array.isArray(signatures) || signatures.length === 0)
    throw new BuildError('malformed_envelope', 'envelope.signatures must be a non-empty array');
  const decoded: ParsedEnvelope['signatures'] = [];
  const kept: DsseSignature[] = [];
  signatures.forEach((s: unknown, i) => {
    const at = `envelope.signatures[${i}]`;
    if (!isJsonObject(s)) throw new BuildError('malformed_envelope', `${at} must be an object`);
    onlyKeys(s, ['keyid', 'sig'], at);
    if (s.keyid !== undefined && typeof s.keyid !== 'string') throw new BuildError('malformed_envelope', `${at}.keyid must be a string`);
    if (typeof s.sig !== 'string') throw new BuildError('malformed_envelope', `${at}.sig must be a base64 string`);
    const sig = decodeDsseBase64(s.sig, `${at}.sig`);
    if (sig.length !== 64)
      throw new BuildError('malformed_envelope', `${at}.sig must be a 64-byte Ed25519 signature, got ${sig.length} bytes`);
    decoded.push({ keyid: s.keyid, sig });
    kept.push(s.keyid === undefined ? { sig: s.sig } : { keyid: s.keyid, sig: s.sig });
  });
  return {
    envelope: { payloadType, payload, signatures: kept },
    payloadType,
    payload: decodeDsseBase64(payload, 'envelope.payload'),
    signatures: decoded,
  };
}

/**
 * Verify a parsed envelope against one pinned Ed25519 public key: valid when at least one
 * signature verifies (signatures whose keyid names another key are skipped; an empty or absent
 * keyid is tried). Returns the key ID of the pinned key; throws BuildError `bad_signature`.
 */
export function verifyEnvelope(parsed: ParsedEnvelope, publicKey: Uint8Array): string {
  const keyid = ed25519KeyId(publicKey);
  const message = pae(parsed.payloadType, parsed.payload);
  for (const s of parsed.signatures) {
    if (s.keyid !== undefined && s.keyid !== '' && s.keyid.toLowerCase() !== keyid) continue;
    if (verifyEd25519(publicKey, message, s.sig)) return keyid;
  }
  throw new BuildError('bad_signature', `no signature of the envelope verifies under the release key (keyid ${keyid})`);
}
