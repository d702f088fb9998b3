// C2SP tlog-tiles tests. Path vectors and the size-70,000 / size-256 examples are from the
// tlog-tiles text (C2SP/C2SP tlog-tiles.md, summarised in ../shared/research/c2sp-and-peers.md §1.5).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { encodeHex } from '../../src/encoding/hex.ts';
import { hashLeaf } from '../../src/tlog/hash.ts';
import {
  consistencyProof,
  inclusionProof,
  memoryHashReader,
  rootFromLeafHashes,
  treeRoot,
  verifyConsistency,
  verifyInclusion,
  type HashReader,
} from '../../src/tlog/merkle.ts';
import {
  TILE_WIDTH,
  buildTile,
  consistencyProofTiles,
  decodeEntryBundle,
  decodeTile,
  encodeEntryBundle,
  entryBundlePath,
  inclusionProofTiles,
  parseTilePath,
  tileHashIndex,
  tileHashReader,
  tileLevels,
  tilePath,
  tileWidth,
  tilesAtLevel,
  tilesChanged,
  treeRootTiles,
  type Tile,
} from '../../src/tlog/tiles.ts';
import { TileError } from '../../src/tlog/errors.ts';

// --- paths ---------------------------------------------------------------------------------------

void test('tile paths: spec example and canonical encodings round-trip', () => {
  const cases: [Tile, string][] = [
    [{ level: 0, index: 1234067, width: 256 }, 'tile/0/x001/x234/067'],
    [{ level: 0, index: 0, width: 256 }, 'tile/0/000'],
    [{ level: 0, index: 0, width: 1 }, 'tile/0/000.p/1'],
    [{ level: 1, index: 999, width: 255 }, 'tile/1/999.p/255'],
    [{ level: 2, index: 1000, width: 256 }, 'tile/2/x001/000'],
    [{ level: 3, index: 1234067, width: 17 }, 'tile/3/x001/x234/067.p/17'],
    [{ level: 63, index: 1_000_000, width: 256 }, 'tile/63/x001/x000/000'],
    [{ level: 10, index: Number.MAX_SAFE_INTEGER, width: 256 }, 'tile/10/x009/x007/x199/x254/x740/991'],
  ];
  for (const [tile, path] of cases) {
    assert.equal(tilePath(tile), path);
    assert.deepEqual(parseTilePath(path), { kind: 'tile', ...tile });
  }
  assert.equal(entryBundlePath({ index: 1234067, width: 256 }), 'tile/entries/x001/x234/067');
  assert.equal(entryBundlePath({ index: 5, width: 112 }), 'tile/entries/005.p/112');
  assert.deepEqual(parseTilePath('tile/entries/x001/x234/067'), { kind: 'entries', index: 1234067, width: 256 });
  assert.deepEqual(parseTilePath('tile/entries/005.p/112'), { kind: 'entries', index: 5, width: 112 });
});

