/**
 * C2SP tlog-tiles (c2sp.org/tlog-tiles): tile paths, tile arithmetic, a HashReader over stored
 * tiles, and entry bundles.
 *
 * Tile n at level L is the sequence of the hashes of the complete subtrees at tree level 8·L with
 * indices n·256 … n·256 + 255, i.e. MTH(D[(n·256 + i)·256^L : (n·256 + i + 1)·256^L]). For a
 * tree of size s, level L holds floor(s / 256^L) such hashes: floor(that / 256) full tiles and,
 * when (that mod 256) ≠ 0, one partial tile of that width. Sizes and indices are safe integers
 * (see merkle.ts), so only levels 0..6 can be non-empty; paths still accept levels up to 63.
 */
import { TileError, TreeError } from './errors.ts';
import { HASH_SIZE, hashChildren } from './hash.ts';
import { consistencyProof, inclusionProof, treeRoot, type HashReader } from './merkle.ts';

/** Hashes in a full tile (and entries in a full entry bundle). */
export const TILE_WIDTH = 256;
/** Tree levels spanned by one tile level: TILE_WIDTH = 2^TILE_HEIGHT. */
export const TILE_HEIGHT = 8;
/** Largest tile level a path may name. */
export const MAX_TILE_LEVEL = 63;
/** Largest entry an entry bundle can carry (uint16 length prefix). */
export const MAX_ENTRY_SIZE = 65535;

/** A Merkle tree tile: `width` is 1..256 (256 = full). */
export interface Tile {
  readonly level: number;
  readonly index: number;
  readonly width: number;
}

/** An entry bundle (`tile/entries/…`): `width` is 1..256 (256 = full). */
export interface EntryBundleRef {
  readonly index: number;
  readonly width: number;
}

/** What a `tile/…` path names. */
export type ParsedTilePath = ({ readonly kind: 'tile' } & Tile) | ({ readonly kind: 'entries' } & EntryBundleRef);

const POW256 = Array.from({ length: MAX_TILE_LEVEL + 2 }, (_, l) => 2 ** (TILE_HEIGHT * l));

/** A plain Uint8Array copy of bytes[start:end] (Buffer#slice would return a shared view). */
function copy(bytes: Uint8Array, start: number, end: number): Uint8Array {
  return new Uint8Array(bytes.subarray(start, end));
}

function badPath(path: string, why: string): TileError {
  return new TileError('tile_path_invalid', `invalid tile path ${JSON.stringify(path.slice(0, 200))}: ${why}`);
}

function checkSize(size: number): void {
  if (!Number.isSafeInteger(size) || size < 0) {
    throw new TreeError('tree_size_invalid', 'tree size must be a non-negative safe integer');
  }
}

function checkTileCoords(level: number | null, index: number, width: number): void {
  if (level !== null && (!Number.isSafeInteger(level) || level < 0 || level > MAX_TILE_LEVEL)) {
    throw new TileError('tile_path_invalid', `tile level must be an integer in 0..${MAX_TILE_LEVEL}`);
  }
  if (!Number.isSafeInteger(index) || index < 0) {
    throw new TileError('tile_path_invalid', 'tile index must be a non-negative safe integer');
  }
  if (!Number.isSafeInteger(width) || width < 1 || width > TILE_WIDTH) {
    throw new TileError('tile_path_invalid', `tile width must be an integer in 1..${TILE_WIDTH}`);
  }
}

/** `<N>` as zero-padded 3-digit groups, all but the last prefixed `x`: 1234067 → x001/x234/067. */
function encodeTileIndex(n: number): string {
  const groups: string[] = [];
  do {
    groups.unshift(String(n % 1000).padStart(3, '0'));
    n = Math.floor(n / 1000);
  } while (n > 0);
  return groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/');
}

function suffix(width: number): string {
  return width === TILE_WIDTH ? '' : `.p/${width}`;
}

/** `tile/<L>/<N>[.p/<W>]` (no leading slash; the caller adds its prefix). */
export function tilePath(tile: Tile): string {
  checkTileCoords(tile.level, tile.index, tile.width);
  return `tile/${tile.level}/${encodeTileIndex(tile.index)}${suffix(tile.width)}`;
}

/** `tile/entries/<N>[.p/<W>]` (no leading slash). */
export function entryBundlePath(bundle: EntryBundleRef): string {
  checkTileCoords(null, bundle.index, bundle.width);
  return `tile/entries/${encodeTileIndex(bundle.index)}${suffix(bundle.width)}`;
}

