/**
 * Note verifier and signer keys: vkey strings `<name>+<hex8 key ID>+<base64(type ‖ public key)>`
 * and the verifier/signer objects for signature types 0x01 (Ed25519 over the note text) and 0x04
 * (cosignature/v1). Other types (0x02 ECDSA, 0x05 RFC 6962, 0x06 ML-DSA-44, …) are refused with
 * `unsupported_key_type`.
 */
import type { KeyObject } from 'node:crypto';
import { checkEd25519PublicKey, ed25519PublicKeyBytes, signEd25519, verifyEd25519 } from '../crypto/ed25519.ts';
import { decodeBase64, encodeBase64 } from '../encoding/base64.ts';
import { cosignatureMessage, decodeCosignatureBytes, encodeCosignatureBytes, toCosignatureTimestamp } from './cosignature.ts';
import { NoteError } from './errors.ts';
import {
  SIG_TYPE_COSIGNATURE_V1,
  SIG_TYPE_ED25519,
  checkKeyName,
  isValidKeyName,
  type NoteKeyType,
  type NoteSigner,
  type NoteVerifier,
} from './signed-note.ts';
import { computeKeyId } from './key-id.ts';

// The key interfaces live beside the note rules that use them; they are re-exported here for
// callers that build keys.
export type { NoteKeyType, NoteSigner, NoteVerifier } from './signed-note.ts';

export function keyIdHex(keyId: number): string {
  return keyId.toString(16).padStart(8, '0');
}

/** `<name>+<hex8 key ID>+<base64(type ‖ public key)>` with the recommended key ID. */
export function formatVkey(name: string, type: NoteKeyType, publicKey: Uint8Array): string {
  checkKeyName(name);
  const raw = new Uint8Array(1 + publicKey.length);
  raw[0] = type;
  raw.set(publicKey, 1);
  return `${name}+${keyIdHex(computeKeyId(name, type, publicKey))}+${encodeBase64(raw)}`;
}

function type01Input(text: Uint8Array, signature: Uint8Array): { message: Uint8Array; signature: Uint8Array } {
  return { message: text, signature };
}

function type04Input(text: Uint8Array, signature: Uint8Array): { message: Uint8Array; signature: Uint8Array } | null {
  try {
    const decoded = decodeCosignatureBytes(signature);
    return { message: cosignatureMessage(text, decoded.timestamp), signature: decoded.signature };
  } catch {
    return null;
  }
}

function makeVerifier(name: string, type: NoteKeyType, publicKey: Uint8Array): NoteVerifier {
  checkKeyName(name);
  checkEd25519PublicKey(publicKey);
  const pk = Uint8Array.from(publicKey);
  const ed25519Input = type === SIG_TYPE_ED25519 ? type01Input : type04Input;
  return {
    name,
    keyId: computeKeyId(name, type, pk),
    type,
    publicKey: pk,
    vkey: formatVkey(name, type, pk),
    ed25519Input,
    verify: (text, signature) => {
      const input = ed25519Input(text, signature);
      return input !== null && verifyEd25519(pk, input.message, input.signature);
    },
  };
}

/** Verifier for Ed25519 note signatures (type 0x01). Throws on an invalid name or key. */
export function ed25519NoteVerifier(name: string, publicKey: Uint8Array): NoteVerifier {
  return makeVerifier(name, SIG_TYPE_ED25519, publicKey);
}

/** Verifier for cosignature/v1 witness cosignatures (type 0x04). Throws on an invalid name or key. */
export function cosignatureNoteVerifier(name: string, publicKey: Uint8Array): NoteVerifier {
  return makeVerifier(name, SIG_TYPE_COSIGNATURE_V1, publicKey);
}

function badVkey(message: string): NoteError {
  return new NoteError('invalid_vkey', message);
}

/**
 * Parse a vkey. The name is everything before the first `+`, the key ID the 8 hex digits (either
 * case) before the second; the base64 part may itself contain `+`. The key ID must be the one
 * computed from name, type and key; the key must pass checkEd25519PublicKey (its KeyError codes
 * propagate). Throws `invalid_vkey` or `unsupported_key_type`.
 */
export function parseVkey(vkey: string): NoteVerifier {
  const i1 = vkey.indexOf('+');
  const i2 = i1 < 0 ? -1 : vkey.indexOf('+', i1 + 1);
  if (i2 < 0) throw badVkey('vkey must be <name>+<hex key ID>+<base64 key>');
  const name = vkey.slice(0, i1);
  const idHex = vkey.slice(i1 + 1, i2);
  if (!isValidKeyName(name)) throw badVkey('invalid key name in vkey');
  if (!/^[0-9a-fA-F]{8}$/.test(idHex)) throw badVkey('vkey key ID must be 8 hex digits');
  let raw: Uint8Array;
  try {
    raw = decodeBase64(vkey.slice(i2 + 1));
  } catch {
    throw badVkey('vkey key is not canonical padded base64');
  }
  const type = raw[0];
  if (type !== SIG_TYPE_ED25519 && type !== SIG_TYPE_COSIGNATURE_V1) {
    throw new NoteError(
      'unsupported_key_type',
      `unsupported signature type ${type === undefined ? '(none)' : `0x${type.toString(16).padStart(2, '0')}`}`,
    );
  }
  const publicKey = raw.subarray(1);
  if (publicKey.length !== 32) throw badVkey(`Ed25519 vkey key must be 32 bytes, got ${publicKey.length}`);
  const v = makeVerifier(name, type, publicKey);
  if (v.keyId !== Number.parseInt(idHex, 16)) throw badVkey(`vkey key ID ${idHex} does not match the key (expected ${keyIdHex(v.keyId)})`);
  return v;
}

/** The signer matching ed25519NoteVerifier: Ed25519 (type 0x01) over the note text. */
export function ed25519NoteSigner(name: string, privateKey: KeyObject): NoteSigner & { verifier: NoteVerifier } {
  const verifier = ed25519NoteVerifier(name, ed25519PublicKeyBytes(privateKey));
  return { name, keyId: verifier.keyId, verifier, sign: (text) => signEd25519(privateKey, text) };
}

/**
 * The signer matching cosignatureNoteVerifier: cosignature/v1 (type 0x04) at `timestamp` (POSIX
 * seconds, a parameter; nothing here reads a clock).
 */
export function cosignatureNoteSigner(
  name: string,
  privateKey: KeyObject,
  timestamp: bigint | number,
): NoteSigner & { verifier: NoteVerifier; timestamp: bigint } {
  const t = toCosignatureTimestamp(timestamp);
  const verifier = cosignatureNoteVerifier(name, ed25519PublicKeyBytes(privateKey));
  return {
    name,
    keyId: verifier.keyId,
    verifier,
    timestamp: t,
    sign: (text) => encodeCosignatureBytes(t, signEd25519(privateKey, cosignatureMessage(text, t))),
  };
}
