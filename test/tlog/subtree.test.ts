// Subtrees and subtree consistency proofs (draft-ietf-plants-merkle-tree-certs-03 §4.1, §4.4):
// the validity rule, the draft's accumulated vectors from the test-side generator, the verifier on
// every generated proof and on tampered ones, RFC 9162 agreement, and trees of 2^32 and 2^53 − 1
// leaves. Vectors: research/pq-cosign.md §2.5 (draft -05 Appendix C.1/C.3, which for non-empty
// subtrees match -03).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { decodeBase64, encodeBase64 } from '../../src/encoding/base64.ts';
import { bitCeil, isValidSubtree, subtreeConsistencyFailure, verifySubtreeConsistency } from '../../src/tlog/subtree.ts';
import { MAX_TREE_SIZE, consistencyProof, inclusionProof, memoryHashReader } from '../../src/tlog/merkle.ts';
import { hashLeaf } from '../../src/tlog/hash.ts';
import { byteTree, subtreeConsistencyProof, uniformTree } from '../helpers/subtree-proofs.ts';
import type { Tree } from '../helpers/subtree-proofs.ts';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

function flipped(proof: readonly Uint8Array[], i: number, bit: number): Uint8Array[] {
  return proof.map((h, j) => {
    if (j !== i) return h;
    const c = Uint8Array.from(h);
    c[bit >> 3]! ^= 1 << (bit & 7);
    return c;
  });
}

let rotation = 0;

/**
 * The proof verifies, and fails with a bit flipped (in a rotating element, at a rotating bit), with
 * one hash more or one less. `thorough`: also the first and last elements flipped, the first hash
 * missing, and another subtree hash or root.
 */
function checkProof(tree: Tree, start: bigint, end: bigint, where: string, proof: Uint8Array[], thorough: boolean): number {
  const node = tree.mth(start, end);
  const root = tree.mth(0n, tree.size);
  const verify = (p: readonly Uint8Array[], h = node, r = root): boolean => verifySubtreeConsistency(start, end, h, tree.size, r, p);
  assert.equal(subtreeConsistencyFailure(start, end, node, tree.size, root, proof), null, where);
  rotation++;
  const tampered = proof.length === 0 ? [] : thorough ? [0, proof.length - 1, rotation % proof.length] : [rotation % proof.length];
  for (const i of new Set(tampered)) assert.equal(verify(flipped(proof, i, (rotation * 37) % 256)), false, `${where}: bit flipped in ${i}`);
  assert.equal(verify([...proof, proof[0] ?? root]), false, `${where}: extra hash`);
  if (proof.length > 0) assert.equal(verify(proof.slice(0, -1)), false, `${where}: last hash missing`);
  if (!thorough) return proof.length;
  assert.equal(verify([...proof, new Uint8Array(32)]), false, `${where}: extra zero hash`);
  if (proof.length > 0) assert.equal(verify(proof.slice(1)), false, `${where}: first hash missing`);
  const otherHash = Uint8Array.from(node);
  otherHash[0]! ^= 0x80;
  assert.equal(verify(proof, otherHash), false, `${where}: wrong subtree hash`);
  assert.equal(verify(proof, node, otherHash), false, `${where}: wrong root`);
  return proof.length;
}

void test('valid subtrees (-03 §4.1): research §2.5 cases, empty subtrees refused, BigInt beyond 2^53', () => {
  const cases: [bigint, bigint, boolean][] = [
    [3n, 5n, false],
    [16n, 100n, false],
    [6n, 9n, false],
    [8n, 16n, true],
    [8n, 13n, true],
    [12n, 16n, true],
    [0n, 1n, true],
    [0n, 7n, true],
    [0n, 100n, true],
    [5n, 6n, true],
    [4n, 4n, false], // empty: valid only after -05; tlog-witness pins -03
    [0n, 0n, false],
    [5n, 4n, false],
    [-2n, 2n, false],
    [1n << 32n, (1n << 32n) + 4n, true],
    [(1n << 32n) + 2n, (1n << 32n) + 4n, true],
    [(1n << 32n) + 2n, (1n << 32n) + 5n, false],
    [1n << 62n, 1n << 63n, true],
    [(1n << 62n) + 1n, 1n << 63n, false],
    [0n, (1n << 64n) - 1n, true], // BIT_CEIL is 2^64: no overflow in BigInt
  ];
  for (const [s, e, want] of cases) assert.equal(isValidSubtree(s, e), want, `[${s}, ${e})`);
  assert.equal(bitCeil(0n), 1n);
  assert.equal(bitCeil(5n), 8n);
  assert.equal(bitCeil(8n), 8n);
  assert.equal(bitCeil((1n << 63n) + 1n), 1n << 64n);
});

