/**
 * Blake3-256 digests in qb64 (code `E`): self-addressing identifiers (SAIDs) of events and
 * next-key commitments. node:crypto has no BLAKE3, hence `@noble/hashes` (SPEC §3.5).
 */
import { blake3 } from '@noble/hashes/blake3.js';
import { encodeQb64 } from './qb64.ts';

const utf8 = new TextEncoder();

/** `E` + base64url of BLAKE3-256(bytes): the qb64 digest KERI uses for SAIDs and commitments. */
export function blake3Qb64(bytes: Uint8Array): string {
  return encodeQb64('E', blake3(bytes));
}

/**
 * The next-key commitment to a key: the digest of its qb64 TEXT (keripy `Diger(ser=verfer.qb64b)`),
 * not of its raw bytes (research §1.6).
 */
export function keyCommitment(keyQb64: string): string {
  return blake3Qb64(utf8.encode(keyQb64));
}

/** The placeholder `d` (and self-addressing `i`) carry while the SAID is computed. */
export const SAID_PLACEHOLDER = '#'.repeat(44);
