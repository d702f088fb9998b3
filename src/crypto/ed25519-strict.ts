/**
 * The strict Ed25519 rules on bytes alone, with no curve arithmetic and no node: import, so that
 * the server's verifier (src/crypto/ed25519.ts, node:crypto) and the portable one
 * (src/crypto/webcrypto.ts, WebCrypto) enforce the very same rules:
 *   - 32-byte public key A, 64-byte signature R ‖ S;
 *   - S < L (the group order), compared as a little-endian integer;
 *   - A and R are canonical point encodings: y < p, and the sign bit is clear when x = 0;
 *   - A and R are not small-order points (the identity-key forgery: key 01 00…00 with
 *     R = 01 00…00 and S = 0 "verifies" any message on lax verifiers).
 * Plus checkEd25519PublicKey (key loading: the point must also decompress), in BigInt.
 */
import { KeyError } from './errors.ts';

const P = (1n << 255n) - 19n;
/** Group order L = 2^252 + 27742317777372353535851937790883648493, little-endian bytes. */
const L_LE = Uint8Array.from([
  0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
]);
/** p = 2^255 − 19, little-endian bytes (the top bit of the last byte is the x sign bit). */
const P_LE = Uint8Array.from([
  0xed, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
]);

/**
 * The canonical encodings of the 8 points of small order (the torsion subgroup, of order 8 and
 * cyclic): the identity (0, 1), (0, −1) of order 2, (±√−1, 0) of order 4, and four points of
 * order 8. Every other encoding of these points is non-canonical (y ≥ p, or x = 0 with the sign
 * bit set) and is refused by the canonical-encoding check before this list is consulted, so
 * these 8 byte strings are all that has to be listed. test/crypto/ed25519.test.ts recomputes
 * them with BigInt point arithmetic.
 */
const SMALL_ORDER_HEX = [
  '0100000000000000000000000000000000000000000000000000000000000000', // identity, order 1
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', // (0, −1), order 2
  '0000000000000000000000000000000000000000000000000000000000000000', // (√−1, 0), order 4
  '0000000000000000000000000000000000000000000000000000000000000080', // (−√−1, 0), order 4
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05', // order 8
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85', // order 8
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a', // order 8
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa', // order 8
] as const;
export const ED25519_SMALL_ORDER_ENCODINGS: readonly Uint8Array[] = SMALL_ORDER_HEX.map((h) =>
  Uint8Array.from({ length: 32 }, (_, i) => Number.parseInt(h.slice(2 * i, 2 * i + 2), 16)),
);

/** a < b for 32-byte little-endian integers (the top bit of `a` masked off when `maskTop`). */
function lessThanLE(a: Uint8Array, offset: number, b: Uint8Array, maskTop: boolean): boolean {
  for (let i = 31; i >= 0; i--) {
    const x = i === 31 && maskTop ? a[offset + i]! & 0x7f : a[offset + i]!;
    const y = b[i]!;
    if (x !== y) return x < y;
  }
  return false;
}

/** Canonical point encoding at bytes[offset..offset+32): y < p, and no x = 0 point with the sign bit set. */
function isCanonicalPoint(bytes: Uint8Array, offset: number): boolean {
  if (!lessThanLE(bytes, offset, P_LE, true)) return false;
  if ((bytes[offset + 31]! & 0x80) === 0) return true;
  // Sign bit set: x = 0 exactly when y² = 1, i.e. y = 1 or y = p − 1.
  const y0 = bytes[offset]!;
  let middleZero = true;
  let middleFF = true;
  for (let i = 1; i < 31; i++) {
    const b = bytes[offset + i]!;
    if (b !== 0) middleZero = false;
    if (b !== 0xff) middleFF = false;
  }
  const top = bytes[offset + 31]! & 0x7f;
  if (y0 === 0x01 && middleZero && top === 0) return false; // y = 1
  if (y0 === 0xec && middleFF && top === 0x7f) return false; // y = p − 1
  return true;
}

function isSmallOrderEncoding(bytes: Uint8Array, offset: number): boolean {
  outer: for (const so of ED25519_SMALL_ORDER_ENCODINGS) {
    for (let i = 0; i < 32; i++) if (bytes[offset + i] !== so[i]) continue outer;
    return true;
  }
  return false;
}