void test('-05 Appendix C.1 accumulated subtree hashes (94a95384…) from the generator', () => {
  const tree = byteTree(130);
  const acc = createHash('sha256');
  let count = 0;
  for (let end = 1n; end <= 130n; end++) {
    for (let start = 0n; start < end; start++) {
      if (!isValidSubtree(start, end)) continue;
      acc.update(`[${start}, ${end}) ${hex(tree.mth(start, end))}\n`);
      count++;
    }
  }
  assert.equal(acc.digest('hex'), '94a95384a8c69acea9b50d035a58285b3a777cb7a724005faa5e1f1e1190007f');
  assert.ok(count > 500, `${count} subtrees`);
});

void test('-05 Appendix C.3 accumulated consistency proofs (c586ebbb…); every proof verifies, tampered ones fail', () => {
  const acc = createHash('sha256');
  let proofs = 0;
  let hashes = 0;
  for (let n = 0; n <= 130; n++) {
    const tree = byteTree(n);
    for (let end = 1n; end <= BigInt(n); end++) {
      for (let start = 0n; start < end; start++) {
        if (!isValidSubtree(start, end)) continue;
        const proof = subtreeConsistencyProof(tree, start, end);
        acc.update(`[${start}, ${end}) ${n}${proof.map((h) => ` ${hex(h)}`).join('')}\n`);
        hashes += checkProof(tree, start, end, `[${start}, ${end}) in ${n}`, proof, n <= 40);
        proofs++;
      }
    }
  }
  assert.equal(acc.digest('hex'), 'c586ebbb73a5621baf2140095d87dde934e3b6503a562a1a5215b8209edd083d');
  assert.equal(proofs, 34247); // research §2.5
  assert.ok(hashes > proofs);
});

void test('research §2.5 explicit cases (leaves d[i] = byte i)', () => {
  const cases = [
    {
      start: 4n,
      end: 8n,
      n: 14,
      hash: 'wf5Csz67jop+SpCrxIHHQ04r4Cz/L2oY1/+rTx4liRs=',
      root: 'pjSxv7zt/y45/+aSAblIZGIQ9OlCvvAbPP4eUWXJU9Y=',
      proof: ['m81RJAr0AFFo8DMSG6hb5abtTw5qX6wmIGZym4+/3ss=', 'v40GUF3fyAOIRLVB1QjEcoGoO1RpX+8XANB52/D07kM='],
    },
    {
      start: 8n,
      end: 13n,
      n: 14,
      hash: 'zHN22R/ntnIJswWRWyGrSg8AcLQFgsdOxALoB0kSpR0=',
      root: 'pjSxv7zt/y45/+aSAblIZGIQ9OlCvvAbPP4eUWXJU9Y=',
      proof: [
        '/iUeTdA03PWJyEeUEgyF1gFdZcp9miwuxzyey14z2Ds=',
        'ofOGoOywYbPEagOGFiEneYWLpyWLLsy4GKZJhslygto=',
        'TidXyChl19LMAP7VCijpRxMoUzXXjNbzHT/oTxGuDmY=',
        '739JtiD2x+qbljohTaNLUCHG3tjtV3NDgKMRq3JqqQc=',
      ],
    },
    {
      start: 8n,
      end: 13n,
      n: 13,
      hash: 'zHN22R/ntnIJswWRWyGrSg8AcLQFgsdOxALoB0kSpR0=',
      root: '317hMOWiR2ANGQwxB0RY3jwNxY8LDYpqKz3U/X5WlQE=',
      proof: ['739JtiD2x+qbljohTaNLUCHG3tjtV3NDgKMRq3JqqQc='],
    },
    {
      start: 2n,
      end: 3n,
      n: 5,
      hash: '/PCmxwDdE+J0tvuo3uqN2bJuTu3eNJVxfKyECMnFF38=',
      root: 'uFW0LWww9bCH4FJmeD+9bjlPe5JgE8yqZ3AKiwxaWW8=',
      proof: [
        'WDx9+3swVdmUZVRAMqVx4QoTSxtvdpQiu7cf1/oWel0=',
        'ogv5p8wtyKCPX0FacbGfasQnurVNJO7IaLXTEDRJlTo=',
        'TzUhLRL5rSA2SSyV8f55uvTse9m+89/6dXnyKT/1RqQ=',
      ],
    },
  ];
  for (const c of cases) {
    const tree = byteTree(c.n);
    const where = `[${c.start}, ${c.end}) in ${c.n}`;
    assert.equal(encodeBase64(tree.mth(c.start, c.end)), c.hash, where);
    assert.equal(encodeBase64(tree.mth(0n, tree.size)), c.root, where);
    assert.deepEqual(subtreeConsistencyProof(tree, c.start, c.end).map(encodeBase64), c.proof, where);
    const proof = c.proof.map((p) => decodeBase64(p, 32));
    assert.ok(verifySubtreeConsistency(c.start, c.end, decodeBase64(c.hash), BigInt(c.n), decodeBase64(c.root), proof), where);
  }
});

