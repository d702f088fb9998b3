/**
 * Root binding (SPEC §7): a token is only issued for a `sub` (= `chain[0].issuer`) that is tied to
 * `root_public_key`. The root is bound if and only if `chain[0].issuer` is
 *  (a) the `did:key` of that key,
 *  (b) `did:keri:B…`, the non-transferable CESR Ed25519 prefix of that key
 *      (`B` + base64url(0x00 ‖ key) without its first character), or
 *  (c) listed, exactly as written, with that key in the trusted-roots file, or
 *  (d) (SPEC §7.1 rev 4) a *KEL root* of that file (an entry without `keys`, with `--kel-source`)
 *      whose accepted KEL state has that key as a current key (src/bridge/roots-kel.ts).
 * Transferable KERI identifiers (`did:keri:D…`, `did:keri:E…`) are self-certifying only through a
 * key event log, so they are accepted only via (c) or (d).
 */
import { ed25519ToDidKey } from '../crypto/ed25519.ts';
import { encodeBase64url } from '../encoding/base64.ts';
import { rowAhead } from '../registry/tip-raise.ts';
import { BridgeError } from './errors.ts';
import type { TrustedRoots } from './trusted-roots.ts';
import type { KelRootSnapshot } from './roots-kel.ts';

export const DID_KERI = 'did:keri:';
export const DID_KEY = 'did:key:';

/** The CESR non-transferable Ed25519 prefix of a key: `B` + base64url(0x00 ‖ key)[1:] (44 characters). */
export function keriNonTransferablePrefix(publicKey: Uint8Array): string {
  if (publicKey.length !== 32) throw new RangeError('Ed25519 public key must be 32 bytes');
  const padded = new Uint8Array(33);
  padded.set(publicKey, 1);
  return 'B' + encodeBase64url(padded).slice(1);
}

export type RootBinding = 'did_key' | 'keri_non_transferable' | 'trusted_roots' | 'kel_root';

/** The accepted KEL state a token was minted on (the `keri_state` claim, SPEC §7.1). */
export interface KeriState {
  s: number;
  d: string;
}

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

/**
 * The weight of key `index` in a weighted kt (one clause or several, keripy `Tholder`), or null for a
 * numeric kt. Weights run over the keys clause by clause.
 */
function weightOf(kt: unknown, index: number): string | null {
  if (!Array.isArray(kt)) return null;
  const flat: unknown[] = kt.every((c) => Array.isArray(c)) ? (kt as unknown[][]).flat() : kt;
  const w = flat[index];
  return typeof w === 'string' ? w : null;
}

/**
 * SPEC §7.1 binding of a KEL root (its id is a KEL root of the trusted roots): the accepted state of
 * P, not behind the store's tip (503 `registry_behind`), neither revoked by its delegator nor
 * abandoned (403 `root_revoked`), with `rootKey` one current Ed25519 key whose weight in a weighted
 * kt is not "0" (403 `root_key_not_current`, the state's sn in the detail). No state: `untrusted_root`.
 */
export function bindKelRoot(issuer: string, rootKey: Uint8Array, kel: KelRootSnapshot | undefined): KeriState {
  const prefix = issuer.slice(DID_KERI.length);
  const view = kel?.views.get(prefix);
  const state = view?.state ?? null;
  const tip = kel?.tips.get(prefix);
  if (state !== null && rowAhead(tip, state)) {
    throw new BridgeError(
      'registry_behind',
      `the store's accepted tip of ${prefix} (s=${tip!.s}) is ahead of this bridge's KEL state (s=${state.s}): its KEL source is behind; retry once it has caught up`,
    );
  }
  if (state === null) {
    if (tip !== undefined)
      throw new BridgeError('registry_behind', `the store knows an accepted tip of ${prefix} (s=${tip.s}) this bridge has not read yet`);
    const why =
      view === undefined
        ? 'no KEL for it in the KEL source'
        : view.status === 'pending'
          ? 'its dip is not yet anchored by its delegator'
          : `its KEL is refused (${view.reason ?? 'invalid'}) and has no accepted state`;
    throw new BridgeError('untrusted_root', `${issuer} is a KEL root without an accepted key state: ${why}`);
  }
  if (state.revoked)
    throw new BridgeError('root_revoked', `${issuer} is revoked by its delegator ${state.delegator ?? ''} (KEL state s=${state.s})`);
  if (state.abandoned) throw new BridgeError('root_revoked', `${issuer} is abandoned: its KEL rotated to no next keys (s=${state.s})`);
  const kt = (state as { kt?: unknown }).kt;
  const index = state.keys.findIndex((k) => k.curve === 'ed25519' && bytesEqual(k.raw, rootKey));
  if (index < 0 || weightOf(kt, index) === '0') {
    throw new BridgeError(
      'root_key_not_current',
      `root_public_key is not a current signing key of ${issuer} at its accepted KEL state s=${state.s} (d=${state.d})${index >= 0 ? ': its weight in kt is "0"' : ''}; re-issue the chain with a current key`,
    );
  }
  return { s: state.s, d: state.d };
}

/** How `issuer` is bound to `rootKey`, and the KEL state for a KEL root; throws BridgeError when it is not. */
export function bindRootState(
  issuer: string,
  rootKey: Uint8Array,
  roots: TrustedRoots | undefined,
  kel?: KelRootSnapshot,
): { binding: RootBinding; keriState: KeriState | null } {
  if (issuer.startsWith(DID_KERI) && roots?.kelRoots?.has(issuer) === true) {
    return { binding: 'kel_root', keriState: bindKelRoot(issuer, rootKey, kel) };
  }
  return { binding: bindRoot(issuer, rootKey, roots), keriState: null };
}

/** How `issuer` is bound to `rootKey` by (a)–(c); throws BridgeError `untrusted_root` when it is not. */
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
