/**
 * Note verifier and signer keys: vkey strings `<name>+<hex8 key ID>+<base64(type ‖ public key)>`
 * and the verifier/signer objects for signature types 0x01 (Ed25519 over the note text), 0x04
 * (cosignature/v1, Ed25519) and 0x06 (subtree/v1, ML-DSA-44 over a checkpoint, SPEC §5.2). Other
 * types (0x02 ECDSA, 0x05 RFC 6962, …) are refused with `unsupported_key_type`.
 */
import type { KeyObject } from 'node:crypto';
import { checkEd25519PublicKey, ed25519PublicKeyBytes, signEd25519, verifyEd25519 } from '../crypto/ed25519.ts';
import { ML_DSA_44_PUBLIC_KEY_LENGTH, verifyMlDsa44 } from '../crypto/ml-dsa.ts';
import { decodeBase64, encodeBase64 } from '../encoding/base64.ts';
import { cosignatureMessage, decodeCosignatureBytes } from './cosignature.ts';
import { NoteError } from './errors.ts';
import {
  SIG_TYPE_COSIGNATURE_V1,
  SIG_TYPE_ED25519,
  SIG_TYPE_SUBTREE_V1,
  checkKeyName,
  isValidKeyName,
  type NoteKeyType,
  type NoteSigner,
  type NoteVerifier,
  type SignatureCheck,
} from './signed-note.ts';
import { computeKeyId } from './key-id.ts';
import { checkpointSubtreeInput } from './subtree-message.ts';

// The key interfaces live beside the note rules that use them; they are re-exported here for
// callers that build keys.
export type { NoteKeyType, NoteSigner, NoteVerifier, SignatureCheck } from './signed-note.ts';

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

/** The signature check of a note signature by key (name, type, publicKey); null when malformed. */
function signedInputFor(name: string, type: NoteKeyType, publicKey: Uint8Array) {
  return (text: Uint8Array, signature: Uint8Array): SignatureCheck | null => {
    if (type === SIG_TYPE_ED25519) return { algorithm: 'ed25519', publicKey, message: text, signature };
    if (type === SIG_TYPE_COSIGNATURE_V1) {
      try {
        const decoded = decodeCosignatureBytes(signature);
        return { algorithm: 'ed25519', publicKey, message: cosignatureMessage(text, decoded.timestamp), signature: decoded.signature };
      } catch {
        return null;
      }
    }
    const input = checkpointSubtreeInput(name, text, signature);
    return input === null ? null : { algorithm: 'ml-dsa-44', publicKey, message: input.message, signature: input.signature };
  };
}

/** Throws unless `publicKey` is a usable key of `type` (Ed25519 rules, or 1312 bytes for ML-DSA-44). */
function checkPublicKey(type: NoteKeyType, publicKey: Uint8Array): void {
  if (type !== SIG_TYPE_SUBTREE_V1) {
    checkEd25519PublicKey(publicKey);
    return;
  }
  if (publicKey.length !== ML_DSA_44_PUBLIC_KEY_LENGTH)
    throw new NoteError('invalid_vkey', `ML-DSA-44 key must be ${ML_DSA_44_PUBLIC_KEY_LENGTH} bytes, got ${publicKey.length}`);
}

function makeVerifier(name: string, type: NoteKeyType, publicKey: Uint8Array): NoteVerifier {
  checkKeyName(name);
  checkPublicKey(type, publicKey);
  const pk = Uint8Array.from(publicKey);
  const signedInput = signedInputFor(name, type, pk);
  return {
    name,
    keyId: computeKeyId(name, type, pk),
    type,
    publicKey: pk,
    vkey: formatVkey(name, type, pk),
    signedInput,
    verify: (text, signature) => {
      const check = signedInput(text, signature);
      if (check === null) return false;
      return check.algorithm === 'ed25519'
        ? verifyEd25519(pk, check.message, check.signature)
        : verifyMlDsa44(pk, check.message, check.signature);
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

/**
 * Verifier for subtree/v1 ML-DSA-44 signatures over checkpoints (type 0x06): a witness's ML-DSA-44
 * cosignatures, or a log's checkpoint signature (name = the log key's name; any T). `publicKey` is
 * the raw 1312-byte key. Its `verify` throws KeyError `mldsa_unsupported` on a runtime without
 * ML-DSA-44 (the key itself parses anywhere).
 */
export function subtreeNoteVerifier(name: string, publicKey: Uint8Array): NoteVerifier {
  return makeVerifier(name, SIG_TYPE_SUBTREE_V1, publicKey);
}

function badVkey(message: string): NoteError {
  return new NoteError('invalid_vkey', message);
}

/**
 * Parse a vkey. The name is everything before the first `+`, the key ID the 8 hex digits (either
 * case) before the second; the base64 part may itself contain `+`. The key ID must be the one
 * computed from name, type and key; an Ed25519 key must pass checkEd25519PublicKey (its KeyError
 * codes propagate), an ML-DSA-44 key (type 0x06) be 1312 bytes. Throws `invalid_vkey` or
 * `unsupported_key_type`.
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
  if (type !== SIG_TYPE_ED25519 && type !== SIG_TYPE_COSIGNATURE_V1 && type !== SIG_TYPE_SUBTREE_V1) {
    throw new NoteError(
      'unsupported_key_type',
      `unsupported signature type ${type === undefined ? '(none)' : `0x${type.toString(16).padStart(2, '0')}`}`,
    );
  }
  const publicKey = raw.subarray(1);
  const want = type === SIG_TYPE_SUBTREE_V1 ? ML_DSA_44_PUBLIC_KEY_LENGTH : 32;
  if (publicKey.length !== want)
    throw badVkey(`${type === SIG_TYPE_SUBTREE_V1 ? 'ML-DSA-44' : 'Ed25519'} vkey key must be ${want} bytes, got ${publicKey.length}`);
  const v = makeVerifier(name, type, publicKey);
  if (v.keyId !== Number.parseInt(idHex, 16)) throw badVkey(`vkey key ID ${idHex} does not match the key (expected ${keyIdHex(v.keyId)})`);
  return v;
}

/** The signer matching ed25519NoteVerifier: Ed25519 (type 0x01) over the note text. */
export function ed25519NoteSigner(name: string, privateKey: KeyObject): NoteSigner & { verifier: NoteVerifier } {
  const verifier = ed25519NoteVerifier(name, ed25519PublicKeyBytes(privateKey));
  return { name, keyId: verifier.keyId, verifier, sign: (text) => signEd25519(privateKey, text) };
}
