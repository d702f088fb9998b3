/** SHA-256 helpers on node:crypto. */
import { createHash, hash } from 'node:crypto';

/** SHA-256 of the concatenation of `parts`. */
export function sha256(...parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return new Uint8Array(hash('sha256', parts[0]!, 'buffer'));
  const h = createHash('sha256');
  for (const part of parts) h.update(part);
  return new Uint8Array(h.digest());
}

/** Lowercase hex SHA-256 of the concatenation of `parts` (UTF-8 for strings). */
export function sha256Hex(...parts: (Uint8Array | string)[]): string {
  const h = createHash('sha256');
  for (const part of parts) h.update(part);
  return h.digest('hex');
}
