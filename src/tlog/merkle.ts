/**
 * RFC 6962 §2.1 / RFC 9162 §2.1 Merkle trees: roots, inclusion and consistency proofs, and their
 * verifiers.
 *
 * Sizes and indices are JS numbers: non-negative safe integers, so trees hold at most
 * 2^53 − 1 entries (Number.MAX_SAFE_INTEGER). That is far beyond any log this code serves, and
 * it keeps the arithmetic exact: nothing here uses the 32-bit bitwise operators; halving is
 * Math.floor(x / 2) and parity is x % 2.
 *
 * Proofs are built from a HashReader, which returns the hash of one complete subtree (a perfect
 * binary tree of 2^level leaves, aligned on its size). A proof or root needs O(log n) reads: the
 * ranges of RFC 6962 are decomposed into complete subtrees, leaves are never read in bulk.
 */
import { ProofError, TreeError } from './errors.ts';
import { EMPTY_ROOT, HASH_SIZE, hashChildren } from './hash.ts';
import { consistencyWalk, inclusionWalk, type ProofWalk } from './proof-walk.ts';

/** Largest tree size (and one past the largest index) this module accepts: 2^53 − 1. */
export const MAX_TREE_SIZE = Number.MAX_SAFE_INTEGER;

/**
 * Returns the hash of the complete subtree at (level, index): the MTH of the leaves
 * [index · 2^level, (index + 1) · 2^level). Level 0 is a leaf hash. Readers throw when the
 * subtree is not available (outside the tree, missing tile).
 */
export type HashReader = (level: number, index: number) => Uint8Array;

function checkSize(size: number, what = 'tree size'): void {
  if (!Number.isSafeInteger(size) || size < 0) {
    throw new TreeError('tree_size_invalid', `${what} must be a non-negative safe integer`);
  }
}

function checkHash(h: Uint8Array, what: string): Uint8Array {
  if (!(h instanceof Uint8Array) || h.length !== HASH_SIZE) {
    throw new TreeError('hash_invalid', `${what} is not a ${HASH_SIZE}-byte hash`);
  }
  return h;
}

/** Largest power of two strictly less than n (n ≥ 2): the RFC's split point k. */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * MTH(D[lo:hi]) for a range that is a node of the RFC 6962 tree shape (lo aligned to a power of
 * two ≥ hi − lo, as every range in a root or proof is). The range is cut, left to right, into
 * maximal aligned complete subtrees (the binary digits of hi − lo), read once each, and folded
 * from the right. O(log n) reads.
 */
function rangeHash(lo: number, hi: number, read: HashReader): Uint8Array {
  if (hi === lo) return new Uint8Array(EMPTY_ROOT);
  const parts: Uint8Array[] = [];
  let p = lo;
  while (p < hi) {
    let level = 0;
    let width = 1;
    while (p % (width * 2) === 0 && p + width * 2 <= hi) {
      width *= 2;
      level++;
    }
    parts.push(checkHash(read(level, p / width), `subtree (${level}, ${p / width})`));
    p += width;
  }
  let h = parts[parts.length - 1]!;
  for (let i = parts.length - 2; i >= 0; i--) h = hashChildren(parts[i]!, h);
  return h;
}

/**
 * MTH of the leaf hashes, computed level by level (an odd node is carried up unchanged, which is
 * the RFC 6962 shape). O(n): a reference for tests and small trees.
 */
export function rootFromLeafHashes(leafHashes: readonly Uint8Array[]): Uint8Array {
  if (leafHashes.length === 0) return new Uint8Array(EMPTY_ROOT);
  let level = leafHashes.map((h, i) => checkHash(h, `leaf hash ${i}`));
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) next.push(hashChildren(level[i]!, level[i + 1]!));
    if (level.length % 2 === 1) next.push(level[level.length - 1]!);
    level = next;
  }
  return level[0]!;
}

/**
 * A HashReader over leaf hashes held in memory (for tests and small trees). All complete
 * subtree hashes are computed up front (about n hash operations); the array is copied.
 */
export function memoryHashReader(leafHashes: readonly Uint8Array[]): HashReader {
  const levels: Uint8Array[][] = [leafHashes.map((h, i) => checkHash(h, `leaf hash ${i}`))];
  for (;;) {
    const below = levels[levels.length - 1]!;
    if (below.length < 2) break;
    const next: Uint8Array[] = [];
    for (let i = 0; i + 1 < below.length; i += 2) next.push(hashChildren(below[i]!, below[i + 1]!));
    levels.push(next);
  }
  return (level, index) => {
    const h = Number.isSafeInteger(level) && level >= 0 ? levels[level]?.[index] : undefined;
    if (h === undefined) {
      throw new TreeError('index_out_of_range', `no complete subtree at level ${level}, index ${index}`);
    }
    return h;
  };
}

/** MTH(D[0:size]) from O(log size) complete-subtree reads. */
export function treeRoot(size: number, read: HashReader): Uint8Array {
  checkSize(size);
  return rangeHash(0, size, read);
}

