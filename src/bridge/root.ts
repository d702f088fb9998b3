/**
 * Root binding (SPEC §7): a token is only issued for a `sub` (= `chain[0].issuer`) that is tied to
 * `root_public_key`. The root is bound if and only if `chain[0].issuer` is
 *  (a) the `did:key` of that key,
 *  (b) `did:keri:B…`, the non-transferable CESR Ed25519 prefix of that key
 *      (`B` + base64url(0x00 ‖ key) without its first character), or
 *  (c) listed, exactly as written, with that key in the trusted-roots file.
 * Transferable KERI identifiers (`did:keri:D…`, `did:keri:E…`) are self-certifying only through a
 * key event log this bridge does not read, so they are accepted only via (c).
 */
import { ed25519ToDidKey } from '../crypto/ed25519.ts';
import { encodeBase64url } from '../encoding/base64.ts';
import { BridgeError } from './errors.ts';
import type { TrustedRoots } from './trusted-roots.ts';

export const DID_KERI = 'did:keri:';
export const DID_KEY = 'did:key:';

/** The CESR non-transferable Ed25519 prefix of a key: `B` + base64url(0x00 ‖ key)[1:] (44 characters). */
export function keriNonTransferablePrefix(publicKey: Uint8Array): string {
  if (publicKey.length !== 32) throw new RangeError('Ed25519 public key must be 32 bytes');
  const padded = new Uint8Array(33);
  padded.set(publicKey, 1);
  return 'B' + encodeBase64url(padded).slice(1);
}

export type RootBinding = 'did_key' | 'keri_non_transferable' | 'trusted_roots';

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

/**
 * did:key encoding is a bijection (multicodec prefix + base58btc), so comparing the issuer with the
 * did:key of the root key is the same as decoding the issuer, and far cheaper than decoding and
 * re-validating the point (the key already verified the link-0 signature).
 */
function didKeyMatches(issuer: string, rootKey: Uint8Array): boolean {
  return issuer === ed25519ToDidKey(rootKey);
}

function listed(issuer: string, rootKey: Uint8Array, roots: TrustedRoots | undefined): boolean {
  const party = roots?.registry.parties.get(issuer);
  if (party === undefined) return false;
  return party.keys.some((k) => k.curve === 'ed25519' && bytesEqual(k.publicKey, rootKey));
}

/** How `issuer` is bound to `rootKey`; throws BridgeError `untrusted_root` when it is not. */
export function bindRoot(issuer: string, rootKey: Uint8Array, roots: TrustedRoots | undefined): RootBinding {
  if (issuer.startsWith(DID_KEY) && didKeyMatches(issuer, rootKey)) return 'did_key';
  if (issuer === DID_KERI + keriNonTransferablePrefix(rootKey)) return 'keri_non_transferable';
  if (issuer.startsWith(DID_KERI) && listed(issuer, rootKey, roots)) return 'trusted_roots';
  const shown = JSON.stringify(issuer.length > 120 ? issuer.slice(0, 120) + '…' : issuer);
  throw new BridgeError(
    'untrusted_root',
    `chain[0].issuer ${shown} is not bound to root_public_key: it is neither the did:key nor the did:keri:B… prefix of that key, nor listed with it in the trusted roots`,
  );
}
