/** Party keys (SPEC §3.1): Ed25519 or P-256, as PKCS#8 PEM text. File I/O is the caller's (src/keys/keyfile.ts). */
import type { KeyObject } from 'node:crypto';
import type { Curve } from '../anchor/types.ts';
import { ed25519PrivateKeyFromPem, ed25519PrivateKeyToPem, ed25519PublicKeyBytes, generateEd25519 } from '../crypto/ed25519.ts';
import { generateP256, p256PrivateKeyFromPem, p256PrivateKeyToPem, p256PublicKeyBytes } from '../crypto/p256.ts';
import { ClientError } from './errors.ts';

export interface PartyKey {
  curve: Curve;
  privateKey: KeyObject;
  /** Ed25519: 32 bytes; P-256: 33-byte compressed SEC1. */
  publicKey: Uint8Array;
}

export function generatePartyKey(curve: Curve): PartyKey {
  const { privateKey, publicKey } = curve === 'ed25519' ? generateEd25519() : generateP256();
  return { curve, privateKey, publicKey };
}

export function partyKeyToPem(key: PartyKey): string {
  return key.curve === 'ed25519' ? ed25519PrivateKeyToPem(key.privateKey) : p256PrivateKeyToPem(key.privateKey);
}

/** Load a PKCS#8 PEM party key; the curve comes from the key. */
export function partyKeyFromPem(pem: string): PartyKey {
  try {
    const privateKey = ed25519PrivateKeyFromPem(pem);
    return { curve: 'ed25519', privateKey, publicKey: generateFrom(privateKey, 'ed25519') };
  } catch {
    try {
      const privateKey = p256PrivateKeyFromPem(pem);
      return { curve: 'p256', privateKey, publicKey: generateFrom(privateKey, 'p256') };
    } catch {
      throw new ClientError('party_key_invalid', 'not an unencrypted PKCS#8 PEM Ed25519 or P-256 private key');
    }
  }
}

function generateFrom(privateKey: KeyObject, curve: Curve): Uint8Array {
  return curve === 'ed25519' ? ed25519PublicKeyBytes(privateKey) : p256PublicKeyBytes(privateKey);
}
