/** Party side of the anchor protocol: sign anchors (Ed25519 or P-256) and build POST /v1/anchor bodies. */
import type { KeyObject } from 'node:crypto';
import { encodeAnchor } from '../anchor/codec.ts';
import { partyMessage } from '../anchor/messages.ts';
import type { Anchor, AnchorWire, Curve } from '../anchor/types.ts';
import { ed25519PublicKeyBytes, signEd25519 } from '../crypto/ed25519.ts';
import { p256PublicKeyBytes, signP256 } from '../crypto/p256.ts';

/** An anchor's fields before the party signs it. */
export type UnsignedAnchor = Omit<Anchor, 'sigParty'>;

/** Sign an anchor with the party key (curve from the key type). */
export function signAnchor(key: KeyObject, curve: Curve, fields: UnsignedAnchor): Anchor {
  const publicKey = curve === 'ed25519' ? ed25519PublicKeyBytes(key) : p256PublicKeyBytes(key);
  const unsigned: Anchor = { ...fields, sigParty: { curve, publicKey, signature: new Uint8Array(64) } };
  const message = partyMessage(unsigned);
  const signature = curve === 'ed25519' ? signEd25519(key, message) : signP256(key, message);
  return { ...unsigned, sigParty: { curve, publicKey, signature } };
}

export interface AnchorRequest {
  anchor: AnchorWire;
  party: { agent: string; root?: string; scope?: string };
}

export function anchorRequest(anchor: Anchor, party: { agent: string; root?: string; scope?: string }): AnchorRequest {
  return { anchor: encodeAnchor(anchor), party };
}