void test('tile paths: non-canonical and malformed paths are refused', () => {
  const bad = [
    '',
    'tile',
    'tile/0',
    'tile/0/',
    'tile/0/0',
    'tile/0/00',
    'tile/0/0000',
    'tile/0/x000/001', // index 1 has one group
    'tile/0/x000/000',
    'tile/0/x001', // last group must not carry x
    'tile/0/001/002', // non-final group needs x
    'tile/0/x001/x002',
    'tile/0/X001/002',
    'tile/0/x01/002',
    'tile/00/000', // level with a leading zero
    'tile/01/000',
    'tile/64/000', // level > 63
    'tile/-1/000',
    'tile/+1/000',
    'tile/data/000', // the old sumdb name
    'tile/8/0/000', // sumdb layout with a height element
    'tile/0/000.p/0',
    'tile/0/000.p/256', // a full tile has no .p suffix
    'tile/0/000.p/300',
    'tile/0/000.p/007',
    'tile/0/000.p/',
    'tile/0/000.p',
    'tile/0/000.p/1/',
    'tile/entries/000.p/256',
    'tile/entries/0',
    '/tile/0/000',
    'tile/0/000/',
    'tile//0/000',
    'tile/0/00a',
    'tile/0/\u0660\u0660\u0660', // Arabic-Indic digits
    'tile/0/000 ',
    'tile/0/000\n',
    'tile/0/x009/x007/x199/x254/x740/992', // 2^53
    'tile/0/x999/x999/x999/x999/x999/999',
    'tile/0/x001/x001/x001/x001/x001/x001/001', // seven groups
    `tile/0/${'x001/'.repeat(40)}001`,
  ];
  for (const path of bad) {
    assert.throws(
      () => parseTilePath(path),
      (e) => e instanceof TileError && e.code === 'tile_path_invalid',
      path,
    );
  }
  for (const tile of [
    { level: -1, index: 0, width: 256 },
    { level: 64, index: 0, width: 256 },
    { level: 1.5, index: 0, width: 256 },
    { level: 0, index: -1, width: 256 },
    { level: 0, index: 0.5, width: 256 },
    { level: 0, index: 2 ** 53, width: 256 },
    { level: 0, index: 0, width: 0 },
    { level: 0, index: 0, width: 257 },
  ]) {
    assert.throws(() => tilePath(tile), { code: 'tile_path_invalid' }, JSON.stringify(tile));
  }
  assert.throws(() => entryBundlePath({ index: 0, width: 0 }), { code: 'tile_path_invalid' });
});

// --- arithmetic ---------------------------------------------------------------------------------

void test('tile arithmetic: the spec examples (sizes 70,000 and 256)', () => {
  // "273 full level 0 tiles, one partial level 0 tile of width 112, one full level 1 tile,
  //  one partial level 1 tile of width 17, and one partial level 2 tile of width 1"
  assert.deepEqual(tilesAtLevel(70000, 0), { full: 273, partialWidth: 112 });
  assert.deepEqual(tilesAtLevel(70000, 1), { full: 1, partialWidth: 17 });
  assert.deepEqual(tilesAtLevel(70000, 2), { full: 0, partialWidth: 1 });
  assert.deepEqual(tilesAtLevel(70000, 3), { full: 0, partialWidth: 0 });
  assert.equal(tileLevels(70000), 3);
  assert.equal(tileWidth(0, 272, 70000), 256);
  assert.equal(tileWidth(0, 273, 70000), 112);
  assert.equal(tileWidth(0, 274, 70000), 0);
  assert.equal(tileWidth(1, 1, 70000), 17);
  assert.equal(tileWidth(2, 0, 70000), 1);
  // "a tree of size 256 will be represented by a full level 0 tile and a partial level 1 tile of width 1"
  assert.deepEqual(tilesAtLevel(256, 0), { full: 1, partialWidth: 0 });
  assert.deepEqual(tilesAtLevel(256, 1), { full: 0, partialWidth: 1 });
  assert.equal(tileLevels(256), 2);
  assert.equal(tileLevels(0), 0);
  assert.equal(tileLevels(255), 1);
  assert.equal(tileLevels(65536), 3);
  assert.equal(tileLevels(Number.MAX_SAFE_INTEGER), 7);
  assert.deepEqual(tilesAtLevel(Number.MAX_SAFE_INTEGER, 6), { full: 0, partialWidth: 31 });
  // the changed tiles of a growing tree
  assert.deepEqual(tilesChanged(0, 0), []);
  assert.deepEqual(tilesChanged(0, 1), [{ level: 0, index: 0, width: 1 }]);
  assert.deepEqual(tilesChanged(255, 256), [
    { level: 0, index: 0, width: 256 },
    { level: 1, index: 0, width: 1 },
  ]);
  assert.deepEqual(tilesChanged(256, 257), [{ level: 0, index: 1, width: 1 }]);
  assert.equal(tilesChanged(0, 70000).length, 274 + 2 + 1);
  assert.throws(() => tilesChanged(2, 1), { code: 'tree_size_invalid' });
});

