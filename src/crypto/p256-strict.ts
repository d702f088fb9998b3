/**
 * The strict ECDSA P-256 rules on bytes alone (no node: import), shared by the server's verifier
 * (src/crypto/p256.ts, node:crypto) and the portable one (src/crypto/webcrypto.ts, WebCrypto):
 * 33-byte compressed SEC1 keys (02|03 ‖ x, x < p), 64-byte r ‖ s signatures with r, s in [1, n−1]
 * and low S (s ≤ (n−1)/2), so that a signature has exactly one accepted encoding. Plus point
 * decompression in BigInt, since WebCrypto need not import compressed points.
 */

/** Field prime p, curve coefficient b and group order n of P-256 (a = −3). */
export const P256_P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
const B = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn;
export const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
export const P256_HALF_N = P256_N >> 1n; // (n − 1) / 2, n being odd

export function bigIntFromBytes(bytes: Uint8Array, start: number, end: number): bigint {
  let v = 0n;
  for (let i = start; i < end; i++) v = (v << 8n) | BigInt(bytes[i]!);
  return v;
}

export function bytes32FromBigInt(v: bigint): Uint8Array {
  const out = new Uint8Array(32);
  let x = v;
  for (let i = 31; i >= 0; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

/** 33 bytes, prefix 02 or 03, x < p. */
export function isCompressedP256Encoding(publicKey: Uint8Array): boolean {
  if (publicKey.length !== 33 || (publicKey[0] !== 0x02 && publicKey[0] !== 0x03)) return false;
  return bigIntFromBytes(publicKey, 1, 33) < P256_P;
}

/**
 * The byte-level rules every P-256 verification applies before the curve arithmetic. `highS:
 * 'accept'` lifts the low-S rule (s may be up to n−1) for the one place SPEC allows it: KEL event
 * signatures (§3.5), whose signers do not normalize and whose identity is the event's SAID.
 */
export function p256StrictPrecheck(publicKey: Uint8Array, signature: Uint8Array, highS: 'reject' | 'accept' = 'reject'): boolean {
  if (signature.length !== 64 || !isCompressedP256Encoding(publicKey)) return false;
  const r = bigIntFromBytes(signature, 0, 32);
  const s = bigIntFromBytes(signature, 32, 64);
  return r !== 0n && r < P256_N && s !== 0n && (highS === 'accept' ? s < P256_N : s <= P256_HALF_N);
}

function modPow(base: bigint, exp: bigint, m: bigint): bigint {
  let result = 1n;
  let b = base % m;
  let e = exp;
  while (e > 0n) {
    if ((e & 1n) === 1n) result = (result * b) % m;
    b = (b * b) % m;
    e >>= 1n;
  }
  return result;
}

/**
 * The uncompressed SEC1 encoding (04 ‖ x ‖ y) of a compressed key, or null when the encoding is not
 * canonical or no curve point has that x. y² = x³ − 3x + b; p ≡ 3 (mod 4), so y = rhs^((p+1)/4).
 */
export function decompressP256(publicKey: Uint8Array): Uint8Array | null {
  if (!isCompressedP256Encoding(publicKey)) return null;
  const p = P256_P;
  const x = bigIntFromBytes(publicKey, 1, 33);
  const rhs = (((x * x) % p) * x - 3n * x + B + 3n * p) % p;
  let y = modPow(rhs, (p + 1n) >> 2n, p);
  if ((y * y) % p !== rhs) return null;
  if ((y & 1n) !== BigInt(publicKey[0]! & 1)) {
    if (y === 0n) return null;
    y = p - y;
  }
  const out = new Uint8Array(65);
  out[0] = 0x04;
  out.set(publicKey.subarray(1), 1);
  out.set(bytes32FromBigInt(y), 33);
  return out;
}
