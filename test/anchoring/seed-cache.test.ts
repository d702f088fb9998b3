// The sequencer's committed-seed cache (src/anchoring/committed-cache.ts over seed-slab.ts):
// records packed in slots of one buffer, recency as a linked list of slot numbers. Its semantics
// are those of the Map it replaced (a bounded LRU of SeedRecord | null, a get refreshing the entry)
// and every record read back equals the one written; the model test compares the two over many
// random operations, so a broken slot index, link or field offset fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SeedCache } from '../../src/anchoring/committed-cache.ts';
import { SEED_SLOT_BYTES } from '../../src/anchoring/seed-slab.ts';
import type { Anchor, DuplicityProof } from '../../src/anchor/types.ts';
import type { SeedRecord } from '../../src/store/types.ts';
import { rng } from '../helpers/prng.ts';

function bytes(r: () => number, n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(r() * 256);
  return b;
}

function anchor(r: () => number, seedId: Uint8Array, over: Partial<Anchor> = {}): Anchor {
  const p256 = r() < 0.3;
  return {
    seedId: seedId.slice(),
    index: Math.floor(r() * 2 ** 40),
    head: bytes(r, 32),
    cumulative: BigInt(Math.floor(r() * 2 ** 50)) * BigInt(Math.floor(r() * 2 ** 50)) * BigInt(Math.floor(r() * 2 ** 28)),
    timestamp: 1_700_000_000 + Math.floor(r() * 1e6),
    witnessSet: { said: `EWitnessSet${Math.floor(r() * 3)}`, threshold: 1 + Math.floor(r() * 5) },
    sigParty: { curve: p256 ? 'p256' : 'ed25519', publicKey: bytes(r, p256 ? 33 : 32), signature: bytes(r, 64) },
    ...over,
  };
}

function record(r: () => number, seedId = bytes(r, 32), over: Partial<Anchor> = {}): SeedRecord {
  return {
    seedId,
    owner: `did:keri:EOwner${Math.floor(r() * 4)}`,
    createdAt: 1_700_000_000 + Math.floor(r() * 1e6),
    latest: anchor(r, seedId, over),
    cosignature: { signature: bytes(r, 64), timestamp: 1_700_000_000 + Math.floor(r() * 1e6), leafIndex: Math.floor(r() * 2 ** 45) },
  };
}

const deepCopy = (x: SeedRecord): SeedRecord => structuredClone(x);

/** The Map-based LRU this one replaced, as the reference (values copied, as the slab does). */
class ModelCache {
  readonly map = new Map<string, SeedRecord | null>();
  readonly max: number;
  constructor(max: number) {
    this.max = max;
  }
  get(key: string): SeedRecord | null | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: string, v: SeedRecord | null): void {
    this.map.delete(key);
    this.map.set(key, v === null ? null : deepCopy(v));
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
}

void test('a get after a set returns an equal record with arrays of its own; neither side can change the cache', () => {
  const r = rng(1);
  const c = new SeedCache(8);
  for (const curve of ['ed25519', 'p256'] as const) {
    const rec = record(r, undefined, {
      sigParty: { curve, publicKey: bytes(r, curve === 'p256' ? 33 : 32), signature: bytes(r, 64) },
      cumulative: 2n ** 128n - 1n,
      index: Number.MAX_SAFE_INTEGER,
    });
    const expected = deepCopy(rec);
    c.set(curve, rec);
    const got = c.get(curve)!;
    assert.deepStrictEqual(got, expected);
    assert.notEqual(got, rec);
    assert.notEqual(got.latest.head, rec.latest.head);
    assert.notEqual(got.latest.seedId, got.seedId);
    // Change everything reachable from the returned record and from the one inserted.
    for (const x of [got, rec]) {
      for (const b of [
        x.seedId,
        x.latest.seedId,
        x.latest.head,
        x.latest.sigParty.publicKey,
        x.latest.sigParty.signature,
        x.cosignature.signature,
      ])
        b.fill(0xee);
      x.latest.witnessSet.threshold = 99;
      x.cosignature.leafIndex = 1;
    }
    assert.deepStrictEqual(c.get(curve), expected);
  }
  const zero = record(r, undefined, { cumulative: 0n, index: 0 });
  c.set('zero', zero);
  assert.deepStrictEqual(c.get('zero'), deepCopy(zero));
});

