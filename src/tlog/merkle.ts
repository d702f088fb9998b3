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
import { EMPTY_ROOT, HASH_SIZE, hashChildren, hashEqual } from './hash.ts';

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

function isHash(h: unknown): h is Uint8Array {
  return h instanceof Uint8Array && h.length === HASH_SIZE;
}

function isSize(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

/** Why an inclusion proof fails (RFC 9162 §2.1.3.2), or null when it verifies. */
function inclusionFailure(
  leafHash: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): string | null {
  if (!isSize(index) || !isSize(size)) return 'index and size must be non-negative safe integers';
  if (index >= size) return `leaf index ${index} is not in a tree of size ${size}`;
  if (!isHash(leafHash) || !isHash(root)) return 'leaf hash and root must be 32-byte hashes';
  if (!proof.every(isHash)) return 'proof elements must be 32-byte hashes';
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) return 'proof is too long';
    if (fn % 2 === 1 || fn === sn) {
      r = hashChildren(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = hashChildren(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) return 'proof is too short';
  if (!hashEqual(r, root)) return 'computed root does not match';
  return null;
}

/** Why a consistency proof fails (RFC 9162 §2.1.4.2 plus the size-0 and same-size cases), or null. */
function consistencyFailure(
  oldSize: number,
  newSize: number,
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
  proof: readonly Uint8Array[],
): string | null {
  if (!isSize(oldSize) || !isSize(newSize)) return 'tree sizes must be non-negative safe integers';
  if (oldSize > newSize) return `old tree size ${oldSize} is larger than new tree size ${newSize}`;
  if (!isHash(oldRoot) || !isHash(newRoot)) return 'roots must be 32-byte hashes';
  if (!proof.every(isHash)) return 'proof elements must be 32-byte hashes';
  if (oldSize === 0) {
    if (proof.length !== 0) return 'proof from the empty tree must be empty';
    if (!hashEqual(oldRoot, EMPTY_ROOT)) return 'old root is not the empty-tree root';
    if (newSize === 0 && !hashEqual(newRoot, EMPTY_ROOT)) return 'new root is not the empty-tree root';
    return null;
  }
  if (oldSize === newSize) {
    if (proof.length !== 0) return 'proof between equal sizes must be empty';
    if (!hashEqual(oldRoot, newRoot)) return 'roots differ for the same tree size';
    return null;
  }
  if (proof.length === 0) return 'proof is empty';
  // When the old size is a power of two the old root is the first node of the path.
  let fn = oldSize - 1;
  let sn = newSize - 1;
  const path = isPowerOfTwo(oldSize) ? [oldRoot, ...proof] : proof;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (let i = 1; i < path.length; i++) {
    const c = path[i]!;
    if (sn === 0) return 'proof is too long';
    if (fn % 2 === 1 || fn === sn) {
      fr = hashChildren(c, fr);
      sr = hashChildren(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = hashChildren(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) return 'proof is too short';
  if (!hashEqual(fr, oldRoot)) return 'computed old root does not match';
  if (!hashEqual(sr, newRoot)) return 'computed new root does not match';
  return null;
}

function isPowerOfTwo(n: number): boolean {
  let p = 1;
  while (p < n) p *= 2;
  return p === n;
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
