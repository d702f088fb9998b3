/**
 * The right edge of a Merkle tree (the "frontier"): the maximal complete subtrees whose sizes are
 * the binary digits of the tree size, left (highest level) to right, at most 53 nodes. Appending
 * to it computes every complete subtree a new leaf finishes, without reading anything else, and
 * the root is the frontier folded from the right — the decomposition treeRoot uses.
 *
 * Pure: the log (src/log) keeps one per batch and hands the nodes it created to the store as
 * bytes; stores never hash.
 */
import { EMPTY_ROOT, hashChildren, hashLeaf } from './hash.ts';

/** A complete subtree: level (0 = leaf) and index at that level. */
export interface NodeRef {
  level: number;
  index: number;
}

export interface StoredNode extends NodeRef {
  hash: Uint8Array;
}

/** A node's number: index · 64 + level (levels < 64; indices < 2^47 keep it a safe integer). */
export function nodeKey(level: number, index: number): number {
  return index * 64 + level;
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
  /** Every complete subtree the appends finished, in creation order (leaves included). */
  readonly newNodes: StoredNode[] = [];
  /** The appended entries, in order (the first at index `baseSize`). */
  readonly newEntries: Uint8Array[] = [];
  readonly baseSize: number;

  /** `nodes` are the frontier of `size` (as listed by frontierRefs), hashes included. */
  constructor(size: number, nodes: readonly StoredNode[]) {
    const refs = frontierRefs(size);
    if (nodes.length !== refs.length || refs.some((r, i) => nodes[i]!.level !== r.level || nodes[i]!.index !== r.index)) {
      throw new RangeError(`frontier of size ${size} must be ${JSON.stringify(refs)}`);
    }
    this.n = size;
    this.baseSize = size;
    this.stack = nodes.map((x) => ({ ...x }));
  }

  get size(): number {
    return this.n;
  }

  /** Append one entry; returns its index. Records its leaf hash and every subtree it completes. */
  append(entry: Uint8Array): number {
    const i = this.n;
    this.newEntries.push(entry);
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

  /** The current right edge (after the appends), as frontierRefs(size) lists it. */
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