const PATH_RE = /^tile\/(entries|0|[1-9][0-9]?)\/((?:x[0-9]{3}\/){0,5}[0-9]{3})(?:\.p\/([1-9][0-9]{0,2}))?$/;

/**
 * Strict inverse of tilePath / entryBundlePath: the path (without prefix or leading slash) must
 * be exactly the canonical encoding (level without leading zeros and ≤ 63; index in the minimal
 * number of 3-digit groups, so `x000/001` is refused; width 1..255 without leading zeros, a full
 * tile has no `.p/` suffix). Throws TileError `tile_path_invalid`.
 */
export function parseTilePath(path: string): ParsedTilePath {
  if (typeof path !== 'string') throw new TileError('tile_path_invalid', 'tile path is not a string');
  if (path.length > 100) throw badPath(path, 'too long');
  const m = PATH_RE.exec(path);
  if (m === null) throw badPath(path, 'malformed');
  const [, levelText, indexText, widthText] = m;
  let index = 0;
  for (const group of indexText!.split('/')) index = index * 1000 + Number(group.replace('x', ''));
  if (!Number.isSafeInteger(index)) throw badPath(path, 'tile index out of range');
  const width = widthText === undefined ? TILE_WIDTH : Number(widthText);
  if (widthText !== undefined && width >= TILE_WIDTH) throw badPath(path, `partial width must be 1..${TILE_WIDTH - 1}`);
  let parsed: ParsedTilePath;
  if (levelText === 'entries') {
    parsed = { kind: 'entries', index, width };
    if (entryBundlePath(parsed) !== path) throw badPath(path, 'not canonical');
  } else {
    const level = Number(levelText);
    if (level > MAX_TILE_LEVEL) throw badPath(path, `level must be 0..${MAX_TILE_LEVEL}`);
    parsed = { kind: 'tile', level, index, width };
    if (tilePath(parsed) !== path) throw badPath(path, 'not canonical');
  }
  return parsed;
}

/**
 * Tiles at one level for a tree of `size`: `full` full tiles (indices 0 … full − 1) and, when
 * `partialWidth` > 0, a partial tile of that width at index `full`.
 */
export function tilesAtLevel(size: number, level: number): { full: number; partialWidth: number } {
  checkSize(size);
  checkTileCoords(level, 0, 1);
  const count = Math.floor(size / POW256[level]!);
  return { full: Math.floor(count / TILE_WIDTH), partialWidth: count % TILE_WIDTH };
}

/** Width of tile (level, index) in a tree of `size`: 256 when full, 1..255 when partial, 0 when it does not exist. */
export function tileWidth(level: number, index: number, size: number): number {
  checkTileCoords(level, index, 1);
  const { full, partialWidth } = tilesAtLevel(size, level);
  if (index < full) return TILE_WIDTH;
  if (index === full) return partialWidth;
  return 0;
}

/**
 * Number of tile levels a tree of `size` has (the highest non-empty level + 1; 0 for the empty
 * tree). Level l exists while size ≥ 256^l.
 */
export function tileLevels(size: number): number {
  checkSize(size);
  let levels = 0;
  while (levels <= MAX_TILE_LEVEL && size >= POW256[levels]! && size > 0) levels++;
  return levels;
}

/**
 * Every tile of a tree of `newSize` that a tree of `oldSize` does not have with the same
 * contents: the tiles to (re)write after appending oldSize → newSize, each at its width for
 * newSize, level by level. Level-0 tiles correspond one to one to entry bundles.
 */
export function tilesChanged(oldSize: number, newSize: number): Tile[] {
  checkSize(oldSize);
  checkSize(newSize);
  if (oldSize > newSize) throw new TreeError('tree_size_invalid', 'old tree size is larger than new tree size');
  const out: Tile[] = [];
  for (let level = 0; level < tileLevels(newSize); level++) {
    const oldCount = Math.floor(oldSize / POW256[level]!);
    const newCount = Math.floor(newSize / POW256[level]!);
    if (newCount === oldCount) continue;
    const first = Math.floor(oldCount / TILE_WIDTH);
    const last = Math.floor((newCount - 1) / TILE_WIDTH);
    for (let index = first; index <= last; index++) {
      out.push({ level, index, width: Math.min(TILE_WIDTH, newCount - index * TILE_WIDTH) });
    }
  }
  return out;
}