void test('null is a known-absent seed; a key never set is undefined', () => {
  const c = new SeedCache(4);
  c.set('gone', null);
  assert.equal(c.get('gone'), null);
  assert.equal(c.get('never'), undefined);
  const r = rng(2);
  const rec = record(r);
  c.set('gone', rec); // absent → created
  assert.deepStrictEqual(c.get('gone'), deepCopy(rec));
  c.set('gone', null);
  assert.equal(c.get('gone'), null);
});

void test('bounded LRU: a get and a set refresh the entry; the least recently used goes first', () => {
  const r = rng(3);
  const c = new SeedCache(3);
  const recs = Array.from({ length: 5 }, () => record(r));
  c.set('a', recs[0]!);
  c.set('b', recs[1]!);
  c.set('c', recs[2]!);
  assert.ok(c.get('a')); // a is now the newest; b the oldest
  c.set('d', recs[3]!);
  assert.equal(c.size, 3);
  assert.equal(c.get('b'), undefined);
  c.set('c', recs[4]!); // replaces c's record and refreshes it; a is now the oldest
  c.set('e', null);
  assert.equal(c.get('a'), undefined);
  assert.deepStrictEqual(c.get('c'), deepCopy(recs[4]!));
  assert.deepStrictEqual(c.get('d'), deepCopy(recs[3]!));
  assert.equal(c.get('e'), null);
  const none = new SeedCache(0);
  none.set('a', recs[0]!);
  assert.equal(none.get('a'), undefined);
});

void test('a record the slots cannot hold exactly (frozen, cumulative beyond u128, odd lengths) is kept as it is', () => {
  const r = rng(4);
  const c = new SeedCache(8);
  const base = record(r);
  const proof: DuplicityProof = { seedId: base.seedId, index: base.latest.index, anchorA: base.latest, anchorB: anchor(r, base.seedId) };
  const odd: SeedRecord[] = [
    { ...base, duplicity: proof },
    record(r, undefined, { cumulative: 2n ** 128n }),
    { ...base, cosignature: { ...base.cosignature, signature: bytes(r, 65) } },
    { ...base, latest: { ...base.latest, seedId: bytes(r, 32) } }, // seed ids that differ
  ];
  odd.forEach((x, i) => {
    c.set(`odd${i}`, x);
  });
  odd.forEach((x, i) => {
    assert.deepStrictEqual(c.get(`odd${i}`), x);
  });
  // The slot of an object entry packs again once the seed's record fits.
  c.set('odd0', base);
  assert.deepStrictEqual(c.get('odd0'), deepCopy(base));
});

void test('random sets and gets agree with the Map it replaced (slot reuse after eviction, growth, nulls, objects)', () => {
  assert.equal(SEED_SLOT_BYTES % 8, 0);
  for (const [max, seeds, seed] of [
    [1, 3, 11],
    [2, 5, 12],
    [5, 12, 13],
    [300, 700, 14], // past the slab's first 256 slots
  ] as const) {
    const r = rng(seed);
    const c = new SeedCache(max);
    const m = new ModelCache(max);
    const ids = Array.from({ length: seeds }, () => bytes(r, 32));
    for (let op = 0; op < 6000; op++) {
      const i = Math.floor(r() * seeds);
      const key = `seed${i}`;
      const u = r();
      if (u < 0.45) {
        assert.deepStrictEqual(c.get(key), m.get(key), `max ${max}, op ${op}, ${key}`);
      } else {
        const v =
          u < 0.5
            ? null
            : u < 0.53
              ? { ...record(r, ids[i]), duplicity: { seedId: ids[i]!, index: 1, anchorA: anchor(r, ids[i]!), anchorB: anchor(r, ids[i]!) } }
              : record(r, ids[i]);
        c.set(key, v);
        m.set(key, v);
      }
      assert.equal(c.size, m.map.size);
    }
    for (const [key, v] of [...m.map]) assert.deepStrictEqual(c.get(key), v, `max ${max}: ${key} at the end`);
  }
});