void test('tileHashIndex: where a subtree hash lives', () => {
  assert.deepEqual(tileHashIndex(0, 300), { tileLevel: 0, tileIndex: 1, start: 44, count: 1 });
  assert.deepEqual(tileHashIndex(3, 40), { tileLevel: 0, tileIndex: 1, start: 64, count: 8 });
  assert.deepEqual(tileHashIndex(7, 3), { tileLevel: 0, tileIndex: 1, start: 128, count: 128 });
  assert.deepEqual(tileHashIndex(8, 5), { tileLevel: 1, tileIndex: 0, start: 5, count: 1 });
  assert.deepEqual(tileHashIndex(10, 70), { tileLevel: 1, tileIndex: 1, start: 24, count: 4 });
  assert.deepEqual(tileHashIndex(16, 0), { tileLevel: 2, tileIndex: 0, start: 0, count: 1 });
  assert.throws(() => tileHashIndex(-1, 0), { code: 'index_out_of_range' });
  assert.throws(() => tileHashIndex(0, -1), { code: 'index_out_of_range' });
});

// --- tile-backed hash reader --------------------------------------------------------------------

const BIG = 65537 + 512;
const LEAVES = Array.from({ length: BIG }, (_, i) => {
  const b = Buffer.alloc(8);
  b.writeUInt32BE(i, 4);
  return new Uint8Array(createHash('sha256').update(b).digest());
});
const MEM = memoryHashReader(LEAVES);

/**
 * A tile store for the tree of `size` built from the in-memory tree. It insists on being asked
 * for tiles that exist at that size with exactly their width, and counts reads.
 */
function tileStore(size: number): { readTile: (tile: Tile) => Uint8Array; reads: () => number } {
  let reads = 0;
  return {
    readTile: (tile) => {
      reads++;
      assert.equal(tile.width, tileWidth(tile.level, tile.index, size), `asked for ${tilePath(tile)} at size ${size}`);
      assert.ok(tile.width > 0);
      return buildTile(tile, MEM);
    },
    reads: () => reads,
  };
}

function samples(size: number): number[] {
  const s = new Set([0, 1, 127, 128, 255, 256, 257, 511, 65535, 65536, Math.floor(size / 2), Math.floor(size / 3), size - 2, size - 1]);
  return [...s].filter((i) => i >= 0 && i < size).sort((a, b) => a - b);
}

void test('tile-backed reader: same roots and proofs as the memory reader around tile boundaries', () => {
  const sizes = [1, 2, 3, 255, 256, 257, 511, 512, 513, 65535, 65536, 65537, 65537 + 511];
  const maxReads = { root: 0, inclusion: 0, consistency: 0 };
  for (const size of sizes) {
    const levels = tileLevels(size);
    const fresh = (): { read: HashReader; reads: () => number } => {
      const store = tileStore(size);
      return { read: tileHashReader(size, store.readTile), reads: store.reads };
    };
    const root = treeRoot(size, MEM);
    {
      const { read, reads } = fresh();
      assert.deepEqual(treeRoot(size, read), root, `root ${size}`);
      assert.ok(reads() <= levels, `root ${size}: ${reads()} tile reads`);
      maxReads.root = Math.max(maxReads.root, reads());
    }
    for (const i of samples(size)) {
      const { read, reads } = fresh();
      const proof = inclusionProof(i, size, read);
      assert.deepEqual(proof, inclusionProof(i, size, MEM), `inclusion ${i} in ${size}`);
      assert.equal(verifyInclusion(LEAVES[i]!, i, size, proof, root), true);
      assert.ok(reads() <= 2 * levels, `inclusion ${i} in ${size}: ${reads()} tile reads`);
      maxReads.inclusion = Math.max(maxReads.inclusion, reads());
    }
    for (const m of samples(size + 1)) {
      const { read, reads } = fresh();
      const proof = consistencyProof(m, size, read);
      assert.deepEqual(proof, consistencyProof(m, size, MEM), `consistency ${m}->${size}`);
      assert.equal(verifyConsistency(m, size, treeRoot(m, MEM), root, proof), true);
      assert.ok(reads() <= 2 * levels, `consistency ${m}->${size}: ${reads()} tile reads`);
      maxReads.consistency = Math.max(maxReads.consistency, reads());
    }
  }
  // three tile levels at most here: a handful of reads, not thousands
  assert.ok(maxReads.root <= 3 && maxReads.inclusion <= 6 && maxReads.consistency <= 6, JSON.stringify(maxReads));
});

