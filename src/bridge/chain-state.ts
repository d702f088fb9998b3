/**
 * The chain commitment of the freshness gate (SPEC §7.2 rev 4 "Commitment"), pure:
 *
 *   link hash     h_i = SHA-256(link i's signed bytes, §7)
 *   chain digest  D = SHA-256("auths-bridge/chain/v1\n" ‖ u8(n) ‖ h_0 ‖ … ‖ h_{n−1})   (1 ≤ n ≤ 8)
 *   tree          RFC 6962 over the leaf data D_0 … D_{m−1} of the party's live chains (1 ≤ m ≤ 2^20);
 *                 the anchor's `head` is its root
 *   proof         RFC 9162 §2.1.3 inclusion: `leaf_index`, `tree_size`, ≤ 20 base64 `hashes`
 *
 * `token-bridge chain-state build` writes `{"v":"auths-bridge/chain-state/v1","head","tree_size",
 * "chains":[{"digest","leaf_index","hashes"}]}` (head and digest hex, hashes base64).
 */
import { createHash } from 'node:crypto';
import { hashLeaf } from '../tlog/hash.ts';
import { inclusionProof, memoryHashReader, treeRoot, verifyInclusion } from '../tlog/merkle.ts';
import { decodeBase64, encodeBase64 } from '../encoding/base64.ts';
import { encodeHex } from '../encoding/hex.ts';
import { attestationSignedBytes, type Attestation } from './attestation.ts';
import { MAX_CHAIN_LINKS } from './chain.ts';

export const CHAIN_DIGEST_TAG = 'auths-bridge/chain/v1\n';
export const CHAIN_STATE_V = 'auths-bridge/chain-state/v1';
export const MAX_TREE_SIZE = 2 ** 20;
export const MAX_PROOF_HASHES = 20;

const sha256 = (...parts: Uint8Array[]): Uint8Array => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};

/** D over the links' signed bytes (1..8 links). */
export function chainDigest(linksSignedBytes: readonly Uint8Array[]): Uint8Array {
  const n = linksSignedBytes.length;
  if (n < 1 || n > MAX_CHAIN_LINKS) throw new RangeError(`a chain has 1..${MAX_CHAIN_LINKS} links, got ${n}`);
  return sha256(Buffer.from(CHAIN_DIGEST_TAG, 'utf8'), Uint8Array.of(n), ...linksSignedBytes.map((b) => sha256(b)));
}

/** D of a decoded attestation chain (root → leaf). */
export function attestationChainDigest(chain: readonly Attestation[]): Uint8Array {
  return chainDigest(chain.map((a) => attestationSignedBytes(a)));
}

export interface ChainInclusion {
  leaf_index: number;
  tree_size: number;
  /** base64 */
  hashes: string[];
}

export interface ChainStateDocument {
  v: typeof CHAIN_STATE_V;
  /** hex: the anchor's `head` */
  head: string;
  tree_size: number;
  chains: ({ digest: string } & ChainInclusion)[];
}

/** The tree over the chain digests, in the party's order, with every chain's inclusion proof. */
export function buildChainState(digests: readonly Uint8Array[]): ChainStateDocument {
  const m = digests.length;
  if (m < 1 || m > MAX_TREE_SIZE) throw new RangeError(`a chain-state tree holds 1..${MAX_TREE_SIZE} chains, got ${m}`);
  const read = memoryHashReader(digests.map((d) => hashLeaf(d)));
  const head = treeRoot(m, read);
  return {
    v: CHAIN_STATE_V,
    head: encodeHex(head),
    tree_size: m,
    chains: digests.map((d, i) => ({
      digest: encodeHex(d),
      leaf_index: i,
      tree_size: m,
      hashes: inclusionProof(i, m, read).map((h) => encodeBase64(h)),
    })),
  };
}

/** Why `proof` does not put `digest` at its index of a tree rooted at `head`, or null when it does (G5). */
export function chainInclusionFailure(digest: Uint8Array, proof: ChainInclusion, head: Uint8Array): string | null {
  const { leaf_index: index, tree_size: size, hashes } = proof;
  if (!Number.isSafeInteger(size) || size < 1 || size > MAX_TREE_SIZE) return `tree_size must be 1..${MAX_TREE_SIZE}`;
  if (!Number.isSafeInteger(index) || index < 0 || index >= size) return `leaf_index must be 0..tree_size − 1`;
  if (hashes.length > MAX_PROOF_HASHES) return `at most ${MAX_PROOF_HASHES} proof hashes`;
  let path: Uint8Array[];
  try {
    path = hashes.map((h) => {
      return decodeBase64(h, 32);
    });
  } catch {
    return 'every proof hash must be 32 bytes of base64';
  }
  return verifyInclusion(hashLeaf(digest), index, size, path, head)
    ? null
    : `the chain's digest ${encodeHex(digest)} is not at leaf ${index} of a ${size}-chain tree with head ${encodeHex(head)}`;
}
