/**
 * RFC 9162 proof verification written once, for both hash back ends: the server's synchronous
 * node:crypto SHA-256 (src/tlog/merkle.ts) and the verifier SDK's asynchronous WebCrypto one
 * (src/verify/merkle.ts). A walk is a generator that yields each pair of child hashes to combine
 * and is resumed with their interior-node hash SHA-256(0x01 ‖ left ‖ right); it returns why the
 * proof fails, or null when it verifies. The caller drives it with its own hashing.
 *
 * No node: built-ins (nor imports that have them), so the portable verifier can use it in a browser.
 */
import { equalBytes } from '../encoding/portable.ts';

/** MTH({}) = SHA-256(""): the root of the empty tree (47DEQpj8…hSuFU= in base64). Do not mutate. */
export const EMPTY_ROOT: Uint8Array = Uint8Array.from([
  0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24, 0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93,
  0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
]);

/** Two child hashes (left, right) whose interior-node hash the walk needs next. */
export type ChildHashes = readonly [left: Uint8Array, right: Uint8Array];

/** Yields child pairs, is resumed with their node hash, returns the failure reason or null. */
export type ProofWalk = Generator<ChildHashes, string | null, Uint8Array>;

// Realm-independent (a Uint8Array from an iframe or a vm context is still one): the verifier SDK runs
// in browsers, where `instanceof` would refuse another realm's bytes.
export const isHash = (h: unknown): h is Uint8Array =>
  Object.prototype.toString.call(h) === '[object Uint8Array]' && (h as Uint8Array).length === 32;
const isSize = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

function isPowerOfTwo(n: number): boolean {
  let p = 1;
  while (p < n) p *= 2;
  return p === n;
}

/** RFC 9162 §2.1.3.2: the walk of an inclusion proof for `leafHash` at `index` in the tree (`size`, `root`). */
export function* inclusionWalk(
  leafHash: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): ProofWalk {
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
      r = yield [p, r];
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = yield [r, p];
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) return 'proof is too short';
  if (!equalBytes(r, root)) return 'computed root does not match';
  return null;
}

/**
 * RFC 9162 §2.1.4.2 plus the size-0 and same-size cases: the walk of a consistency proof that the
 * tree (`oldSize`, `oldRoot`) is a prefix of the tree (`newSize`, `newRoot`).
 */
export function* consistencyWalk(
  oldSize: number,
  newSize: number,
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
  proof: readonly Uint8Array[],
): ProofWalk {
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
    if (!equalBytes(oldRoot, newRoot)) return 'roots differ for the same tree size';
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
      fr = yield [c, fr];
      sr = yield [c, sr];
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = yield [sr, c];
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) return 'proof is too short';
  if (!equalBytes(fr, oldRoot)) return 'computed old root does not match';
  if (!equalBytes(sr, newRoot)) return 'computed new root does not match';
  return null;
}