void test('tile-backed reader: small trees agree exhaustively with rootFromLeafHashes', () => {
  for (let size = 1; size <= 600; size++) {
    const store = tileStore(size);
    assert.deepEqual(treeRoot(size, tileHashReader(size, store.readTile)), rootFromLeafHashes(LEAVES.slice(0, size)), `${size}`);
  }
});

void test('tile-backed reader: the announced tile sets suffice, wider tiles are accepted', () => {
  for (const [size, i, m] of [
    [66000, 65999, 65536],
    [65537, 300, 256],
    [257, 256, 255],
    [1, 0, 0],
  ] as const) {
    const wanted = [...treeRootTiles(size), ...inclusionProofTiles(i, size), ...consistencyProofTiles(m, size)];
    const allowed = new Map(wanted.map((t) => [tilePath(t), t]));
    for (const t of allowed.values()) assert.equal(t.width, tileWidth(t.level, t.index, size));
    // the store holds only those tiles, each at its widest (full) extent where the big tree has it
    const read = tileHashReader(size, (tile) => {
      const t = allowed.get(tilePath(tile));
      assert.ok(t, `unexpected ${tilePath(tile)}`);
      const wider = Math.min(TILE_WIDTH, tileWidth(tile.level, tile.index, BIG) || tile.width);
      return buildTile({ ...tile, width: Math.max(wider, tile.width) }, MEM);
    });
    assert.deepEqual(treeRoot(size, read), treeRoot(size, MEM));
    assert.deepEqual(inclusionProof(i, size, read), inclusionProof(i, size, MEM));
    assert.deepEqual(consistencyProof(m, size, read), consistencyProof(m, size, MEM));
  }
  assert.deepEqual(treeRootTiles(70000).map(tilePath), ['tile/2/000.p/1', 'tile/1/001.p/17', 'tile/0/273.p/112']);
  assert.deepEqual(treeRootTiles(0), []);
});

void test('tile sets stay O(log n) for sizes up to 2^53 − 1 (at most two tiles per tile level)', () => {
  for (const size of [70000, 2 ** 32 + 1, 2 ** 40 + 12345, 2 ** 52 - 1, Number.MAX_SAFE_INTEGER]) {
    const bound = 2 * tileLevels(size);
    for (const i of [0, 1, 255, 256, Math.floor(size / 3), size - 257, size - 1]) {
      assert.ok(treeRootTiles(size).length <= tileLevels(size), `root ${size}`);
      assert.ok(inclusionProofTiles(i, size).length <= bound, `inclusion ${i} in ${size}`);
      assert.ok(consistencyProofTiles(i + 1, size).length <= bound, `consistency ${i + 1}->${size}`);
    }
  }
});

