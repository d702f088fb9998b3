/**
 * The freshness verdict, as upstream auths-anchor defines it (`freshness`; see
 * ../shared/research/upstream-witness.md): given the head index of a bundle a relying party holds
 * and the index of the best finalized anchor for its seed, the bundle is `fresh` when its index is
 * at least the anchor's, `stale` when lower, and `unanchored` when there is no finalized anchor.
 * A separate label from finality: it says whether the bundle is behind what the party anchored.
 */

import { usage } from './errors.ts';

export type Freshness =
  { status: 'fresh'; anchorIndex: number } | { status: 'stale'; bundleIndex: number; anchorIndex: number } | { status: 'unanchored' };

/** `bundleIndex` defaults to 0, as upstream's; `anchorIndex` undefined or null: no finalized anchor. Other than integers ≥ 0: `usage`. */
export function freshness(bundleIndex: number | undefined, anchorIndex: number | null | undefined): Freshness {
  const b = bundleIndex ?? 0;
  const isIndex = (n: number): boolean => Number.isSafeInteger(n) && n >= 0;
  if (!isIndex(b) || (anchorIndex !== undefined && anchorIndex !== null && !isIndex(anchorIndex)))
    usage('indices are non-negative integers');
  if (anchorIndex === undefined || anchorIndex === null) return { status: 'unanchored' };
  return b >= anchorIndex ? { status: 'fresh', anchorIndex } : { status: 'stale', bundleIndex: b, anchorIndex };
}
