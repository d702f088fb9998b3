// Merkle tree (RFC 6962 §2.1 / RFC 9162 §2.1) tests.
// Vectors: ../shared/research/c2sp-and-peers.md §1.8 and Appendix B (RFC 6962 8-leaf KAT, proofs
// printed by the Go interop tool using golang.org/x/mod/sumdb/tlog), Appendix C ("leaf i"
// vectors from `gointerop vectors`), §3.3 item 1 (FiloSottile/torchwood litewitness testdata).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { decodeHex, encodeHex } from '../../src/encoding/hex.ts';
import { decodeBase64 } from '../../src/encoding/base64.ts';
import { EMPTY_ROOT, hashChildren, hashLeaf } from '../../src/tlog/hash.ts';
import {
  checkConsistency,
  checkInclusion,
  consistencyProof,
  inclusionProof,
  memoryHashReader,
  rootFromLeafHashes,
  treeRoot,
  verifyConsistency,
  verifyInclusion,
  type HashReader,
} from '../../src/tlog/merkle.ts';
import { ProofError, TreeError } from '../../src/tlog/errors.ts';

const hex = (h: Uint8Array): string => encodeHex(h);
const hexList = (hs: readonly Uint8Array[]): string[] => hs.map(hex);
const b64 = (s: string): Uint8Array => decodeBase64(s, 32);

// --- literal RFC 6962 definitions, as an independent reference --------------------------------

function kOf(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function refMth(d: readonly Uint8Array[]): Uint8Array {
  if (d.length === 0) return EMPTY_ROOT;
  if (d.length === 1) return d[0]!;
  const k = kOf(d.length);
  return hashChildren(refMth(d.slice(0, k)), refMth(d.slice(k)));
}

function refPath(m: number, d: readonly Uint8Array[]): Uint8Array[] {
  if (d.length === 1) return [];
  const k = kOf(d.length);
  return m < k ? [...refPath(m, d.slice(0, k)), refMth(d.slice(k))] : [...refPath(m - k, d.slice(k)), refMth(d.slice(0, k))];
}

function refSubproof(m: number, d: readonly Uint8Array[], b: boolean): Uint8Array[] {
  if (m === d.length) return b ? [] : [refMth(d)];
  const k = kOf(d.length);
  return m <= k
    ? [...refSubproof(m, d.slice(0, k), b), refMth(d.slice(k))]
    : [...refSubproof(m - k, d.slice(k), false), refMth(d.slice(0, k))];
}

function flipBit(h: Uint8Array, bit: number): Uint8Array {
  const out = Uint8Array.from(h);
  out[(bit >>> 3) % out.length]! ^= 1 << (bit & 7);
  return out;
}

// --- known answers -----------------------------------------------------------------------------

const KAT_LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map((h) =>
  hashLeaf(decodeHex(h)),
);
const KAT_ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];