void test('tile-backed reader: bad tiles and reads outside the tree are refused', () => {
  const short = tileHashReader(300, () => new Uint8Array(31 * 32));
  assert.throws(
    () => short(0, 0),
    (e) => e instanceof TileError && e.code === 'tile_invalid',
  );
  const ragged = tileHashReader(300, () => new Uint8Array(256 * 32 + 1));
  assert.throws(() => ragged(0, 0), { code: 'tile_invalid' });
  const store = tileStore(300);
  const read = tileHashReader(300, store.readTile);
  assert.throws(() => read(0, 300), { code: 'index_out_of_range' });
  assert.throws(() => read(6, 4), { code: 'index_out_of_range' }); // leaves 256..319
  assert.throws(() => read(9, 0), { code: 'index_out_of_range' });
  assert.deepEqual(read(5, 8), MEM(5, 8)); // leaves 256..287
  assert.deepEqual(read(8, 0), MEM(8, 0));
  assert.throws(() => tileHashReader(-1, store.readTile), { code: 'tree_size_invalid' });
});

void test('tiles: encode from a reader, decode strictly', () => {
  const tile = buildTile({ level: 0, index: 1, width: 3 }, MEM);
  assert.equal(tile.length, 96);
  assert.deepEqual(decodeTile(tile), [LEAVES[256], LEAVES[257], LEAVES[258]]);
  assert.deepEqual(decodeTile(tile, 3).length, 3);
  assert.throws(() => decodeTile(tile, 2), { code: 'tile_invalid' });
  assert.throws(() => decodeTile(tile.subarray(1)), { code: 'tile_invalid' });
  assert.throws(() => decodeTile(new Uint8Array(0)), { code: 'tile_invalid' });
  assert.throws(() => decodeTile(new Uint8Array(257 * 32)), { code: 'tile_invalid' });
  assert.deepEqual(decodeTile(buildTile({ level: 1, index: 0, width: 2 }, MEM)), [MEM(8, 0), MEM(8, 1)]);
});

// --- entry bundles ------------------------------------------------------------------------------

void test('entry bundles: uint16 big-endian length prefixes, strict decoding', () => {
  const entries = [new Uint8Array(0), Buffer.from('a'), new Uint8Array(300).fill(7)];
  const bundle = encodeEntryBundle(entries);
  assert.equal(encodeHex(bundle.subarray(0, 5)), '0000000161');
  assert.equal(encodeHex(bundle.subarray(5, 8)), '012c07');
  assert.equal(bundle.length, 2 + 3 + 302);
  assert.deepEqual(
    decodeEntryBundle(bundle),
    entries.map((e) => new Uint8Array(e)),
  );
  assert.deepEqual(decodeEntryBundle(bundle, 3).length, 3);
  // a level-0 tile is the leaf hashes of the matching bundle
  assert.deepEqual(decodeTile(Buffer.concat(decodeEntryBundle(bundle).map(hashLeaf))), entries.map(hashLeaf));

  const max = new Uint8Array(65535);
  assert.equal(decodeEntryBundle(encodeEntryBundle([max]))[0]!.length, 65535);
  assert.throws(
    () => encodeEntryBundle([new Uint8Array(65536)]),
    (e) => e instanceof TileError && e.code === 'entry_too_large',
  );
  assert.throws(() => encodeEntryBundle([]), { code: 'entry_bundle_invalid' });
  assert.throws(() => encodeEntryBundle(Array.from({ length: 257 }, () => new Uint8Array(1))), { code: 'entry_bundle_invalid' });
  assert.equal(decodeEntryBundle(encodeEntryBundle(Array.from({ length: 256 }, () => new Uint8Array(0)))).length, 256);

  for (const [bad, why] of [
    [new Uint8Array(0), 'empty'],
    [bundle.subarray(0, bundle.length - 1), 'truncated entry'],
    [new Uint8Array([0]), 'truncated length'],
    [Buffer.concat([bundle, new Uint8Array([0])]), 'trailing byte'],
    [new Uint8Array([0, 5, 1, 2]), 'short entry'],
    [new Uint8Array(257 * 2), '257 empty entries'],
  ] as const) {
    assert.throws(() => decodeEntryBundle(bad), { code: 'entry_bundle_invalid' }, why);
  }
  assert.throws(() => decodeEntryBundle(bundle, 4), { code: 'entry_bundle_invalid' });
});
