/**
 * Proofs from stored complete-subtree hashes, and the inclusion material returned with every
 * co-signed anchor.
 *
 * The proof code in src/tlog/merkle.ts takes a synchronous HashReader; stores read asynchronously.
 * Its sequence of reads depends only on the sizes and indices asked for, never on the hash values,
 * so a proof is built in two passes: run the algorithm once with a recording reader (answering a
 * placeholder hash), fetch every recorded node not in the cache in ONE store call, run it again
 * over the fetched nodes. O(log n) nodes, at most one round trip, and merkle.ts stays the single
 * reference implementation.
 */
import { encodeBase64 } from '../encoding/base64.ts';
import { formatTlogProofBase64 } from '../note/tlog-proof.ts';
import { StoreUnavailableError } from '../store/errors.ts';
import type { NodeRef, SignedCheckpoint, StoredNode } from '../store/types.ts';
import { nodeKey } from '../tlog/frontier.ts';
import type { HashReader } from '../tlog/merkle.ts';
import type { NodeCache } from './node-cache.ts';

export interface InclusionBody {
  log_origin: string;
  leaf_index: number;
  tree_size: number;
  hashes: string[];
  checkpoint: string;
  tlog_proof: string;
}

/** Inclusion proof of `leafIndex` against `checkpoint`, in both JSON and tlog-proof forms. */
export function formatInclusion(origin: string, leafIndex: number, checkpoint: SignedCheckpoint, proof: Uint8Array[]): InclusionBody {
  const hashes = proof.map(encodeBase64); // once, for both forms
  return {
    log_origin: origin,
    leaf_index: leafIndex,
    tree_size: checkpoint.size,
    hashes,
    checkpoint: checkpoint.note,
    tlog_proof: formatTlogProofBase64(leafIndex, hashes, checkpoint.note),
  };
}

export const missingNode = (level: number, index: number): Error =>
  new StoreUnavailableError(`store: missing tree node (${level}, ${index})`);

const PLACEHOLDER = new Uint8Array(32);

/** Run `compute` with a recording reader; returns the distinct nodes it reads. */
export function nodesRead(compute: (read: HashReader) => unknown): NodeRef[] {
  const seen = new Map<number, NodeRef>();
  compute((level, index) => {
    seen.set(nodeKey(level, index), { level, index });
    return PLACEHOLDER;
  });
  return [...seen.values()];
}

/**
 * Two-pass evaluation: record the nodes `compute` needs, fetch the ones not in `cache` with `fetch`
 * (one call), run `compute` again over them. Fetched nodes are committed, so they join the cache.
 */
export async function withNodes<T>(
  compute: (read: HashReader) => T,
  fetch: (nodes: NodeRef[]) => Promise<StoredNode[]>,
  cache: NodeCache,
): Promise<T> {
  const got = new Map<number, Uint8Array>();
  const absent: NodeRef[] = [];
  for (const n of nodesRead(compute)) {
    const h = cache.get(n.level, n.index);
    if (h === undefined) absent.push(n);
    else got.set(nodeKey(n.level, n.index), h);
  }
  if (absent.length > 0) {
    for (const n of await fetch(absent)) {
      got.set(nodeKey(n.level, n.index), n.hash);
      cache.set(n.level, n.index, n.hash);
    }
  }
  return compute((level, index) => {
    const h = got.get(nodeKey(level, index));
    if (h === undefined) throw missingNode(level, index);
    return h;
  });
}
