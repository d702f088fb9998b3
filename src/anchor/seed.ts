/**
 * Seed derivation (SPEC §3.1): seed_id = SHA-256("auths-anchor/seed/v1" ‖ u64be(len r) ‖ r ‖
 * u64be(len a) ‖ a ‖ u64be(len s) ‖ s). Kept apart from messages.ts, which builds the signed bytes
 * with no node: import (the browser verifier uses it); this needs node:crypto's synchronous hash.
 */
import { createHash } from 'node:crypto';

const SEED_DOMAIN = 'auths-anchor/seed/v1';

function lengthPrefixed(s: string): Buffer {
  const bytes = Buffer.from(s, 'utf8');
  const len = Buffer.alloc(8);
  len.writeBigUInt64BE(BigInt(bytes.length));
  return Buffer.concat([len, bytes]);
}

/** Seed id of (root, agent, scope): root and agent as full `did:keri:` strings, scope the SAID. */
export function deriveSeedId(root: string, agent: string, scope: string): Uint8Array {
  return new Uint8Array(
    createHash('sha256')
      .update(SEED_DOMAIN)
      .update(lengthPrefixed(root))
      .update(lengthPrefixed(agent))
      .update(lengthPrefixed(scope))
      .digest(),
  );
}
