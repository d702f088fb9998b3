/**
 * SeedRecords packed into fixed-size slots of one growing ArrayBuffer, for the sequencer's seed
 * cache (committed-cache.ts). A cached record lives for seconds, long enough to outlive every
 * scavenge; as objects (record, anchor, witness set, party signature, cosignature, five byte arrays
 * each with an ArrayBuffer of its own, a bigint) each one was copied, promoted and later swept in
 * the old generation (issue 28 goal 2). Here a record is bytes and numbers in its slot plus two
 * string references (owner and witness-set SAID, shared with the previous record when equal): no
 * object per record. `read` builds a fresh record (fresh arrays), so what a caller does with it
 * never reaches the slot.
 *
 * A record this layout cannot hold exactly (a duplicity proof, an unexpected length or curve, a
 * cumulative outside u128) is not packed: `write` returns false and the cache keeps it as an object.
 */
import { PUBLIC_KEY_LENGTH, SIGNATURE_LENGTH, type Curve } from '../anchor/types.ts';
import type { SeedRecord } from '../store/types.ts';

/** Byte offsets inside a slot; the numbers first (8-byte aligned for the Float64 and BigUint64 views). */
const INDEX = 0;
const TIMESTAMP = 8;
const CREATED_AT = 16;
const COSIGNED_AT = 24;
const LEAF_INDEX = 32;
const THRESHOLD = 40;
const CUMULATIVE_LO = 48;
const CUMULATIVE_HI = 56;
const SEED_ID = 64;
const HEAD = 96;
const PARTY_SIGNATURE = 128;
const COSIGNATURE = PARTY_SIGNATURE + SIGNATURE_LENGTH;
const PUBLIC_KEY = COSIGNATURE + SIGNATURE_LENGTH;
const CURVE = PUBLIC_KEY + 33;
/** Bytes per slot (a multiple of 8). */
export const SEED_SLOT_BYTES = Math.ceil((CURVE + 1) / 8) * 8;

const CURVES: readonly Curve[] = ['ed25519', 'p256'];
const U64 = 0xffff_ffff_ffff_ffffn;

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** True when `r` round-trips through a slot exactly (deep-equal on read). */
function packable(r: SeedRecord): boolean {
  const a = r.latest;
  const sp = a.sigParty;
  return (
    !('duplicity' in r) &&
    typeof r.owner === 'string' &&
    typeof a.witnessSet.said === 'string' &&
    r.seedId.length === 32 &&
    sameBytes(r.seedId, a.seedId) &&
    a.head.length === 32 &&
    CURVES.includes(sp.curve) &&
    sp.publicKey.length === PUBLIC_KEY_LENGTH[sp.curve] &&
    sp.signature.length === SIGNATURE_LENGTH &&
    r.cosignature.signature.length === SIGNATURE_LENGTH &&
    typeof a.cumulative === 'bigint' &&
    a.cumulative >= 0n &&
    a.cumulative >> 128n === 0n &&
    typeof a.index === 'number' &&
    typeof a.timestamp === 'number' &&
    typeof r.createdAt === 'number' &&
    typeof r.cosignature.timestamp === 'number' &&
    typeof r.cosignature.leafIndex === 'number' &&
    typeof a.witnessSet.threshold === 'number'
  );
}

export class SeedSlab {
  private bytes: Uint8Array;
  private f64: Float64Array;
  private u64: BigUint64Array;
  private readonly owner: string[] = [];
  private readonly said: string[] = [];
  private readonly max: number;

  /** Room for `initial` slots, grown by doubling up to `max`. */
  constructor(max: number, initial = 256) {
    this.max = max;
    const slots = Math.max(1, Math.min(max, initial));
    this.bytes = new Uint8Array(slots * SEED_SLOT_BYTES);
    this.f64 = new Float64Array(this.bytes.buffer);
    this.u64 = new BigUint64Array(this.bytes.buffer);
  }

