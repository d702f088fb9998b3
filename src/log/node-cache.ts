/**
 * Committed complete-subtree hashes in memory, kept by the log above every driver. A complete
 * subtree never changes once committed, so the cache stays valid with any number of writers; the
 * log fills it only with nodes read from the store or written by a transaction that committed.
 *
 * Bounded, evicting the oldest inserted. A hit does not reorder: the LRU bookkeeping cost more than
 * it saved on the anchor path, and a hot node that ages out is read once from the database and
 * inserted again.
 *
 * Laid out for the garbage collector (issue 28 goal 2): entries live about half a minute, so as
 * separate objects (a Map entry and a 32-byte array with an ArrayBuffer of its own each) they
 * outlived every scavenge, were copied, promoted and swept in the old generation. Here the hashes
 * sit in one ring of 32-byte slots (insertion order = ring order), found through an open-addressed
 * table of slot numbers in typed arrays: no object per entry. `get` returns a copy, so a caller may
 * keep or change it while the slot is reused.
 */
import { nodeKey } from '../tlog/frontier.ts';

/** Bytes per entry: every tree hash is SHA-256. */
const WIDTH = 32;
const EMPTY = 0;

/** murmur3's 32-bit finaliser over both halves of a nodeKey (a safe integer, ≥ 0). */
function mix(key: number): number {
  let h = (key >>> 0) ^ Math.imul((key / 0x1_0000_0000) >>> 0, 0x9e3779b1);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

export class NodeCache {
  private readonly max: number;
  /** Slot s holds bytes [s·32, s·32 + 32) of `hashes` and its nodeKey in `keys[s]`. */
  private hashes: Uint8Array;
  private keys: Float64Array;
  /** Open addressing, linear probing: slot + 1 per bucket, EMPTY for none; at most half full. */
  private table: Int32Array;
  private mask: number;
  /** Slots in use (they fill 0, 1, … until `max`, then the ring wraps). */
  private used = 0;
  /** Once full: the slot of the oldest entry, the next to be replaced. */
  private oldest = 0;

  constructor(max = 65_536) {
    this.max = Math.max(0, Math.floor(max));
    // Storage grows with use up to `max` (a log that stays small never pays for the whole bound).
    const slots = Math.min(this.max, 1024);
    this.hashes = new Uint8Array(slots * WIDTH);
    this.keys = new Float64Array(slots);
    this.table = new Int32Array(tableSize(slots));
    this.mask = this.table.length - 1;
  }

  /** Entries held (≤ the bound). */
  get size(): number {
    return this.used;
  }

  /** A copy of the hash of node (level, index), if cached. */
  get(level: number, index: number): Uint8Array | undefined {
    const slot = this.find(nodeKey(level, index));
    return slot < 0 ? undefined : this.hashes.slice(slot * WIDTH, slot * WIDTH + WIDTH);
  }

  /** Insert by key (see nodeKey); a key already present keeps its bytes and its age. */
  setKey(key: number, hash: Uint8Array): void {
    // Not a tree hash: not cached (the caller still has it; a later read goes to the store).
    if (this.max === 0 || hash.length !== WIDTH || this.find(key) >= 0) return;
    let slot: number;
    if (this.used < this.max) {
      if (this.used === this.keys.length) this.grow();
      slot = this.used++;
    } else {
      slot = this.oldest;
      this.oldest = slot + 1 === this.max ? 0 : slot + 1;
      this.remove(this.keys[slot]!);
    }
    this.keys[slot] = key;
    this.hashes.set(hash, slot * WIDTH);
    this.place(key, slot);
  }

  set(level: number, index: number, hash: Uint8Array): void {
    this.setKey(nodeKey(level, index), hash);
  }

  /** The slot holding `key`, or −1. */
  private find(key: number): number {
    const { table, keys, mask } = this;
    for (let b = mix(key) & mask; ; b = (b + 1) & mask) {
      const s = table[b]!;
      if (s === EMPTY) return -1;
      if (keys[s - 1] === key) return s - 1;
    }
  }

  /** Drop `key` (present) from the table, shifting back the entries probed past it (no tombstones). */
  private remove(key: number): void {
    const { table, keys, mask } = this;
    let hole = mix(key) & mask;
    while (keys[table[hole]! - 1] !== key) hole = (hole + 1) & mask;
    for (let b = (hole + 1) & mask; table[b] !== EMPTY; b = (b + 1) & mask) {
      const home = mix(keys[table[b]! - 1]!) & mask;
      // The entry at b may fill the hole unless its home lies cyclically in (hole, b].
      const stays = hole <= b ? hole < home && home <= b : hole < home || home <= b;
      if (!stays) {
        table[hole] = table[b]!;
        hole = b;
      }
    }
    table[hole] = EMPTY;
  }

  /** Double the slot storage (up to `max`) and rebuild the table at twice the slots. */
  private grow(): void {
    const slots = Math.min(this.max, this.keys.length * 2);
    const hashes = new Uint8Array(slots * WIDTH);
    hashes.set(this.hashes);
    const keys = new Float64Array(slots);
    keys.set(this.keys);
    this.hashes = hashes;
    this.keys = keys;
    this.table = new Int32Array(tableSize(slots));
    this.mask = this.table.length - 1;
    for (let s = 0; s < this.used; s++) this.place(keys[s]!, s);
  }

  /** Enter `slot` in the table under `key` (absent from it): the first free bucket from its home. */
  private place(key: number, slot: number): void {
    let b = mix(key) & this.mask;
    while (this.table[b] !== EMPTY) b = (b + 1) & this.mask;
    this.table[b] = slot + 1;
  }
}

/** A power of two at least twice `slots` (load factor ≤ ½). */
function tableSize(slots: number): number {
  let n = 2;
  while (n < slots * 2) n *= 2;
  return n;
}
