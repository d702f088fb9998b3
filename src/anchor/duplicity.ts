/**
 * Duplicity proofs (SPEC §3.3): two anchors of one seed at one index with different heads, signed
 * by the same party key. Verifiable offline: nothing but the two anchors is needed.
 */
import { Buffer } from 'node:buffer';
import { canonicalBytes } from '../encoding/jcs.ts';
import { encodeDuplicityProof } from './codec.ts';
import { duplicityPairVerdict, samePartyKey, type DuplicityVerdict } from './duplicity-pair.ts';
import { AnchorError } from './errors.ts';
import { DUPLICITY_V } from './messages.ts';
import { verifyPartySignature } from './party-signature.ts';
import type { Anchor, AnchorWire, DuplicityProof } from './types.ts';

const eq = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(a, b) === 0;

export { samePartyKey, type DuplicityVerdict } from './duplicity-pair.ts';

/** Build the proof (anchor_a = lower head). Throws AnchorError when the pair is not a fork. */
export function makeDuplicityProof(x: Anchor, y: Anchor): DuplicityProof {
  if (!eq(x.seedId, y.seedId) || x.index !== y.index) throw new AnchorError('not_duplicity', 'anchors are for different seeds or indices');
  const order = Buffer.compare(x.head, y.head);
  if (order === 0) throw new AnchorError('not_duplicity', 'anchors have the same head');
  if (!samePartyKey(x, y)) throw new AnchorError('not_duplicity', 'anchors are signed by different party keys');
  const [anchorA, anchorB] = order < 0 ? [x, y] : [y, x];
  return { seedId: x.seedId, index: x.index, anchorA, anchorB };
}

/** Offline verification: same seed and index, heads differ (a < b), same party key, both signatures valid. */
export function verifyDuplicityProof(p: DuplicityProof): DuplicityVerdict {
  const structural = duplicityPairVerdict(p);
  if (structural !== undefined) return structural;
  const { anchorA: a, anchorB: b } = p;
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