  /** Pack `r` into `slot` (< max); false (slot untouched) when the layout cannot hold it exactly. */
  write(slot: number, r: SeedRecord): boolean {
    if (slot < 0 || slot >= this.max) throw new RangeError(`slot ${slot} outside 0..${this.max - 1}`);
    if (!packable(r)) return false;
    while ((slot + 1) * SEED_SLOT_BYTES > this.bytes.length) this.grow();
    const o = slot * SEED_SLOT_BYTES;
    const a = r.latest;
    const f = o / 8;
    this.f64[f + INDEX / 8] = a.index;
    this.f64[f + TIMESTAMP / 8] = a.timestamp;
    this.f64[f + CREATED_AT / 8] = r.createdAt;
    this.f64[f + COSIGNED_AT / 8] = r.cosignature.timestamp;
    this.f64[f + LEAF_INDEX / 8] = r.cosignature.leafIndex;
    this.f64[f + THRESHOLD / 8] = a.witnessSet.threshold;
    this.u64[f + CUMULATIVE_LO / 8] = a.cumulative & U64;
    this.u64[f + CUMULATIVE_HI / 8] = a.cumulative >> 64n;
    this.bytes.set(r.seedId, o + SEED_ID);
    this.bytes.set(a.head, o + HEAD);
    this.bytes.set(a.sigParty.signature, o + PARTY_SIGNATURE);
    this.bytes.set(r.cosignature.signature, o + COSIGNATURE);
    this.bytes.fill(0, o + PUBLIC_KEY, o + CURVE);
    this.bytes.set(a.sigParty.publicKey, o + PUBLIC_KEY);
    this.bytes[o + CURVE] = CURVES.indexOf(a.sigParty.curve);
    // Keep the string already held when equal, so the new record's copy can die young.
    const owner = this.owner[slot];
    this.owner[slot] = owner === r.owner ? owner : r.owner;
    const said = this.said[slot];
    this.said[slot] = said === a.witnessSet.said ? said : a.witnessSet.said;
    return true;
  }

  /** A fresh SeedRecord from `slot` (written before). */
  read(slot: number): SeedRecord {
    const o = slot * SEED_SLOT_BYTES;
    const f = o / 8;
    const b = this.bytes;
    const curve = CURVES[b[o + CURVE]!]!;
    const seedId = b.slice(o + SEED_ID, o + SEED_ID + 32);
    return {
      seedId,
      owner: this.owner[slot]!,
      createdAt: this.f64[f + CREATED_AT / 8]!,
      latest: {
        seedId: seedId.slice(),
        index: this.f64[f + INDEX / 8]!,
        head: b.slice(o + HEAD, o + HEAD + 32),
        cumulative: (this.u64[f + CUMULATIVE_HI / 8]! << 64n) | this.u64[f + CUMULATIVE_LO / 8]!,
        timestamp: this.f64[f + TIMESTAMP / 8]!,
        witnessSet: { said: this.said[slot]!, threshold: this.f64[f + THRESHOLD / 8]! },
        sigParty: {
          curve,
          publicKey: b.slice(o + PUBLIC_KEY, o + PUBLIC_KEY + PUBLIC_KEY_LENGTH[curve]),
          signature: b.slice(o + PARTY_SIGNATURE, o + PARTY_SIGNATURE + SIGNATURE_LENGTH),
        },
      },
      cosignature: {
        signature: b.slice(o + COSIGNATURE, o + COSIGNATURE + SIGNATURE_LENGTH),
        timestamp: this.f64[f + COSIGNED_AT / 8]!,
        leafIndex: this.f64[f + LEAF_INDEX / 8]!,
      },
    };
  }

  /** Forget `slot`'s strings (its bytes are overwritten by the next write). */
  clear(slot: number): void {
    this.owner[slot] = '';
    this.said[slot] = '';
  }

  private grow(): void {
    const slots = Math.min(this.max, (this.bytes.length / SEED_SLOT_BYTES) * 2);
    const bytes = new Uint8Array(slots * SEED_SLOT_BYTES);
    bytes.set(this.bytes);
    this.bytes = bytes;
    this.f64 = new Float64Array(bytes.buffer);
    this.u64 = new BigUint64Array(bytes.buffer);
  }
}