void test('start = 0 is an RFC 9162 consistency proof, end = start + 1 an inclusion path (src/tlog/merkle.ts)', () => {
  const leaves = Array.from({ length: 70 }, (_, i) => hashLeaf(Uint8Array.of(i)));
  const read = memoryHashReader(leaves);
  for (let n = 1; n <= 70; n++) {
    const tree = byteTree(n);
    for (let end = 1; end < n; end++) {
      assert.deepEqual(subtreeConsistencyProof(tree, 0n, BigInt(end)), consistencyProof(end, n, read), `0..${end} in ${n}`);
    }
    for (let i = 0; i < n; i++) {
      assert.deepEqual(subtreeConsistencyProof(tree, BigInt(i), BigInt(i) + 1n), inclusionProof(i, n, read), `leaf ${i} in ${n}`);
    }
  }
});

void test('refusals before any hashing: invalid or out-of-tree subtrees, bad hash sizes, empty proof', () => {
  const tree = byteTree(14);
  const root = tree.mth(0n, 14n);
  const node = tree.mth(8n, 13n);
  const proof = subtreeConsistencyProof(tree, 8n, 13n);
  assert.match(subtreeConsistencyFailure(3n, 5n, node, 14n, root, proof)!, /not a valid subtree/);
  assert.match(subtreeConsistencyFailure(8n, 8n, node, 14n, root, [])!, /not a valid subtree/);
  assert.match(subtreeConsistencyFailure(8n, 16n, node, 14n, root, proof)!, /beyond the tree size/);
  assert.match(subtreeConsistencyFailure(8n, 13n, node.subarray(1), 14n, root, proof)!, /32-byte/);
  assert.match(subtreeConsistencyFailure(8n, 13n, node, 14n, root, [...proof.slice(1), new Uint8Array(31)])!, /32-byte/);
  assert.match(subtreeConsistencyFailure(8n, 13n, node, 14n, root, [])!, /empty/);
  // The same proof does not carry over to another subtree of the same size or to another tree size.
  assert.equal(verifySubtreeConsistency(8n, 13n, node, 15n, root, proof), false);
  assert.equal(verifySubtreeConsistency(0n, 5n, node, 14n, root, proof), false);
});

/** Subtrees of `tree` at every level: leftmost, one in the middle, the last one (possibly partial). */
function sampleSubtrees(n: bigint): [bigint, bigint][] {
  const out: [bigint, bigint][] = [];
  for (let w = 1n; w <= n; w *= 2n) {
    const last = ((n - 1n) / w) * w;
    const middle = (n / 2n / w) * w;
    for (const start of [0n, middle, last]) {
      const end = start + w < n ? start + w : n;
      out.push([start, end]);
      if (end - start > 2n) out.push([start, end - 1n]); // a partial subtree: start stays aligned
    }
  }
  return out;
}

void test('uniform-leaf trees around 2^32 leaves and at 2^53 − 1, the largest size a checkpoint carries', () => {
  const sizes = [(1n << 32n) - 1n, 1n << 32n, (1n << 32n) + 1n, (1n << 32n) + 5n, (1n << 33n) + 12345n, BigInt(MAX_TREE_SIZE)];
  let checked = 0;
  for (const n of sizes) {
    const tree = uniformTree(n);
    for (const [start, end] of sampleSubtrees(n)) {
      assert.ok(isValidSubtree(start, end), `[${start}, ${end})`);
      checkProof(tree, start, end, `[${start}, ${end}) in ${n}`, subtreeConsistencyProof(tree, start, end), true);
      checked++;
    }
  }
  assert.ok(checked > 500, `${checked} subtrees`);
  // Index arithmetic in 32 bits would alias [2^32, 2^32 + 4) with [0, 4): a proof for one is not one for the other.
  const n = (1n << 32n) + 5n;
  const tree = uniformTree(n);
  const high = subtreeConsistencyProof(tree, 1n << 32n, (1n << 32n) + 4n);
  const root = tree.mth(0n, n);
  assert.ok(verifySubtreeConsistency(1n << 32n, (1n << 32n) + 4n, tree.mth(0n, 4n), n, root, high));
  assert.equal(verifySubtreeConsistency(0n, 4n, tree.mth(0n, 4n), n, root, high), false);
  // At the largest size: the last leaf, and the whole tree (an empty proof).
  const max = BigInt(MAX_TREE_SIZE);
  const big = uniformTree(max);
  checkProof(big, max - 1n, max, 'last leaf of 2^53 − 1', subtreeConsistencyProof(big, max - 1n, max), true);
  assert.deepEqual(subtreeConsistencyProof(big, 0n, max), []);
  assert.ok(verifySubtreeConsistency(0n, max, big.mth(0n, max), max, big.mth(0n, max), []));
});