/**
 * The inclusion proof PATH(index, D[0:size]) of RFC 6962 §2.1.1 (RFC 9162 §2.1.3.1): the
 * leaf's sibling first, the root's child last. O(log size) reads.
 */
export function inclusionProof(index: number, size: number, read: HashReader): Uint8Array[] {
  checkSize(size);
  if (!Number.isSafeInteger(index) || index < 0 || index >= size) {
    throw new TreeError('index_out_of_range', `leaf index ${index} is not in a tree of size ${size}`);
  }
  const proof: Uint8Array[] = [];
  let lo = 0;
  let hi = size;
  while (hi - lo > 1) {
    const k = splitPoint(hi - lo);
    if (index < lo + k) {
      proof.push(rangeHash(lo + k, hi, read));
      hi = lo + k;
    } else {
      proof.push(rangeHash(lo, lo + k, read));
      lo += k;
    }
  }
  return proof.reverse();
}

/**
 * The consistency proof PROOF(oldSize, D[0:newSize]) of RFC 6962 §2.1.2 (RFC 9162 §2.1.4.1).
 * Empty when oldSize is 0 or equals newSize. O(log newSize) reads.
 */
export function consistencyProof(oldSize: number, newSize: number, read: HashReader): Uint8Array[] {
  checkSize(oldSize, 'old tree size');
  checkSize(newSize, 'new tree size');
  if (oldSize > newSize) {
    throw new TreeError('tree_size_invalid', `old tree size ${oldSize} is larger than new tree size ${newSize}`);
  }
  if (oldSize === 0 || oldSize === newSize) return [];
  // SUBPROOF(m, D[lo:hi], b), unrolled: each step appends one hash, the base case the last.
  const proof: Uint8Array[] = [];
  let lo = 0;
  let hi = newSize;
  let complete = true; // b: D[lo:hi] so far lies on the left edge, its root is the old root
  for (;;) {
    const m = oldSize - lo;
    if (m === hi - lo) {
      if (!complete) proof.push(rangeHash(lo, hi, read));
      break;
    }
    const k = splitPoint(hi - lo);
    if (m <= k) {
      proof.push(rangeHash(lo + k, hi, read));
      hi = lo + k;
    } else {
      proof.push(rangeHash(lo, lo + k, read));
      lo += k;
      complete = false;
    }
  }
  return proof.reverse();
}

/** Run a proof walk (src/tlog/proof-walk.ts) with node:crypto hashing. */
function runWalk(walk: ProofWalk): string | null {
  let step = walk.next();
  while (step.done !== true) step = walk.next(hashChildren(step.value[0], step.value[1]));
  return step.value;
}

/** Why an inclusion proof fails (RFC 9162 §2.1.3.2), or null when it verifies. */
function inclusionFailure(
  leafHash: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): string | null {
  return runWalk(inclusionWalk(leafHash, index, size, proof, root));
}

/** Why a consistency proof fails (RFC 9162 §2.1.4.2 plus the size-0 and same-size cases), or null. */
function consistencyFailure(
  oldSize: number,
  newSize: number,
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
  proof: readonly Uint8Array[],
): string | null {
  return runWalk(consistencyWalk(oldSize, newSize, oldRoot, newRoot, proof));
}

/** RFC 9162 §2.1.3.2: true when `proof` shows leaf `leafHash` at `index` in the tree (`size`, `root`). */
export function verifyInclusion(
  leafHash: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  return inclusionFailure(leafHash, index, size, proof, root) === null;
}

/** As verifyInclusion, but throws ProofError `inclusion_proof_invalid` (with the reason) on failure. */
export function checkInclusion(leafHash: Uint8Array, index: number, size: number, proof: readonly Uint8Array[], root: Uint8Array): void {
  const why = inclusionFailure(leafHash, index, size, proof, root);
  if (why !== null) throw new ProofError('inclusion_proof_invalid', `inclusion proof invalid: ${why}`);
}

/**
 * RFC 9162 §2.1.4.2: true when `proof` shows the tree (`newSize`, `newRoot`) extends the tree
 * (`oldSize`, `oldRoot`). Edge cases: oldSize > newSize fails; oldSize 0 needs an empty proof and
 * the empty-tree root as old root; oldSize == newSize needs an empty proof and equal roots;
 * otherwise an empty proof fails and the proof length must match the sizes exactly.
 */
export function verifyConsistency(
  oldSize: number,
  newSize: number,
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  return consistencyFailure(oldSize, newSize, oldRoot, newRoot, proof) === null;
}

/** As verifyConsistency, but throws ProofError `consistency_proof_invalid` (with the reason) on failure. */
export function checkConsistency(
  oldSize: number,
  newSize: number,
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
  proof: readonly Uint8Array[],
): void {
  const why = consistencyFailure(oldSize, newSize, oldRoot, newRoot, proof);
  if (why !== null) throw new ProofError('consistency_proof_invalid', `consistency proof invalid: ${why}`);
}
