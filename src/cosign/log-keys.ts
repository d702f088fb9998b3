/**
 * What identifies a log this witness cosigns for, shared by the logs file and the logs/v0 lists:
 * its origin line, its Ed25519 signed-note vkeys (distinct by key and by name + key ID), and the
 * bound on its add-checkpoint quota.
 */
import { SIG_TYPE_ED25519, checkNoteCharacters } from '../note/signed-note.ts';
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

/** Parse one Ed25519 log vkey; throws a message string's Error on anything else. */
export function parseLogVkey(vkey: string): NoteVerifier {
  const v = parseVkey(vkey);
  if (v.type !== SIG_TYPE_ED25519) throw new Error(`vkey ${JSON.stringify(vkey)} is not an Ed25519 (type 0x01) log key`);
  return v;
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
