/**
 * Merkle-tree helpers for stores that read tree nodes asynchronously (the PostgreSQL driver).
 *
 * The proof code in src/tlog/merkle.ts takes a synchronous HashReader. Its sequence of reads
 * depends only on the sizes and indices asked for, never on the hash values, so a proof over an
 * asynchronous store is built in two passes: run the algorithm once with a recording reader
 * (which answers a placeholder hash), fetch every recorded (level, index) in ONE query, run it
 * again with a reader over the fetched map. Still O(log n) nodes and one round trip, and the
 * proof code stays the single reference implementation.
 *
 * Appends keep the right edge of the tree in memory (the "frontier": the maximal complete subtrees
 * whose sizes are the binary digits of the tree size, at most 63 nodes), so a batch of appends
 * computes every new complete-subtree hash without reading, and the tree head is the fold of the
 * frontier — the same decomposition treeRoot uses.
 */
import { EMPTY_ROOT, hashChildren, hashLeaf } from '../tlog/hash.ts';
import type { HashReader } from '../tlog/merkle.ts';
import { nodeKey, type NodeCache } from './node-cache.ts';

export interface NodeRef {
  level: number;
  index: number;
}

export interface StoredNode extends NodeRef {
  hash: Uint8Array;
}

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
 * (one query), run `compute` again over them. `missing` builds the error thrown when a node was
 * not returned.
 */
export async function withNodes<T>(
  compute: (read: HashReader) => T,
  fetch: (nodes: NodeRef[]) => Promise<StoredNode[]>,
  missing: (level: number, index: number) => Error,
  cache?: NodeCache,
): Promise<T> {
  const got = new Map<number, Uint8Array>();
  const absent: NodeRef[] = [];
  for (const n of nodesRead(compute)) {
    const h = cache?.get(n.level, n.index);
    if (h === undefined) absent.push(n);
    else got.set(nodeKey(n.level, n.index), h);
  }
  if (absent.length > 0) {
    for (const n of await fetch(absent)) {
      got.set(nodeKey(n.level, n.index), n.hash);
      cache?.set(n.level, n.index, n.hash);
    }
  }
  return compute((level, index) => {
    const h = got.get(nodeKey(level, index));
    if (h === undefined) throw missing(level, index);
    return h;
  });
}

/** The nodes of the frontier of a tree of `size` leaves, left (highest level) to right. */
export function frontierRefs(size: number): NodeRef[] {
  const refs: NodeRef[] = [];
  let start = 0;
  for (let level = 52; level >= 0; level--) {
    const width = 2 ** level;
    if (size - start >= width) {
      refs.push({ level, index: start / width });
      start += width;
    }
  }
  return refs;
}

/** The right edge of the tree, appended to in memory; records every node and entry it creates. */
export class Frontier {
  private readonly stack: StoredNode[];
  private n: number;
  readonly newNodes: StoredNode[] = [];
  readonly newEntries: { index: number; entry: Uint8Array }[] = [];

  /** `nodes` are the frontier of `size` (as listed by frontierRefs), hashes included. */
  constructor(size: number, nodes: StoredNode[]) {
    const refs = frontierRefs(size);
    if (nodes.length !== refs.length || refs.some((r, i) => nodes[i]!.level !== r.level || nodes[i]!.index !== r.index)) {
      throw new RangeError(`frontier of size ${size} must be ${JSON.stringify(refs)}`);
    }
    this.n = size;
    this.stack = nodes.map((x) => ({ ...x }));
  }

  get size(): number {
    return this.n;
  }

  /** Append one entry; returns its index. Stores its leaf hash and every subtree it completes. */
  append(entry: Uint8Array): number {
    const i = this.n;
    this.newEntries.push({ index: i, entry });
    let node: StoredNode = { level: 0, index: i, hash: hashLeaf(entry) };
    this.newNodes.push(node);
    while (this.stack.length > 0 && this.stack[this.stack.length - 1]!.level === node.level) {
      const left = this.stack.pop()!;
      node = { level: node.level + 1, index: left.index / 2, hash: hashChildren(left.hash, node.hash) };
      this.newNodes.push(node);
    }
    this.stack.push(node);
    this.n++;
    return i;
  }

  /** The current right edge (after this transaction's appends). */
  nodes(): readonly StoredNode[] {
    return this.stack;
  }

  /** The root: the frontier folded from the right (the RFC 6962 shape). */
  root(): Uint8Array {
    if (this.stack.length === 0) return new Uint8Array(EMPTY_ROOT);
    let h = this.stack[this.stack.length - 1]!.hash;
    for (let j = this.stack.length - 2; j >= 0; j--) h = hashChildren(this.stack[j]!.hash, h);
    return h;
  }
}
