/**
 * What identifies a log this witness cosigns for, shared by the logs file and the logs/v0 lists:
 * its origin line, its signed-note vkeys (distinct by key and by name + key ID) — type 0x01
 * (Ed25519 over the note text) or 0x06 (the log's ML-DSA-44 subtree/v1 signature, SPEC §5.3) — and
 * the bound on its add-checkpoint quota.
 */
import { mlDsa44Supported } from '../crypto/ml-dsa.ts';
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

/**
 * Parse one log vkey: type 0x01 (Ed25519) or 0x06 (ML-DSA-44); 0x04 (a witness's cosignature key)
 * and other types are refused, and so is 0x06 on a runtime without ML-DSA-44 (mldsa_unsupported).
 * Throws a message string's Error.
 */
export function parseLogVkey(vkey: string): NoteVerifier {
  const v = parseVkey(vkey);
  if (v.type === SIG_TYPE_SUBTREE_V1) {
    if (!mlDsa44Supported())
      throw new Error(
        `vkey ${JSON.stringify(vkey.slice(0, 60))}…: ML-DSA-44 log key, but this runtime has no ML-DSA-44 (mldsa_unsupported)`,
      );
    return v;
  }
  if (v.type !== SIG_TYPE_ED25519)
    throw new Error(`vkey ${JSON.stringify(vkey)} is not a log key: type 0x01 (Ed25519) or 0x06 (ML-DSA-44) only`);
  return v;
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
