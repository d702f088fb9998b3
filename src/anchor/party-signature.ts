/** The party signature of SPEC §3.1: curve-tagged Ed25519 or P-256 (low S) over the party message. */
import { verifyEd25519, checkEd25519PublicKey } from '../crypto/ed25519.ts';
import { verifyP256, checkP256PublicKey } from '../crypto/p256.ts';
import { partyMessage } from './messages.ts';
import type { Anchor, Curve } from './types.ts';

/** Throws a typed error when the key is not acceptable for its curve (length, on curve, small order). */
export function checkPartyPublicKey(curve: Curve, publicKey: Uint8Array): void {
  if (curve === 'ed25519') checkEd25519PublicKey(publicKey);
  else checkP256PublicKey(publicKey);
}

/** Check 5 on this thread; `msg` is `partyMessage(a)` when the caller already has it. */
export function verifyPartySignature(a: Anchor, msg: Uint8Array = partyMessage(a)): boolean {
  const { curve, publicKey, signature } = a.sigParty;
  return curve === 'ed25519' ? verifyEd25519(publicKey, msg, signature) : verifyP256(publicKey, msg, signature);
}