void test('hash: empty root, leaf and node prefixes', () => {
  assert.equal(hex(EMPTY_ROOT), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.equal(hex(KAT_LEAVES[0]!), KAT_ROOTS[0]); // MTH({""}) = SHA-256(0x00)
  const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
  const d = new Uint8Array([1, 2, 3]);
  assert.equal(hex(hashLeaf(d)), sha(new Uint8Array([0, 1, 2, 3])));
  const l = hashLeaf(d);
  const r = hashLeaf(new Uint8Array());
  assert.equal(hex(hashChildren(l, r)), sha(new Uint8Array([1, ...l, ...r])));
  assert.throws(
    () => hashChildren(l, new Uint8Array(31)),
    (e) => e instanceof TreeError && e.code === 'hash_invalid',
  );
});

void test('RFC 6962 KAT: roots of sizes 0..8 (research §1.8)', () => {
  assert.deepEqual(rootFromLeafHashes([]), EMPTY_ROOT);
  const read = memoryHashReader(KAT_LEAVES);
  assert.deepEqual(treeRoot(0, read), EMPTY_ROOT);
  for (let n = 1; n <= 8; n++) {
    assert.equal(hex(rootFromLeafHashes(KAT_LEAVES.slice(0, n))), KAT_ROOTS[n - 1], `rootFromLeafHashes ${n}`);
    assert.equal(hex(treeRoot(n, read)), KAT_ROOTS[n - 1], `treeRoot ${n}`);
    assert.equal(hex(refMth(KAT_LEAVES.slice(0, n))), KAT_ROOTS[n - 1], `reference ${n}`);
  }
});

void test('RFC 6962 KAT: proofs from Appendix B', () => {
  const read = memoryHashReader(KAT_LEAVES);
  const root = (n: number): Uint8Array => decodeHex(KAT_ROOTS[n - 1]!);
  const H = {
    a: '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
    b: '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
    c: '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    d: '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
    e: 'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
    f: 'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    g: 'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    r2: 'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  };
  const consistency: [number, number, string[]][] = [
    [1, 8, [H.a, H.b, H.c]],
    [6, 8, [H.d, H.e, H.f]],
    [2, 5, [H.b, H.g]],
  ];
  for (const [m, n, want] of consistency) {
    const proof = consistencyProof(m, n, read);
    assert.deepEqual(hexList(proof), want, `consistency ${m}->${n}`);
    assert.equal(
      verifyConsistency(
        m,
        n,
        root(m),
        root(n),
        want.map((h) => decodeHex(h)),
      ),
      true,
    );
  }
  const inclusion: [number, number, string[]][] = [
    [0, 8, [H.a, H.b, H.c]],
    [5, 8, [H.g, H.e, H.f]],
    [2, 3, [H.r2]],
  ];
  for (const [i, n, want] of inclusion) {
    const proof = inclusionProof(i, n, read);
    assert.deepEqual(hexList(proof), want, `inclusion ${i} in ${n}`);
    assert.equal(
      verifyInclusion(
        KAT_LEAVES[i]!,
        i,
        n,
        want.map((h) => decodeHex(h)),
        root(n),
      ),
      true,
    );
  }
});

void test('"leaf i" vectors from Appendix C (checkpoints of size 3 and 8)', () => {
  const leaves = Array.from({ length: 8 }, (_, i) => hashLeaf(Buffer.from(`leaf ${i}`)));
  const read = memoryHashReader(leaves);
  const root3 = b64('1Pksj7uJcg6ztVZ3x9fvrd/rENEaGoSguo8aIzN/qpU=');
  const root8 = b64('xcLIIO00L92ozolra5z1uMAKIcxLIHFMxuXTwFw1JAs=');
  assert.deepEqual(treeRoot(3, read), root3);
  assert.deepEqual(treeRoot(8, read), root8);
  assert.deepEqual(leaves[5], b64('la3xW37122c4aouvvv7k0UVmKvpFB0DhhoVT6DSO06A='));
  const incl = [
    'gxFfiUeVX6/cKifn9MCFS72Nonuxs+NAXbVxya+Nvho=',
    'brzFS2cQ7gYQp/yCzeUXE9soDj3IRRW96WMqGbZaC5M=',
    'T2MQhKFXxU9U/Psj/164ZQxLoWDClbsTqYMrEJ1SZ34=',
  ].map(b64);
  assert.deepEqual(inclusionProof(5, 8, read), incl);
  assert.equal(verifyInclusion(leaves[5], 5, 8, incl, root8), true);
  const cons = [
    'qze6NNHf4pAV3nF6bVdkqPsCnDp6D1tkuTtUNRiFv3w=',
    'WL0UluFoSqySAcLmh+565PUclqiw2B7zWDYouT0800U=',
    '/F9riP+FVPdbsvnm85wxsZNtRLaSdu33sSBalVuXYeM=',
    'w+azuR86E7mkJwss2RFiOrs6eoVa9ebktxyE+ZDNxGk=',
  ].map(b64);
  assert.deepEqual(consistencyProof(3, 8, read), cons);
  assert.equal(verifyConsistency(3, 8, root3, root8, cons), true);
  assert.doesNotThrow(() => {
    checkConsistency(3, 8, root3, root8, cons);
  });
});

void test('litewitness testdata proofs (research §3.3 item 1; synthetic leaves 0x2a 0x0i 0…)', () => {
  const leaf = (i: number): Uint8Array => {
    const h = new Uint8Array(32);
    h[0] = 0x2a;
    h[1] = i;
    return h;
  };
  const root1 = b64('KgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=');
  const root3 = b64('RcCI1Nk56ZcSmIEfIn0SleqtV7uvrlXNccFx595Iwl0=');
  const root5 = b64('QrtXrQZCCvpIgsSmOsah7HdICzMLLyDfxToMql9WTjY=');
  assert.deepEqual(root1, leaf(0));
  const p13 = [b64('KgEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='), b64('KgIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=')];
  assert.equal(verifyConsistency(1, 3, root1, root3, p13), true);
  const p35 = [leaf(2), leaf(3), b64('wgiIFdZfYNv6WU1OllBKsWnLYIS/DBMqt8Uh/S4OukE='), leaf(4)];
  assert.equal(verifyConsistency(3, 5, root3, root5, p35), true);
  const bad13 = [p13[0]!, b64('KgIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABA=')];
  assert.equal(verifyConsistency(1, 3, root1, root3, bad13), false);
  // and the same trees, rebuilt from their leaf hashes
  const read = memoryHashReader([0, 1, 2, 3, 4].map(leaf));
  assert.deepEqual(treeRoot(3, read), root3);
  assert.deepEqual(treeRoot(5, read), root5);
  assert.deepEqual(consistencyProof(1, 3, read), p13);
  assert.deepEqual(consistencyProof(3, 5, read), p35);
});

// --- exhaustive small trees --------------------------------------------------------------------

const N = 64;
const LEAVES = Array.from({ length: N }, (_, i) => hashLeaf(Buffer.from(`exhaustive ${i}`)));
const READ = memoryHashReader(LEAVES);
const ROOTS = Array.from({ length: N + 1 }, (_, n) => rootFromLeafHashes(LEAVES.slice(0, n)));

void test('roots and proofs match the literal RFC definitions for every size ≤ 64', () => {
  for (let n = 0; n <= N; n++) {
    assert.deepEqual(treeRoot(n, READ), ROOTS[n], `root ${n}`);
    assert.deepEqual(refMth(LEAVES.slice(0, n)), ROOTS[n], `reference root ${n}`);
    for (let i = 0; i < n; i++) {
      assert.deepEqual(inclusionProof(i, n, READ), refPath(i, LEAVES.slice(0, n)), `inclusion ${i}/${n}`);
    }
    for (let m = 1; m < n; m++) {
      assert.deepEqual(consistencyProof(m, n, READ), refSubproof(m, LEAVES.slice(0, n), true), `consistency ${m}->${n}`);
    }
  }
});

void test('inclusion: every (i, n ≤ 64) verifies; every tamper, wrong position and wrong length fails', () => {
  let checked = 0;
  for (let n = 1; n <= N; n++) {
    const root = ROOTS[n]!;
    for (let i = 0; i < n; i++) {
      const leaf = LEAVES[i]!;
      const proof = inclusionProof(i, n, READ);
      const msg = `leaf ${i} in ${n}`;
      assert.equal(verifyInclusion(leaf, i, n, proof, root), true, msg);
      assert.ok(proof.length <= Math.ceil(Math.log2(n)), msg);
      for (let j = 0; j < proof.length; j++) {
        for (const bit of [0, 255, (i * 31 + n * 7 + j * 13) % 256]) {
          const bad = proof.map((p, k) => (k === j ? flipBit(p, bit) : p));
          assert.equal(verifyInclusion(leaf, i, n, bad, root), false, `${msg}: flipped element ${j} bit ${bit}`);
        }
      }
      assert.equal(verifyInclusion(flipBit(leaf, i + n), i, n, proof, root), false, `${msg}: leaf`);
      assert.equal(verifyInclusion(leaf, i, n, proof, flipBit(root, i * n)), false, `${msg}: root`);
      // wrong positions and sizes (with the right root for the claimed size)
      for (const [ii, nn] of [
        [i - 1, n],
        [i + 1, n],
        [i, n - 1],
        [i, n + 1],
        [i + 1, n + 1],
        [i - 1, n - 1],
      ] as const) {
        if (ii < 0 || nn < 1 || nn > N || (ii === i && nn === n)) continue;
        assert.equal(verifyInclusion(leaf, ii, nn, proof, ROOTS[nn]!), false, `${msg} presented as ${ii} in ${nn}`);
      }
      // truncated, extended, reordered
      if (proof.length > 0) {
        assert.equal(verifyInclusion(leaf, i, n, proof.slice(1), root), false, `${msg}: drop first`);
        assert.equal(verifyInclusion(leaf, i, n, proof.slice(0, -1), root), false, `${msg}: drop last`);
      }
      if (proof.length > 1) {
        assert.equal(verifyInclusion(leaf, i, n, [...proof].reverse(), root), false, `${msg}: reversed`);
      }
      assert.equal(verifyInclusion(leaf, i, n, [...proof, root], root), false, `${msg}: extended`);
      assert.equal(verifyInclusion(leaf, i, n, [leaf, ...proof], root), false, `${msg}: prepended`);
      checked++;
    }
  }
  assert.equal(checked, (N * (N + 1)) / 2);
});

void test('consistency: every (m, n ≤ 64) verifies; every tamper, wrong size and wrong length fails', () => {
  let checked = 0;
  for (let n = 1; n <= N; n++) {
    for (let m = 1; m <= n; m++) {
      const proof = consistencyProof(m, n, READ);
      const oldRoot = ROOTS[m]!;
      const newRoot = ROOTS[n]!;
      const msg = `${m}->${n}`;
      assert.equal(verifyConsistency(m, n, oldRoot, newRoot, proof), true, msg);
      assert.ok(proof.length <= Math.ceil(Math.log2(n)) + 1, msg);
      if (m === n) assert.equal(proof.length, 0);
      for (let j = 0; j < proof.length; j++) {
        for (const bit of [0, 255, (m * 31 + n * 7 + j * 13) % 256]) {
          const bad = proof.map((p, k) => (k === j ? flipBit(p, bit) : p));
          assert.equal(verifyConsistency(m, n, oldRoot, newRoot, bad), false, `${msg}: flipped element ${j} bit ${bit}`);
        }
      }
      assert.equal(verifyConsistency(m, n, flipBit(oldRoot, m + n), newRoot, proof), false, `${msg}: old root`);
      assert.equal(verifyConsistency(m, n, oldRoot, flipBit(newRoot, m * n), proof), false, `${msg}: new root`);
      for (const [mm, nn] of [
        [m - 1, n],
        [m + 1, n],
        [m, n - 1],
        [m, n + 1],
        [m + 1, n + 1],
        [m - 1, n - 1],
      ] as const) {
        if (mm < 1 || nn > N || (mm === m && nn === n)) continue;
        // (only an empty proof between equal sizes is valid for another pair of sizes)
        assert.equal(verifyConsistency(mm, nn, ROOTS[mm]!, ROOTS[nn]!, proof), m === n && mm === nn, `${msg} presented as ${mm}->${nn}`);
      }
      if (proof.length > 0) {
        assert.equal(verifyConsistency(m, n, oldRoot, newRoot, proof.slice(1)), false, `${msg}: drop first`);
        assert.equal(verifyConsistency(m, n, oldRoot, newRoot, proof.slice(0, -1)), false, `${msg}: drop last`);
      }
      if (proof.length > 1) {
        assert.equal(verifyConsistency(m, n, oldRoot, newRoot, [...proof].reverse()), false, `${msg}: reversed`);
      }
      assert.equal(verifyConsistency(m, n, oldRoot, newRoot, [...proof, newRoot]), false, `${msg}: extended`);
      assert.equal(verifyConsistency(m, n, oldRoot, newRoot, [oldRoot, ...proof]), false, `${msg}: old root prepended`);
      assert.equal(verifyConsistency(n, m, newRoot, oldRoot, proof), m === n, `${msg}: sizes swapped`);
      checked++;
    }
  }
  assert.equal(checked, (N * (N + 1)) / 2);
});

void test('consistency edge cases: size 0, equal sizes, old > new, malformed input', () => {
  const r5 = ROOTS[5]!;
  const r6 = ROOTS[6]!;
  // from the empty tree: the proof must be empty and the old root the empty-tree root
  assert.equal(verifyConsistency(0, 5, EMPTY_ROOT, r5, []), true);
  assert.equal(verifyConsistency(0, 0, EMPTY_ROOT, EMPTY_ROOT, []), true);
  assert.equal(verifyConsistency(0, 0, EMPTY_ROOT, r5, []), false);
  assert.equal(verifyConsistency(0, 5, EMPTY_ROOT, r5, [r5]), false);
  assert.equal(verifyConsistency(0, 5, r5, r5, []), false);
  assert.deepEqual(consistencyProof(0, 5, READ), []);
  assert.deepEqual(consistencyProof(0, 0, READ), []);
  // equal sizes: empty proof and equal roots
  assert.equal(verifyConsistency(5, 5, r5, r5, []), true);
  assert.equal(verifyConsistency(5, 5, r5, r6, []), false);
  assert.equal(verifyConsistency(5, 5, r5, r5, [r5]), false);
  // old > new, and an empty proof between different sizes
  assert.equal(verifyConsistency(6, 5, r6, r5, consistencyProof(5, 6, READ)), false);
  assert.equal(verifyConsistency(5, 6, r5, r6, []), false);
  // malformed sizes and hashes
  const good = consistencyProof(5, 6, READ);
  for (const [m, n] of [
    [-1, 6],
    [5, 6.5],
    [Number.NaN, 6],
    [5, 2 ** 53],
  ]) {
    assert.equal(verifyConsistency(m!, n!, r5, r6, good), false, `${m}->${n}`);
  }
  assert.equal(verifyConsistency(5, 6, r5.subarray(1), r6, good), false);
  assert.equal(verifyConsistency(5, 6, r5, r6, [...good.slice(0, -1), new Uint8Array(33)]), false);
  // the throwing variant carries a typed error with a stable code
  assert.throws(
    () => {
      checkConsistency(5, 5, r5, r6, []);
    },
    (e) => e instanceof ProofError && e.code === 'consistency_proof_invalid' && /roots differ/.test(e.message),
  );
  // proof generation refuses impossible arguments
  assert.throws(() => consistencyProof(6, 5, READ), { code: 'tree_size_invalid' });
  assert.throws(() => consistencyProof(-1, 5, READ), { code: 'tree_size_invalid' });
  assert.throws(() => consistencyProof(1, 2 ** 53, READ), { code: 'tree_size_invalid' });
  assert.throws(() => consistencyProof(1, 65, READ), { code: 'index_out_of_range' }); // past the memory tree
});

void test('inclusion edge cases: index ≥ size, malformed input, throwing variant', () => {
  const r8 = ROOTS[8]!;
  const proof = inclusionProof(3, 8, READ);
  assert.equal(verifyInclusion(LEAVES[3]!, 3, 8, proof, r8), true);
  assert.equal(verifyInclusion(LEAVES[8]!, 8, 8, proof, r8), false);
  assert.equal(verifyInclusion(LEAVES[0]!, 0, 0, [], EMPTY_ROOT), false);
  assert.equal(verifyInclusion(LEAVES[0]!, 0, 1, [], ROOTS[1]!), true);
  assert.equal(verifyInclusion(LEAVES[0]!, 0, 1, [LEAVES[0]!], ROOTS[1]!), false);
  assert.equal(verifyInclusion(LEAVES[3]!, -1, 8, proof, r8), false);
  assert.equal(verifyInclusion(LEAVES[3]!, 3.5, 8, proof, r8), false);
  assert.equal(verifyInclusion(LEAVES[3]!, 3, 2 ** 53, proof, r8), false);
  assert.equal(verifyInclusion(LEAVES[3]!.subarray(0, 31), 3, 8, proof, r8), false);
  assert.equal(verifyInclusion(LEAVES[3]!, 3, 8, [...proof.slice(0, 2), new Uint8Array(0)], r8), false);
  assert.doesNotThrow(() => {
    checkInclusion(LEAVES[3]!, 3, 8, proof, r8);
  });
  assert.throws(
    () => {
      checkInclusion(LEAVES[3]!, 3, 8, proof.slice(1), r8);
    },
    (e) => e instanceof ProofError && e.code === 'inclusion_proof_invalid',
  );
  assert.throws(
    () => inclusionProof(8, 8, READ),
    (e) => e instanceof TreeError && e.code === 'index_out_of_range',
  );
  assert.throws(() => inclusionProof(-1, 8, READ), { code: 'index_out_of_range' });
  assert.throws(() => inclusionProof(0, 0, READ), { code: 'index_out_of_range' });
  assert.throws(() => treeRoot(1.5, READ), { code: 'tree_size_invalid' });
  assert.throws(() => treeRoot(65, READ), { code: 'index_out_of_range' });
  const shortReader: HashReader = () => new Uint8Array(31);
  assert.throws(() => treeRoot(3, shortReader), { code: 'hash_invalid' });
});

// --- large sizes: arithmetic beyond 32 bits -----------------------------------------------------

/**
 * A virtual tree of any size where every leaf hash is X except leaf `special` (Y): a complete
 * subtree either is all-X (a precomputed hash per level) or contains `special` (one recursion
 * per level). Lets us build and verify real proofs for sizes near 2^53.
 */
function virtualTree(special: number): { read: HashReader; leaf: (i: number) => Uint8Array } {
  const X = hashLeaf(Buffer.from('x'));
  const Y = hashLeaf(Buffer.from('y'));
  const uniform: Uint8Array[] = [X];
  for (let l = 1; l <= 53; l++) uniform.push(hashChildren(uniform[l - 1]!, uniform[l - 1]!));
  const read = (level: number, index: number): Uint8Array => {
    const start = index * 2 ** level;
    if (special < start || special >= start + 2 ** level) return uniform[level]!;
    if (level === 0) return Y;
    return hashChildren(read(level - 1, 2 * index), read(level - 1, 2 * index + 1));
  };
  return { read, leaf: (i) => (i === special ? Y : X) };
}

void test('sizes beyond 2^32 up to 2^53 − 1: proofs verify, tampering fails', () => {
  const sizes = [2 ** 32 + 1, 2 ** 40 + 12345, 2 ** 52 + 2 ** 31 + 7, Number.MAX_SAFE_INTEGER];
  for (const size of sizes) {
    for (const special of [0, 2 ** 32 - 1, 2 ** 32, Math.floor(size / 3), size - 1]) {
      const { read, leaf } = virtualTree(special);
      const root = treeRoot(size, read);
      for (const i of [special, special === 0 ? 1 : special - 1]) {
        const proof = inclusionProof(i, size, read);
        const msg = `leaf ${i} in ${size}`;
        assert.equal(verifyInclusion(leaf(i), i, size, proof, root), true, msg);
        assert.ok(proof.length <= 53, msg);
        assert.equal(verifyInclusion(leaf(i), i, size - 1, proof, treeRoot(size - 1, read)), false, msg);
        assert.equal(verifyInclusion(leaf(i), i, size, proof.slice(0, -1), root), false, msg);
        if (i === special) assert.equal(verifyInclusion(leaf(i + 1), i, size, proof, root), false, msg);
      }
      for (const m of [1, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, special + 1, size - 1, size]) {
        if (m > size) continue;
        const proof = consistencyProof(m, size, read);
        const oldRoot = treeRoot(m, read);
        const msg = `${m}->${size} (special ${special})`;
        assert.equal(verifyConsistency(m, size, oldRoot, root, proof), true, msg);
        if (proof.length > 0) {
          assert.equal(verifyConsistency(m, size, oldRoot, root, proof.slice(1)), false, msg);
          assert.equal(verifyConsistency(m, size, oldRoot, root, [flipBit(proof[0]!, 1), ...proof.slice(1)]), false, msg);
        }
      }
    }
  }
});
