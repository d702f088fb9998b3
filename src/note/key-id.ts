/**
 * signed-note key IDs: SHA-256(key name ‖ 0x0A ‖ signature type ‖ public key)[:4], a big-endian
 * uint32. Apart from signed-note.ts so that the note rules carry no node: import (the verifier SDK,
 * src/verify, computes key IDs with WebCrypto's SHA-256 instead).
 */
import { sha256 } from '../crypto/sha256.ts';

const ENCODER = new TextEncoder();

/** key ID = SHA-256(key name ‖ 0x0A ‖ signature type ‖ public key)[:4], as a big-endian uint32. */
export function computeKeyId(name: string, type: number, publicKey: Uint8Array): number {
  const h = sha256(ENCODER.encode(`${name}\n`), Uint8Array.of(type), publicKey);
  return new DataView(h.buffer, h.byteOffset, 4).getUint32(0);
}
