/**
 * Subtrees of an RFC 6962 Merkle tree and their consistency proofs, as defined by
 * draft-ietf-plants-merkle-tree-certs-03 (the revision C2SP tlog-witness sign-subtree pins):
 *
 * * §4.1: `[start, end)` is a subtree when 0 ≤ start < end and start is a multiple of
 *   BIT_CEIL(end − start) (the smallest power of two ≥ end − start). Its hash is MTH(D[start:end]).
 *   Empty subtrees (start = end), which later revisions of the draft allow, are refused.
 * * §4.4.3: a subtree consistency proof shows that the subtree `[start, end)` with hash
 *   `subtreeHash` is part of the tree (`size`, `root`). With start = 0 it is an RFC 9162 consistency
 *   proof; with end = start + 1, an inclusion proof.
 *
 * Indices are BigInt throughout (tlog-witness carries them as u64; JS bitwise operators are 32-bit
 * and Numbers lose precision above 2^53). Hashing is src/tlog/hash.ts.
 *
 * Pure: no I/O.
 */
import { hashChildren, hashEqual } from './hash.ts';
import { isHash } from './proof-walk.ts';

/** BIT_CEIL(n): the smallest power of two ≥ n (n ≥ 0; BIT_CEIL(0) = 1). */
export function bitCeil(n: bigint): bigint {
  let c = 1n;
  while (c < n) c *= 2n;
  return c;
}

/** -03 §4.1: 0 ≤ start < end and start a multiple of BIT_CEIL(end − start). */
export function isValidSubtree(start: bigint, end: bigint): boolean {
  if (start < 0n || end <= start) return false;
  return start % bitCeil(end - start) === 0n;
}

/**
 * Why `proof` is not a subtree consistency proof (-03 §4.4.3) from the subtree `[start, end)` with
 * hash `subtreeHash` to the tree (`size`, `root`); null when it verifies.
 */
export function subtreeConsistencyFailure(
  start: bigint,
  end: bigint,
  subtreeHash: Uint8Array,
  size: bigint,
  root: Uint8Array,
  proof: readonly Uint8Array[],
): string | null {
  // 1. the subtree is valid and inside the tree
  if (!isValidSubtree(start, end)) return `[${start}, ${end}) is not a valid subtree`;
  if (end > size) return `subtree end ${end} is beyond the tree size ${size}`;
  if (!isHash(subtreeHash) || !isHash(root)) return 'subtree hash and root must be 32-byte hashes';
  if (!proof.every(isHash)) return 'proof elements must be 32-byte hashes';
  // 2. node indices of the subtree's first and last leaves, and of the tree's last leaf
  let fn = start;
  let sn = end - 1n;
  let tn = size - 1n;
  const shift = (): void => {
    fn >>= 1n;
    sn >>= 1n;
    tn >>= 1n;
  };
  // 3. climb to the highest node whose hash the verifier knows or the proof starts with
  if (sn === tn) {
    while (fn !== sn) shift();
  } else {
    while (fn !== sn && (sn & 1n) === 1n) shift();
  }
  // 4. the starting hashes: the subtree hash itself, or the proof's first element
  let fr: Uint8Array;
  let sr: Uint8Array;
  let i: number;
  if (fn === sn) {
    fr = subtreeHash;
    sr = subtreeHash;
    i = 0;
  } else {
    if (proof.length === 0) return 'proof is empty';
    fr = proof[0]!;
    sr = proof[0]!;
    i = 1;
  }
  // 5. fold the rest: fr recomputes the subtree hash, sr the root
  for (; i < proof.length; i++) {
    const c = proof[i]!;
    if (tn === 0n) return 'proof is too long';
    if ((sn & 1n) === 1n || sn === tn) {
      if (fn < sn) fr = hashChildren(c, fr);
      sr = hashChildren(c, sr);
      while ((sn & 1n) === 0n) shift();
    } else {
      sr = hashChildren(sr, c);
    }
    shift();
  }
  // 6.
  if (tn !== 0n) return 'proof is too short';
  if (!hashEqual(fr, subtreeHash)) return 'computed subtree hash does not match';
  if (!hashEqual(sr, root)) return 'computed root does not match';
  return null;
}

/** True when `proof` is a subtree consistency proof from (`start`, `end`, `subtreeHash`) to (`size`, `root`). */
export function verifySubtreeConsistency(
  start: bigint,
  end: bigint,
  subtreeHash: Uint8Array,
  size: bigint,
  root: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  return subtreeConsistencyFailure(start, end, subtreeHash, size, root, proof) === null;
}
