// Test-side generator of subtree hashes and subtree consistency proofs
// (draft-ietf-plants-merkle-tree-certs-03 §4.4.1, SUBTREE_PROOF / SUBTREE_SUBPROOF), for the
// verifier in src/tlog/subtree.ts and the sign-subtree route. Trees are given as a function
// MTH(D[lo:hi]) over BigInt bounds, built on src/tlog/merkle.ts's complete-subtree HashReader:
//
//   leafTree(leafHashes)   a tree held in memory (the draft's vectors: leaf i = byte i)
//   uniformTree(n)         every leaf equal, so MTH of a range depends only on its size and trees of
//                          up to 2^53 − 1 leaves cost O(log² n) hashes (research/pq-cosign.md §3.3)
import { hashChildren, hashLeaf } from '../../src/tlog/hash.ts';
import { memoryHashReader, treeRoot } from '../../src/tlog/merkle.ts';
import type { HashReader } from '../../src/tlog/merkle.ts';

/** MTH(D[lo:hi]) of a tree of `size` leaves; only called for ranges that are subtrees (§4.1). */
export interface Tree {
  readonly size: bigint;
  mth(lo: bigint, hi: bigint): Uint8Array;
}

/**
 * MTH of the aligned range [lo, hi) (lo a multiple of BIT_CEIL(hi − lo), as every range of a
 * subtree proof is) from a reader of complete subtrees: the range's own complete subtrees are the
 * reader's, shifted by lo / 2^level.
 */
function alignedRangeHash(read: HashReader, lo: bigint, hi: bigint): Uint8Array {
  return treeRoot(Number(hi - lo), (level, index) => read(level, index + Number(lo / (1n << BigInt(level)))));
}

/** A tree whose leaf hashes are given (in memory). */
export function leafTree(leafHashes: readonly Uint8Array[]): Tree {
  const read = memoryHashReader(leafHashes);
  return { size: BigInt(leafHashes.length), mth: (lo, hi) => alignedRangeHash(read, lo, hi) };
}

/** The draft's test tree D_n: leaf i is the single byte i (i < 256). */
export function byteTree(n: number): Tree {
  return leafTree(Array.from({ length: n }, (_, i) => hashLeaf(Uint8Array.of(i))));
}

/**
 * A tree of `size` equal leaves (≤ 2^53 − 1, the largest size a checkpoint carries). A complete
 * subtree at level l has the same hash wherever it is, so the reader needs one hash per level.
 */
export function uniformTree(size: bigint, leaf: Uint8Array = hashLeaf(new TextEncoder().encode('uniform leaf'))): Tree {
  const levels: Uint8Array[] = [leaf];
  for (let l = 1; l <= 53; l++) levels.push(hashChildren(levels[l - 1]!, levels[l - 1]!));
  const read: HashReader = (level) => levels[level]!;
  return { size, mth: (lo, hi) => alignedRangeHash(read, lo, hi) };
}

/** Largest power of two strictly less than n (n ≥ 2). */
function splitPoint(n: bigint): bigint {
  let k = 1n;
  while (k * 2n < n) k *= 2n;
  return k;
}

/**
 * SUBTREE_PROOF(start, end, D_n) of -03 §4.4.1 for the tree `tree` (n = tree.size), with absolute
 * bounds [lo, hi) for the node the recursion is at. The caller gives a valid subtree, end ≤ n.
 */
export function subtreeConsistencyProof(tree: Tree, start: bigint, end: bigint): Uint8Array[] {
  if (start < 0n || end <= start || end > tree.size) throw new Error(`[${start}, ${end}) is not a subtree of a tree of ${tree.size}`);
  const outerFirst: Uint8Array[] = []; // appended on the way down; the proof lists them innermost first
  let lo = 0n;
  let hi = tree.size;
  let s = start;
  let known = true; // b: the verifier already knows the hash of this node's part of the subtree
  for (;;) {
    if (s === lo && end === hi) {
      if (!known) outerFirst.push(tree.mth(lo, hi));
      break;
    }
    const k = lo + splitPoint(hi - lo);
    if (end <= k) {
      outerFirst.push(tree.mth(k, hi));
      hi = k;
    } else if (k <= s) {
      outerFirst.push(tree.mth(lo, k));
      lo = k;
    } else {
      // start < k < end, so s = lo: the subtree's right part continues in D[k:hi]
      outerFirst.push(tree.mth(lo, k));
      lo = k;
      s = k;
      known = false;
    }
  }
  return outerFirst.reverse();
}
