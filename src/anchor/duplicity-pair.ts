/**
 * The structural rules of a duplicity proof (SPEC §3.3), on decoded anchors and with no signature
 * check and no node: import: same seed and index as the proof, heads differ with anchor_a's the
 * lower, one party key. duplicity.ts adds the party signatures with node:crypto, the verifier SDK
 * (src/verify/duplicity.ts) with WebCrypto; both apply these rules first.
 */
import { compareBytes, equalBytes } from '../encoding/portable.ts';
import type { Anchor, DuplicityProof } from './types.ts';

export type DuplicityVerdict = { valid: true } | { valid: false; reason: string };

export function samePartyKey(a: Anchor, b: Anchor): boolean {
  return a.sigParty.curve === b.sigParty.curve && equalBytes(a.sigParty.publicKey, b.sigParty.publicKey);
}

/** The first structural rule the proof breaks, or undefined when the pair is a fork (signatures still to check). */
export function duplicityPairVerdict(p: DuplicityProof): DuplicityVerdict | undefined {
  const { anchorA: a, anchorB: b } = p;
  if (!equalBytes(a.seedId, p.seedId) || !equalBytes(b.seedId, p.seedId)) return { valid: false, reason: 'an anchor is for another seed' };
  if (a.index !== p.index || b.index !== p.index) return { valid: false, reason: 'an anchor is for another index' };
  const order = compareBytes(a.head, b.head);
  if (order === 0) return { valid: false, reason: 'heads are equal: not a fork' };
  if (order > 0) return { valid: false, reason: 'anchor_a must be the anchor whose head sorts lower' };
  if (!samePartyKey(a, b)) return { valid: false, reason: 'anchors are signed by different party keys' };
  return undefined;
}
