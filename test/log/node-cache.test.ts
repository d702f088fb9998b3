// The log's node cache (src/log/node-cache.ts): 32-byte hashes in one ring of slots with an
// open-addressed table of slot numbers. Its semantics are those of the Map it replaced: bounded,
// evicting the oldest inserted, a re-insert of a present key a no-op, a hit not reordering. The
// model test compares it with that Map over many random operations on a small table (long probe
// clusters, wrap-around, deletions inside clusters), so a broken index or slot offset fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeCache } from '../../src/log/node-cache.ts';
import { nodeKey } from '../../src/tlog/frontier.ts';
import { rng } from '../helpers/prng.ts';

/** A deterministic 32-byte hash per key (so a wrong slot shows as wrong bytes). */
function hashOf(key: number, salt = 0): Uint8Array {
  const h = new Uint8Array(32);
  let x = (key * 2654435761 + salt * 40503 + 12345) % 4294967296;
  for (let i = 0; i < 32; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    h[i] = x & 0xff;
  }
  h[0] = key & 0xff; // distinct keys rarely share bytes, equal keys always do
  return h;
}

/** The Map-based cache this one replaced, as the reference. */
class ModelCache {
  readonly map = new Map<number, Uint8Array>();
  readonly max: number;
  constructor(max: number) {
    this.max = max;
  }
  get(key: number): Uint8Array | undefined {
    return this.map.get(key);
  }
  set(key: number, hash: Uint8Array): void {
    if (this.map.has(key)) return;
    this.map.set(key, hash.slice());
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
}

const levelIndex = (key: number): [number, number] => [key % 64, Math.floor(key / 64)];

void test('a get after a set returns equal bytes in an array of its own', () => {
  const c = new NodeCache(16);
  const h = hashOf(7);
  c.set(3, 1000, h);
  const got = c.get(3, 1000)!;
  assert.deepEqual(got, h);
  assert.notEqual(got, h);
  got.fill(0xee); // the caller's copy
  h.fill(0xdd); // the inserted array, after the set
  assert.deepEqual(c.get(3, 1000), hashOf(7));
  assert.equal(c.get(3, 1001), undefined);
  assert.equal(c.get(4, 1000), undefined);
});

void test('bounded: evicts the oldest inserted; a re-insert keeps the bytes and the age; a hit does not reorder', () => {
  const c = new NodeCache(3);
  c.set(0, 1, hashOf(1));
  c.set(0, 2, hashOf(2));
  c.set(0, 3, hashOf(3));
  c.set(0, 1, hashOf(1, 9)); // present: no-op, still the oldest
  assert.deepEqual(c.get(0, 1), hashOf(1));
  assert.ok(c.get(0, 1)); // a hit: still the oldest
  c.set(0, 4, hashOf(4));
  assert.equal(c.size, 3);
  assert.equal(c.get(0, 1), undefined);
  assert.deepEqual(
    [2, 3, 4].map((i) => c.get(0, i)),
    [2, 3, 4].map((i) => hashOf(i)),
  );
  c.set(0, 5, hashOf(5));
  c.set(0, 6, hashOf(6));
  assert.equal(c.get(0, 2), undefined);
  assert.equal(c.get(0, 3), undefined);
  assert.deepEqual(c.get(0, 6), hashOf(6));
});

void test('setKey and set agree on the key; keys beyond 2^32 and up to the safe range work', () => {
  const c = new NodeCache(8);
  const big = [2 ** 40 + 5, 2 ** 47 - 1, 2 ** 32, 2 ** 32 + 64];
  for (const index of big) c.setKey(nodeKey(5, index), hashOf(index % 1000));
  for (const index of big) assert.deepEqual(c.get(5, index), hashOf(index % 1000));
  c.setKey(Number.MAX_SAFE_INTEGER, hashOf(1));
  const [level, index] = levelIndex(Number.MAX_SAFE_INTEGER);
  assert.deepEqual(c.get(level, index), hashOf(1));
});

void test('what is not a 32-byte hash is not cached; a bound of 0 caches nothing', () => {
  const c = new NodeCache(4);
  c.set(0, 1, new Uint8Array(31));
  c.set(0, 2, new Uint8Array(33));
  assert.equal(c.get(0, 1), undefined);
  assert.equal(c.get(0, 2), undefined);
  assert.equal(c.size, 0);
  const none = new NodeCache(0);
  none.set(0, 1, hashOf(1));
  assert.equal(none.get(0, 1), undefined);
  assert.equal(none.size, 0);
});

void test('growing past its first allocation keeps every entry and its bytes', () => {
  const c = new NodeCache(5000);
  for (let i = 0; i < 5000; i++) c.set(i % 7, i, hashOf(i));
  assert.equal(c.size, 5000);
  for (let i = 0; i < 5000; i++) assert.deepEqual(c.get(i % 7, i), hashOf(i), `entry ${i}`);
  for (let i = 5000; i < 5100; i++) c.set(i % 7, i, hashOf(i));
  for (let i = 0; i < 100; i++) assert.equal(c.get(i % 7, i), undefined, `entry ${i} was the oldest`);
  for (let i = 100; i < 5100; i++) assert.deepEqual(c.get(i % 7, i), hashOf(i), `entry ${i}`);
});

void test('random inserts and lookups agree with the Map it replaced (small tables: clusters, wrap-around, deletions)', () => {
  for (const [max, keySpace, seed] of [
    [1, 4, 1],
    [2, 6, 2],
    [7, 40, 3],
    [64, 200, 4],
    [64, 100_000, 5],
    [1500, 4000, 6],
  ] as const) {
    const c = new NodeCache(max);
    const m = new ModelCache(max);
    const r = rng(seed);
    // Keys from a small space (frequent repeats and re-inserts after eviction), some far apart.
    const keyAt = (u: number): number => {
      const k = Math.floor(u * keySpace);
      return k % 5 === 0 ? k * 2 ** 30 + (k % 64) : k;
    };
    for (let op = 0; op < 20_000; op++) {
      const key = keyAt(r());
      const [level, index] = levelIndex(key);
      if (r() < 0.6) {
        c.setKey(key, hashOf(key));
        m.set(key, hashOf(key));
      } else {
        assert.deepEqual(c.get(level, index), m.get(key), `max ${max}, op ${op}, key ${key}`);
      }
      assert.equal(c.size, m.map.size);
    }
    for (const [key, h] of m.map) {
      const [level, index] = levelIndex(key);
      assert.deepEqual(c.get(level, index), h, `max ${max}: key ${key} at the end`);
    }
  }
});