/**
 * The strict rules of this verifier that RFC 8032 implementations differ on, checked on the bytes
 * alone: lengths, S < L, R and A canonical and not of small order. Every Ed25519 verification path
 * (node:crypto, the worker pool, WebCrypto) applies them before the curve arithmetic.
 */
export function ed25519StrictPrecheck(publicKey: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  // S < L: S is the second half of the signature, little-endian.
  if (!lessThanLE(signature, 32, L_LE, false)) return false;
  if (!isCanonicalPoint(signature, 0) || isSmallOrderEncoding(signature, 0)) return false;
  return isCanonicalPoint(publicKey, 0) && !isSmallOrderEncoding(publicKey, 0);
}

// ---- Key validation (key loading, registries; not the hot path) ------------------------------

function mod(a: bigint): bigint {
  const r = a % P;
  return r < 0n ? r + P : r;
}

function modPow(base: bigint, exp: bigint): bigint {
  let result = 1n;
  let b = mod(base);
  let e = exp;
  while (e > 0n) {
    if ((e & 1n) === 1n) result = (result * b) % P;
    b = (b * b) % P;
    e >>= 1n;
  }
  return result;
}

/** d = −121665 / 121666 mod p. */
const D = mod(-121665n * modPow(121666n, P - 2n));

/** True when the y coordinate of the encoding has an x on the curve: (y²−1)/(d·y²+1) is a square mod p. */
function decompresses(publicKey: Uint8Array): boolean {
  let y = 0n;
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(i === 31 ? publicKey[i]! & 0x7f : publicKey[i]!);
  const y2 = (y * y) % P;
  const u = mod(y2 - 1n);
  const v = mod(D * y2 + 1n); // never 0: d is not a square mod p
  const x2 = (u * modPow(v, P - 2n)) % P;
  if (x2 === 0n) return true;
  // Euler's criterion: x2 is a square iff x2^((p−1)/2) = 1.
  return modPow(x2, (P - 1n) / 2n) === 1n;
}

/**
 * Validate an Ed25519 public key for use (key loading, registry and log-list validation). Throws
 * KeyError `invalid_public_key` (not 32 bytes), `non_canonical_key`, `not_on_curve` or
 * `small_order_key`. Keys of mixed order (a torsion component added to a prime-order point) pass,
 * as in RFC 8032; they cannot forge signatures for messages their owner did not sign.
 */
export function checkEd25519PublicKey(publicKey: Uint8Array): void {
  if (publicKey.length !== 32) throw new KeyError('invalid_public_key', `Ed25519 public key must be 32 bytes, got ${publicKey.length}`);
  if (!isCanonicalPoint(publicKey, 0)) throw new KeyError('non_canonical_key', 'non-canonical Ed25519 point encoding');
  if (!onCurve(publicKey)) throw new KeyError('not_on_curve', 'Ed25519 public key is not a point on the curve');
  if (isSmallOrderEncoding(publicKey, 0)) throw new KeyError('small_order_key', 'Ed25519 public key has small order');
}

/**
 * `decompresses`, remembered for the last ON_CURVE_MEMO keys: the BigInt square test costs about
 * half a millisecond, and the verifier re-validates the same few pinned keys on every call (each
 * witness set parsed or rebuilt, each note key), which made key validation most of the freshness
 * gate's cost (issue 30). A pure function of the 32 bytes, so remembering it changes no verdict.
 */
const ON_CURVE_MEMO = 1024;
const onCurveMemo = new Map<string, boolean>();

function onCurve(publicKey: Uint8Array): boolean {
  let id = '';
  for (let i = 0; i < 32; i++) id += String.fromCharCode(publicKey[i]!);
  let known = onCurveMemo.get(id);
  if (known === undefined) {
    known = decompresses(publicKey);
    if (onCurveMemo.size >= ON_CURVE_MEMO) onCurveMemo.delete(onCurveMemo.keys().next().value!);
    onCurveMemo.set(id, known);
  }
  return known;
}

export function isValidEd25519PublicKey(publicKey: Uint8Array): boolean {
  try {
    checkEd25519PublicKey(publicKey);
    return true;
  } catch {
    return false;
  }
}
