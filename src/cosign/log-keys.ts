/**
 * What identifies a log this witness cosigns for, shared by the logs file and the logs/v0 lists:
 * its origin line, its signed-note vkeys (distinct by key and by name + key ID) — type 0x01
 * (Ed25519 over the note text) or 0x06 (the log's ML-DSA-44 subtree/v1 signature, SPEC §5.3) — and
 * the bound on its add-checkpoint quota.
 */
import { mlDsa44Supported } from '../crypto/ml-dsa.ts';
import { NoteError } from '../note/errors.ts';
import { SIG_TYPE_ED25519, SIG_TYPE_SUBTREE_V1, checkNoteCharacters } from '../note/signed-note.ts';
import type { NoteVerifier } from '../note/vkey.ts';
import { parseVkey } from '../note/vkey.ts';

/** Largest accepted qpd (10⁹/day ≈ 11 574/s: beyond any witness). */
export const MAX_QPD = 1_000_000_000;

/** An origin line: non-empty, well-formed, no control characters (a checkpoint's first line). */
export function isValidOrigin(origin: string): boolean {
  if (origin === '' || origin.includes('\n')) return false;
  try {
    checkNoteCharacters(origin);
  } catch {
    return false;
  }
  return true;
}

/** A log vkey parsed, or why it cannot be a log key. */
export type LogKeyResult =
  | { readonly ok: true; readonly verifier: NoteVerifier }
  | { readonly ok: false; readonly code: 'invalid_vkey' | 'unsupported_key_type' | 'mldsa_unsupported'; readonly message: string };

/**
 * Parse one log vkey: type 0x01 (Ed25519) or 0x06 (ML-DSA-44); 0x04 (a witness's cosignature key)
 * and other types are refused, and so is 0x06 on a runtime without ML-DSA-44 (mldsa_unsupported).
 * Pure.
 */
export function resolveLogKey(vkey: string): LogKeyResult {
  let v: NoteVerifier;
  try {
    v = parseVkey(vkey);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    const unsupported = e instanceof NoteError && e.code === 'unsupported_key_type';
    return { ok: false, code: unsupported ? 'unsupported_key_type' : 'invalid_vkey', message };
  }
  if (v.type === SIG_TYPE_SUBTREE_V1) {
    if (mlDsa44Supported()) return { ok: true, verifier: v };
    return {
      ok: false,
      code: 'mldsa_unsupported',
      message: `vkey ${JSON.stringify(vkey.slice(0, 60))}…: ML-DSA-44 log key, but this runtime has no ML-DSA-44 (mldsa_unsupported)`,
    };
  }
  if (v.type !== SIG_TYPE_ED25519) {
    return {
      ok: false,
      code: 'unsupported_key_type',
      message: `vkey ${JSON.stringify(vkey)} is not a log key: type 0x01 (Ed25519) or 0x06 (ML-DSA-44) only`,
    };
  }
  return { ok: true, verifier: v };
}

/** Parse one log vkey (the logs file); throws a message string's Error on anything else. */
export function parseLogVkey(vkey: string): NoteVerifier {
  const r = resolveLogKey(vkey);
  if (!r.ok) throw new Error(r.message);
  return r.verifier;
}

/** subtree/v1 (ML-DSA-44) messages carry the origin behind a one-byte length. */
export const MAX_MLDSA_ORIGIN_BYTES = 255;

/** An origin an ML-DSA-44 cosign key can sign for: at most 255 bytes of UTF-8. */
export function fitsMlDsaOrigin(origin: string): boolean {
  return new TextEncoder().encode(origin).length <= MAX_MLDSA_ORIGIN_BYTES;
}

/** Keys of one origin: distinct, and no two with the same name and key ID (signed-note lookup is by both). */
export function addVerifier(into: NoteVerifier[], v: NoteVerifier): string | null {
  for (const w of into) {
    if (w.vkey === v.vkey) return `duplicate key ${v.vkey}`;
    if (w.name === v.name && w.keyId === v.keyId) return `keys ${w.vkey} and ${v.vkey} share key name and key ID`;
  }
  into.push(v);
  return null;
}
