/**
 * The sequencer's cache of committed seed state: the latest SeedRecord per seed (bounded LRU, null
 * for a seed known to be absent). It learns a batch's records only after the batch commits, so it
 * never shows uncommitted state, and it is correct only while this process is the store's single
 * writer (the SQLite driver guarantees it with its lock); the quota windows are src/anchoring/quota.ts.
 *
 * Laid out for the garbage collector (issue 28 goal 2): records sit packed in slots of one
 * ArrayBuffer (seed-slab.ts), the recency order is a doubly linked list of slot numbers in typed
 * arrays, and the Map from seed to slot keeps its first key string, so replacing a seed's record
 * or reading it allocates nothing that stays. `get` returns a fresh record each time.
 */
import type { SeedRecord } from '../store/types.ts';
import { SeedSlab } from './seed-slab.ts';

/** What a slot holds. */
const PACKED = 1;
const ABSENT = 2;
/** A record the slab cannot pack (a frozen seed, say), kept as the object it is. */
const OBJECT = 3;
const NONE = -1;

export class SeedCache {
  private readonly max: number;
  /** Seed key → slot; slots 0 … size − 1 are in use. */
  private readonly slots = new Map<string, number>();
  /** Slot → its key (the string the Map holds). */
  private readonly keys: string[] = [];
  private readonly kind: Uint8Array;
  private readonly objects: (SeedRecord | undefined)[] = [];
  private readonly slab: SeedSlab;
  /** Recency: `newer`/`older` links per slot, from `newest` to `oldest`. */
  private readonly newer: Int32Array;
  private readonly older: Int32Array;
  private newest = NONE;
  private oldest = NONE;

  constructor(max = 50_000) {
    this.max = Math.max(0, Math.floor(max));
    this.kind = new Uint8Array(this.max);
    this.newer = new Int32Array(this.max);
    this.older = new Int32Array(this.max);
    this.slab = new SeedSlab(Math.max(1, this.max));
  }

  /** Seeds held (≤ the bound). */
  get size(): number {
    return this.slots.size;
  }

  /** undefined = not cached; null = known absent. A hit becomes the most recently used. */
  get(key: string): SeedRecord | null | undefined {
    const slot = this.slots.get(key);
    if (slot === undefined) return undefined;
    this.touch(slot);
    const kind = this.kind[slot];
    return kind === PACKED ? this.slab.read(slot) : kind === ABSENT ? null : this.objects[slot];
  }

  /** Cache `v` for `key` as the most recently used, evicting the least recently used beyond the bound. */
  set(key: string, v: SeedRecord | null): void {
    if (this.max === 0) return;
    let slot = this.slots.get(key);
    if (slot !== undefined) this.touch(slot);
    else {
      if (this.slots.size < this.max) slot = this.slots.size;
      else {
        slot = this.oldest;
        this.slots.delete(this.keys[slot]!);
        this.unlink(slot);
      }
      this.slots.set(key, slot);
      this.keys[slot] = key;
      this.pushNewest(slot);
    }
    this.objects[slot] = undefined;
    if (v === null) {
      this.kind[slot] = ABSENT;
      this.slab.clear(slot);
    } else if (this.slab.write(slot, v)) this.kind[slot] = PACKED;
    else {
      this.kind[slot] = OBJECT;
      this.objects[slot] = v;
      this.slab.clear(slot);
    }
  }

  private touch(slot: number): void {
    if (slot === this.newest) return;
    this.unlink(slot);
    this.pushNewest(slot);
  }

  private pushNewest(slot: number): void {
    this.older[slot] = this.newest;
    this.newer[slot] = NONE;
    if (this.newest !== NONE) this.newer[this.newest] = slot;
    this.newest = slot;
    if (this.oldest === NONE) this.oldest = slot;
  }

  private unlink(slot: number): void {
    const newer = this.newer[slot]!;
    const older = this.older[slot]!;
    if (newer === NONE) this.newest = older;
    else this.older[newer] = older;
    if (older === NONE) this.oldest = newer;
    else this.newer[older] = newer;
  }
}
