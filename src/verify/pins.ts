/**
 * What a caller pins, checked before anything is verified against it: a witness key and a party
 * key are bytes of the right length, or their hex text (the form `/health`, the registry and the
 * CLI print). Anything else — a wrong length, a non-hex string, a base64 key, an unknown curve —
 * is VerificationError `usage`, never a verdict about the response (a wrong pin must not read as
 * `wrong_witness` or `party_key_mismatch`). Also the SDK's hex helpers.
 */
import type { Curve } from '../anchor/types.ts';
import { decodeHex as decodeHexStrict, encodeHex as encodeHexStrict } from '../encoding/hex.ts';
import { usage } from './errors.ts';

/** Hex text → bytes (either case, no `0x`); with `length`, exactly that many bytes. Throws VerificationError `usage`. */
export function decodeHex(text: string, length?: number): Uint8Array {
  if (typeof text !== 'string') usage(`expected a hex string, got ${typeof text}`);
  try {
    return decodeHexStrict(text, length);
  } catch (e) {
    return usage(`not ${length === undefined ? '' : `${length} bytes of `}hex: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Bytes → lowercase hex. */
export function encodeHex(bytes: Uint8Array): string {
  if (!(bytes instanceof Uint8Array)) usage('expected a Uint8Array');
  return encodeHexStrict(bytes);
}

/** Key lengths by curve: Ed25519 32 bytes, P-256 33 (compressed SEC1). */
const KEY_LENGTH: Record<Curve, number> = { ed25519: 32, p256: 33 };

/** A pinned key given as bytes or hex text, as exactly `length` bytes; `usage` otherwise (`what` names it). */
export function pinnedBytes(key: unknown, length: number, what: string): Uint8Array {
  if (key instanceof Uint8Array) {
    if (key.length !== length) usage(`${what} must be ${length} bytes, got ${key.length}`);
    return key;
  }
  if (typeof key === 'string') {
    try {
      return decodeHexStrict(key, length);
    } catch {
      return usage(
        `${what} must be ${length} bytes, or ${length * 2} hex characters; got a string of ${key.length} characters that is not`,
      );
    }
  }
  return usage(`${what} must be a Uint8Array or a hex string, got ${key === null ? 'null' : typeof key}`);
}

/** A witness pin with its key as bytes (its name and log origin checked too). */
export function witnessPin<W extends { publicKey: Uint8Array | string; logOrigin: string; name?: string }>(
  witness: W,
): Omit<W, 'publicKey'> & { publicKey: Uint8Array } {
  if (typeof witness !== 'object' || (witness as unknown) === null) usage('the pinned witness must be an object { publicKey, logOrigin }');
  if (typeof witness.logOrigin !== 'string' || witness.logOrigin === '')
    usage('the pinned witness logOrigin must be a non-empty string (the key name of its checkpoints)');
  if (witness.name !== undefined && typeof witness.name !== 'string') usage('the pinned witness name must be a string');
  return { ...witness, publicKey: pinnedBytes(witness.publicKey, 32, 'the pinned witness publicKey (Ed25519)') };
}

/** A party key pin with its key as bytes of its curve's length. */
export function partyKeyPin(key: { curve: Curve; publicKey: Uint8Array | string }): { curve: Curve; publicKey: Uint8Array } {
  if (typeof key !== 'object' || (key as unknown) === null) usage('a pinned party key must be an object { curve, publicKey }');
  const curve = key.curve as unknown;
  if (curve !== 'ed25519' && curve !== 'p256')
    usage(`a pinned party key's curve must be "ed25519" or "p256", got ${JSON.stringify(curve)}`);
  return { curve, publicKey: pinnedBytes(key.publicKey, KEY_LENGTH[curve], `the pinned party publicKey (${curve})`) };
}