/**
 * Where the complete subtree (level, index) lives: in tile (tileLevel, tileIndex), its hash is
 * the MTH of the `count` tile hashes starting at position `start` (count = 2^(level mod 8), so a
 * subtree never straddles two tiles; count 1 means the hash is stored as is).
 */
export function tileHashIndex(level: number, index: number): { tileLevel: number; tileIndex: number; start: number; count: number } {
  if (!Number.isSafeInteger(level) || level < 0 || level >= TILE_HEIGHT * (MAX_TILE_LEVEL + 1)) {
    throw new TreeError('index_out_of_range', `subtree level ${level} out of range`);
  }
  if (!Number.isSafeInteger(index) || index < 0) {
    throw new TreeError('index_out_of_range', `subtree index ${index} out of range`);
  }
  const tileLevel = Math.floor(level / TILE_HEIGHT);
  const count = 2 ** (level - TILE_HEIGHT * tileLevel);
  const position = index * count; // among the level-8L hashes
  const tileIndex = Math.floor(position / TILE_WIDTH);
  return { tileLevel, tileIndex, start: position - tileIndex * TILE_WIDTH, count };
}

/**
 * Reads one tile: the concatenated hashes, at least `tile.width` of them. A wider version of the
 * same tile is accepted (complete-subtree hashes never change as the tree grows), so a store may
 * return its latest copy; only the first `width` hashes are used.
 */
export type TileReader = (tile: Tile) => Uint8Array;

/** Number of tiles a tileHashReader keeps (the most recently used ones). */
const TILE_CACHE_SIZE = 16;

/**
 * A HashReader for the tree of `size` backed by stored tiles. A subtree whose level is a
 * multiple of 8 is one stored hash; any other is hashed up from the 2..128 hashes below it in one
 * tile (at most 127 hash operations). Every proof or root thus costs O(log size) tile reads; the
 * reader keeps the last 16 tiles it read, so proofs typically read about two tiles per tile level.
 * Reads outside the tree throw TreeError `index_out_of_range`; a short or misaligned tile throws
 * TileError `tile_invalid`.
 */
