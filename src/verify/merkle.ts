/**
 * RFC 6962 / 9162 tree hashing and inclusion proofs for the verifier SDK, with WebCrypto SHA-256
 * (async). The same algorithm as src/tlog/merkle.ts (RFC 9162 §2.1.3.2); test/verify runs both
 * over the same proofs.
 */
import { equalBytes } from '../encoding/portable.ts';
import { sha256 } from './crypto.ts';

/** SHA-256(""), the root of the empty tree. Do not mutate. */
export const EMPTY_ROOT: Uint8Array = Uint8Array.from([
  0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24, 0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93,
  0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
]);

/** The leaf hash of one log entry: SHA-256(0x00 ‖ entry). */
export function hashLeaf(entry: Uint8Array): Promise<Uint8Array> {
  return sha256(Uint8Array.of(0x00), entry);
}

const isSize = (n: number): boolean => Number.isSafeInteger(n) && n >= 0;
const isHash = (h: Uint8Array): boolean => h.length === 32;

/** Why an inclusion proof fails, or null when `proof` leads from `leafHash` at `index` to `root` of a tree of `size`. */
export async function inclusionFailure(
  leafHash: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): Promise<string | null> {
  if (!isSize(index) || !isSize(size)) return 'index and size must be non-negative safe integers';
  if (index >= size) return `leaf index ${index} is not in a tree of size ${size}`;
  if (!isHash(leafHash) || !isHash(root)) return 'leaf hash and root must be 32-byte hashes';
  if (!proof.every(isHash)) return 'proof elements must be 32-byte hashes';
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  const node = Uint8Array.of(0x01);
  for (const p of proof) {
    if (sn === 0) return 'proof is too long';
    if (fn % 2 === 1 || fn === sn) {
      r = await sha256(node, p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = await sha256(node, r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) return 'proof is too short';
  if (!equalBytes(r, root)) return 'computed root does not match';
  return null;
}

/** RFC 9162 §2.1.3.2 inclusion proof verification. */
export async function verifyInclusion(
  leafHash: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): Promise<boolean> {
  return (await inclusionFailure(leafHash, index, size, proof, root)) === null;
}

const isPowerOfTwo = (n: number): boolean => {
  let p = 1;
  while (p < n) p *= 2;
  return p === n;
};

/**
 * Why a consistency proof fails, or null when `proof` shows the tree of `oldSize` with `oldRoot`
 * is a prefix of the tree of `newSize` with `newRoot` (RFC 9162 §2.1.4.2; the algorithm of
 * src/tlog/merkle.ts, with WebCrypto SHA-256).
 */
export async function consistencyFailure(
  oldSize: number,
  newSize: number,
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
  proof: readonly Uint8Array[],
): Promise<string | null> {
  if (!isSize(oldSize) || !isSize(newSize)) return 'tree sizes must be non-negative safe integers';
  if (oldSize > newSize) return `old tree size ${oldSize} is larger than new tree size ${newSize}`;
  if (!isHash(oldRoot) || !isHash(newRoot)) return 'roots must be 32-byte hashes';
  if (!proof.every(isHash)) return 'proof elements must be 32-byte hashes';
  if (oldSize === 0) {
    if (proof.length !== 0) return 'proof from the empty tree must be empty';
    if (!equalBytes(oldRoot, EMPTY_ROOT)) return 'old root is not the empty-tree root';
    if (newSize === 0 && !equalBytes(newRoot, EMPTY_ROOT)) return 'new root is not the empty-tree root';
    return null;
  }
  if (oldSize === newSize) {
    if (proof.length !== 0) return 'proof between equal sizes must be empty';
    return equalBytes(oldRoot, newRoot) ? null : 'roots differ for the same tree size';
  }
  if (proof.length === 0) return 'proof is empty';
  let fn = oldSize - 1;
  let sn = newSize - 1;
  const path = isPowerOfTwo(oldSize) ? [oldRoot, ...proof] : proof;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  const node = Uint8Array.of(0x01);
  let fr = path[0]!;
  let sr = path[0]!;
  for (let i = 1; i < path.length; i++) {
    const c = path[i]!;
    if (sn === 0) return 'proof is too long';
    if (fn % 2 === 1 || fn === sn) {
      fr = await sha256(node, c, fr);
      sr = await sha256(node, c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = await sha256(node, sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) return 'proof is too short';
  if (!equalBytes(fr, oldRoot)) return 'computed old root does not match';
  if (!equalBytes(sr, newRoot)) return 'computed new root does not match';
  return null;
}
