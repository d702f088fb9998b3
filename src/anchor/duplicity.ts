/**
 * Duplicity proofs (SPEC §3.3): two anchors of one seed at one index with different heads, signed
 * by the same party key. Verifiable offline: nothing but the two anchors is needed.
 */
import { Buffer } from 'node:buffer';
import { canonicalBytes } from '../encoding/jcs.ts';
import { encodeDuplicityProof } from './codec.ts';
import { AnchorError } from './errors.ts';
import { DUPLICITY_V } from './messages.ts';
import { verifyPartySignature } from './party-signature.ts';
import type { Anchor, AnchorWire, DuplicityProof } from './types.ts';

const eq = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(a, b) === 0;

export function samePartyKey(a: Anchor, b: Anchor): boolean {
  return a.sigParty.curve === b.sigParty.curve && eq(a.sigParty.publicKey, b.sigParty.publicKey);
}

/** Build the proof (anchor_a = lower head). Throws AnchorError when the pair is not a fork. */
export function makeDuplicityProof(x: Anchor, y: Anchor): DuplicityProof {
  if (!eq(x.seedId, y.seedId) || x.index !== y.index) throw new AnchorError('not_duplicity', 'anchors are for different seeds or indices');
  const order = Buffer.compare(x.head, y.head);
  if (order === 0) throw new AnchorError('not_duplicity', 'anchors have the same head');
  if (!samePartyKey(x, y)) throw new AnchorError('not_duplicity', 'anchors are signed by different party keys');
  const [anchorA, anchorB] = order < 0 ? [x, y] : [y, x];
  return { seedId: x.seedId, index: x.index, anchorA, anchorB };
}

export type DuplicityVerdict = { valid: true } | { valid: false; reason: string };

/** Offline verification: same seed and index, heads differ (a < b), same party key, both signatures valid. */
export function verifyDuplicityProof(p: DuplicityProof): DuplicityVerdict {
  const { anchorA: a, anchorB: b } = p;
  if (!eq(a.seedId, p.seedId) || !eq(b.seedId, p.seedId)) return { valid: false, reason: 'an anchor is for another seed' };
  if (a.index !== p.index || b.index !== p.index) return { valid: false, reason: 'an anchor is for another index' };
  const order = Buffer.compare(a.head, b.head);
  if (order === 0) return { valid: false, reason: 'heads are equal: not a fork' };
  if (order > 0) return { valid: false, reason: 'anchor_a must be the anchor whose head sorts lower' };
  if (!samePartyKey(a, b)) return { valid: false, reason: 'anchors are signed by different party keys' };
  if (!verifyPartySignature(a)) return { valid: false, reason: 'anchor_a party signature does not verify' };
  if (!verifyPartySignature(b)) return { valid: false, reason: 'anchor_b party signature does not verify' };
  return { valid: true };
}

/** The log entry for a duplicity proof (SPEC §4): the proof's JSON plus `v`, with `cumulative` as decimal strings. */
export function duplicityEntry(p: DuplicityProof): Uint8Array {
  const w = encodeDuplicityProof(p);
  const anchor = (x: AnchorWire): AnchorWire => ({ ...x, cumulative: String(x.cumulative) });
  return canonicalBytes({ v: DUPLICITY_V, seed_id: w.seed_id, index: w.index, anchor_a: anchor(w.anchor_a), anchor_b: anchor(w.anchor_b) });
}