export function tileHashReader(size: number, readTile: TileReader): HashReader {
  checkSize(size);
  const cache = new Map<string, Uint8Array>();
  const getTile = (tile: Tile): Uint8Array => {
    const key = `${tile.level}/${tile.index}`;
    let bytes = cache.get(key);
    if (bytes !== undefined) {
      cache.delete(key); // refresh its place in the insertion order
    } else {
      bytes = readTile(tile);
      if (
        !(bytes instanceof Uint8Array) ||
        bytes.length % HASH_SIZE !== 0 ||
        bytes.length < tile.width * HASH_SIZE ||
        bytes.length > TILE_WIDTH * HASH_SIZE
      ) {
        throw new TileError('tile_invalid', `${tilePath(tile)}: expected ${tile.width} hashes`);
      }
      if (cache.size >= TILE_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    }
    cache.set(key, bytes);
    return bytes;
  };
  return (level, index) => {
    const { tileLevel, tileIndex, start, count } = tileHashIndex(level, index);
    if ((index + 1) * 2 ** level > size) {
      throw new TreeError('index_out_of_range', `subtree (${level}, ${index}) is not complete in a tree of size ${size}`);
    }
    const bytes = getTile({ level: tileLevel, index: tileIndex, width: tileWidth(tileLevel, tileIndex, size) });
    let hashes: Uint8Array[] = [];
    for (let i = start; i < start + count; i++) hashes.push(copy(bytes, i * HASH_SIZE, (i + 1) * HASH_SIZE));
    while (hashes.length > 1) {
      const next: Uint8Array[] = [];
      for (let i = 0; i < hashes.length; i += 2) next.push(hashChildren(hashes[i]!, hashes[i + 1]!));
      hashes = next;
    }
    return hashes[0]!;
  };
}

/** The bytes of `tile` (its `width` hashes at tree level 8·level), read from any HashReader. */
export function buildTile(tile: Tile, read: HashReader): Uint8Array {
  checkTileCoords(tile.level, tile.index, tile.width);
  const out = new Uint8Array(tile.width * HASH_SIZE);
  for (let i = 0; i < tile.width; i++) {
    const h = read(TILE_HEIGHT * tile.level, tile.index * TILE_WIDTH + i);
    if (h.length !== HASH_SIZE) throw new TreeError('hash_invalid', 'hash reader returned a hash of the wrong size');
    out.set(h, i * HASH_SIZE);
  }
  return out;
}

/** Split a tile into its hashes; with `width`, the tile must hold exactly that many. */
export function decodeTile(bytes: Uint8Array, width?: number): Uint8Array[] {
  const n = bytes.length / HASH_SIZE;
  if (!Number.isInteger(n) || n < 1 || n > TILE_WIDTH || (width !== undefined && n !== width)) {
    throw new TileError('tile_invalid', `tile of ${bytes.length} bytes is not ${width ?? '1..256'} hashes`);
  }
  const out: Uint8Array[] = [];
  for (let i = 0; i < n; i++) out.push(copy(bytes, i * HASH_SIZE, (i + 1) * HASH_SIZE));
  return out;
}

/**
 * The tiles a HashReader for a tree of `size` reads while `compute` runs (computed with dummy
 * hashes), in first-read order: fetch these (in parallel) before computing the real thing.
 */
function tilesRead(size: number, compute: (read: HashReader) => unknown): Tile[] {
  const seen = new Map<string, Tile>();
  const dummy = new Uint8Array(TILE_WIDTH * HASH_SIZE);
  compute(
    tileHashReader(size, (tile) => {
      seen.set(`${tile.level}/${tile.index}`, tile);
      return dummy;
    }),
  );
  return [...seen.values()];
}

/** Tiles needed to compute the root of the tree of `size`. */
export function treeRootTiles(size: number): Tile[] {
  return tilesRead(size, (read) => treeRoot(size, read));
}

/** Tiles needed to compute the inclusion proof of leaf `index` in the tree of `size` (and its root). */
export function inclusionProofTiles(index: number, size: number): Tile[] {
  return tilesRead(size, (read) => [inclusionProof(index, size, read), treeRoot(size, read)]);
}

/** Tiles needed to compute the consistency proof oldSize → newSize (and both roots). */
export function consistencyProofTiles(oldSize: number, newSize: number): Tile[] {
  return tilesRead(newSize, (read) => [consistencyProof(oldSize, newSize, read), treeRoot(oldSize, read), treeRoot(newSize, read)]);
}

/** An entry bundle: each entry as a big-endian uint16 length and its bytes; 1..256 entries. */
export function encodeEntryBundle(entries: readonly Uint8Array[]): Uint8Array {
  if (entries.length < 1 || entries.length > TILE_WIDTH) {
    throw new TileError('entry_bundle_invalid', `an entry bundle holds 1..${TILE_WIDTH} entries`);
  }
  let total = 0;
  for (const e of entries) {
    if (e.length > MAX_ENTRY_SIZE) {
      throw new TileError('entry_too_large', `entry of ${e.length} bytes exceeds ${MAX_ENTRY_SIZE}`);
    }
    total += 2 + e.length;
  }
  const out = new Uint8Array(total);
  let p = 0;
  for (const e of entries) {
    out[p] = e.length >>> 8;
    out[p + 1] = e.length & 0xff;
    out.set(e, p + 2);
    p += 2 + e.length;
  }
  return out;
}

/**
 * Decode an entry bundle strictly: 1..256 complete entries and no trailing bytes; with `width`,
 * exactly that many entries. Throws TileError `entry_bundle_invalid`. Entries are copies.
 */
export function decodeEntryBundle(bytes: Uint8Array, width?: number): Uint8Array[] {
  const entries: Uint8Array[] = [];
  let p = 0;
  while (p < bytes.length) {
    if (entries.length === TILE_WIDTH) throw new TileError('entry_bundle_invalid', `more than ${TILE_WIDTH} entries`);
    if (p + 2 > bytes.length) throw new TileError('entry_bundle_invalid', 'truncated length prefix');
    const len = bytes[p]! * 256 + bytes[p + 1]!;
    if (p + 2 + len > bytes.length) throw new TileError('entry_bundle_invalid', 'truncated entry');
    entries.push(copy(bytes, p + 2, p + 2 + len));
    p += 2 + len;
  }
  if (entries.length === 0) throw new TileError('entry_bundle_invalid', 'empty entry bundle');
  if (width !== undefined && entries.length !== width) {
    throw new TileError('entry_bundle_invalid', `expected ${width} entries, got ${entries.length}`);
  }
  return entries;
}
