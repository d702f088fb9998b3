/**
 * RFC 6962 / 9162 tree hashing and inclusion proofs for the verifier SDK, with WebCrypto SHA-256
 * (async). The proof walks are src/tlog/proof-walk.ts, shared with src/tlog/merkle.ts (node:crypto);
 * test/verify runs both over the same proofs.
 */
import { consistencyWalk, inclusionWalk, type ProofWalk } from '../tlog/proof-walk.ts';
import { sha256 } from './crypto.ts';

/** SHA-256(""), the root of the empty tree. Do not mutate. */
export { EMPTY_ROOT } from '../tlog/proof-walk.ts';

/** The leaf hash of one log entry: SHA-256(0x00 ‖ entry). */
export function hashLeaf(entry: Uint8Array): Promise<Uint8Array> {
  return sha256(Uint8Array.of(0x00), entry);
}

/** Run a proof walk (src/tlog/proof-walk.ts) with WebCrypto hashing. */
async function runWalk(walk: ProofWalk): Promise<string | null> {
  const node = Uint8Array.of(0x01);
  let step = walk.next();
  while (step.done !== true) step = walk.next(await sha256(node, step.value[0], step.value[1]));
  return step.value;
}

/** Why an inclusion proof fails, or null when `proof` leads from `leafHash` at `index` to `root` of a tree of `size`. */
export function inclusionFailure(
  leafHash: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): Promise<string | null> {
  return runWalk(inclusionWalk(leafHash, index, size, proof, root));
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

/**
 * Why a consistency proof fails, or null when `proof` shows the tree of `oldSize` with `oldRoot`
 * is a prefix of the tree of `newSize` with `newRoot` (RFC 9162 §2.1.4.2).
 */
export function consistencyFailure(
  oldSize: number,
  newSize: number,
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
  proof: readonly Uint8Array[],
): Promise<string | null> {
  return runWalk(consistencyWalk(oldSize, newSize, oldRoot, newRoot, proof));
}
