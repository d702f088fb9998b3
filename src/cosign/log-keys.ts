/**
 * What identifies a log this witness cosigns for, shared by the logs file and the logs/v0 lists:
 * its origin line, its signed-note vkeys (distinct by key and by name + key ID), and the bound on
 * its add-checkpoint quota. Log keys are type 0x01 (Ed25519 over the note text) or 0x06 (ML-DSA-44,
 * the log's `subtree/v1` line; SPEC §5.3); 0x04 and other types are refused.
 */
import { decodeBase64 } from '../encoding/base64.ts';
import { NoteError } from '../note/errors.ts';
import { SIG_TYPE_ED25519, checkNoteCharacters } from '../note/signed-note.ts';
import type { NoteVerifier } from '../note/vkey.ts';
import { parseVkey } from '../note/vkey.ts';

/** Largest accepted qpd (10⁹/day ≈ 11 574/s: beyond any witness). */
export const MAX_QPD = 1_000_000_000;

/** Signed-note type of ML-DSA-44 keys (SPEC §5.1). */
export const SIG_TYPE_MLDSA44 = 0x06;

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

/** The signature type byte a vkey declares (undefined when it has none); no other check. */
function declaredType(vkey: string): number | undefined {
  const i1 = vkey.indexOf('+');
  const i2 = i1 < 0 ? -1 : vkey.indexOf('+', i1 + 1);
  if (i2 < 0) return undefined;
  try {
    return decodeBase64(vkey.slice(i2 + 1))[0];
  } catch {
    return undefined;
  }
}

const hex2 = (t: number): string => `0x${t.toString(16).padStart(2, '0')}`;

/**
 * Parse one log vkey: type 0x01 or 0x06 with a matching key ID. A 0x06 key the note module cannot
 * verify here (no ML-DSA-44 in this runtime) is `mldsa_unsupported`. Pure.
 */
export function resolveLogKey(vkey: string): LogKeyResult {
  let v: NoteVerifier;
  try {
    v = parseVkey(vkey);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    if (e instanceof NoteError && e.code === 'unsupported_key_type') {
      if (declaredType(vkey) === SIG_TYPE_MLDSA44) {
        return { ok: false, code: 'mldsa_unsupported', message: 'ML-DSA-44 (type 0x06) log keys are not supported by this runtime' };
      }
      return { ok: false, code: 'unsupported_key_type', message: `${message}: log keys are type 0x01 or 0x06` };
    }
    return { ok: false, code: 'invalid_vkey', message };
  }
  const type: number = v.type;
  if (type !== SIG_TYPE_ED25519 && type !== SIG_TYPE_MLDSA44) {
    return {
      ok: false,
      code: 'unsupported_key_type',
      message: `vkey ${JSON.stringify(vkey)} is type ${hex2(type)}, not an Ed25519 (type 0x01) or ML-DSA-44 (type 0x06) log key`,
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

/** Keys of one origin: distinct, and no two with the same name and key ID (signed-note lookup is by both). */
export function addVerifier(into: NoteVerifier[], v: NoteVerifier): string | null {
  for (const w of into) {
    if (w.vkey === v.vkey) return `duplicate key ${v.vkey}`;
    if (w.name === v.name && w.keyId === v.keyId) return `keys ${w.vkey} and ${v.vkey} share key name and key ID`;
  }
  into.push(v);
  return null;
}
