/**
 * Finalization (docs/client.md): an anchor is final under a witness set when at least `threshold`
 * distinct members returned a receipt that verifies under the key the SET pins (never the one the
 * receipt carries). Results are typed per member (valid / missing / invalid with its code);
 * `strict` makes any invalid receipt fail the whole verification. Also the finalized bundle
 * (`anchor-witness/finalized/v1`) that `party submit` writes and `verify finalized` checks.
 */
import { decodeAnchor, encodeAnchor } from '../anchor/codec.ts';
import { verifyPartySignature } from '../anchor/party-signature.ts';
import type { Anchor, AnchorWire } from '../anchor/types.ts';
import {
  FINALIZED_V,
  invalidSetResult,
  notFinal,
  setBindingFailure,
  tallyFinality,
  type FinalityOptions,
  type FinalityResult,
  type MemberResult,
} from '../verify/finalize.ts';
import { ClientError } from './errors.ts';
import { parseReceipt, verifyPartyPin, verifyReceipt, VerificationError, type PinnedParty, type Receipt } from './verify-anchor.ts';
import {
  encodeWitnessSet,
  findMember,
  makeWitnessSet,
  memberPin,
  parseWitnessSet,
  witnessSetSaid,
  type WitnessSet,
  type WitnessSetWire,
} from './witness-set.ts';

export { FINALIZED_V } from '../verify/finalize.ts';
export type { FinalityCode, FinalityFailureCode, FinalityOptions, FinalityResult, MemberResult } from '../verify/finalize.ts';

export interface FinalizedBundle {
  anchor: Anchor;
  witnessSet: WitnessSet;
  receipts: Receipt[];
}

export interface FinalizedBundleWire {
  v: typeof FINALIZED_V;
  anchor: AnchorWire;
  witness_set: WitnessSetWire;
  receipts: Receipt[];
}

export function verifyFinalized(
  anchor: Anchor,
  given: WitnessSet,
  receipts: readonly Receipt[],
  opts: FinalityOptions = {},
): FinalityResult {
  let set: WitnessSet;
  try {
    set = makeWitnessSet(given.threshold, given.members);
  } catch (e) {
    if (!(e instanceof ClientError)) throw e;
    return invalidSetResult(given, e.message);
  }
  const said = witnessSetSaid(set);
  const unbound = setBindingFailure(anchor, set, said, opts);
  if (unbound !== undefined) return unbound;
  if (!verifyPartySignature(anchor))
    return notFinal(set, said, 'party_signature_invalid', 'the party signature of the anchor does not verify');
  // Pinned by the caller, or (having just verified it) the key the anchor carries.
  const party: PinnedParty = opts.party ?? { curve: anchor.sigParty.curve, publicKey: anchor.sigParty.publicKey };
  if (opts.party !== undefined) {
    try {
      verifyPartyPin(anchor, opts.party);
    } catch (e) {
      if (!(e instanceof VerificationError)) throw e;
      return notFinal(set, said, e.code === 'party_signature_invalid' ? 'party_signature_invalid' : 'party_key_mismatch', e.message);
    }
  }
  const results = receipts.map((r): MemberResult | undefined => {
    const member = findMember(set, r.cosignature.witness_name);
    if (member === undefined) return undefined;
    try {
      const v = verifyReceipt(anchor, r, memberPin(member), party);
      return { name: member.name, status: 'valid', treeSize: v.treeSize, leafIndex: v.leafIndex };
    } catch (e) {
      if (!(e instanceof VerificationError)) throw e;
      return { name: member.name, status: 'invalid', code: e.code, reason: e.message };
    }
  });
  return tallyFinality(set, said, receipts, results, opts);
}

export function verifyFinalizedBundle(bundle: FinalizedBundle, opts: FinalityOptions = {}): FinalityResult {
  return verifyFinalized(bundle.anchor, bundle.witnessSet, bundle.receipts, opts);
}

export function encodeFinalizedBundle(b: FinalizedBundle): FinalizedBundleWire {
  return {
    v: FINALIZED_V,
    anchor: encodeAnchor(b.anchor),
    witness_set: encodeWitnessSet(b.witnessSet),
    receipts: b.receipts.map((r) => ({ cosignature: r.cosignature, inclusion: r.inclusion })),
  };
}

/** Parse a bundle document (ClientError `bundle_invalid` / `witness_set_invalid`). */
export function parseFinalizedBundle(doc: unknown): FinalizedBundle {
  const bad = (m: string): never => {
    throw new ClientError('bundle_invalid', `invalid finalized-anchor bundle: ${m}`);
  };
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return bad('not a JSON object');
  const d = doc as Record<string, unknown>;
  for (const k of Object.keys(d)) if (!['v', 'anchor', 'witness_set', 'receipts'].includes(k)) bad(`unknown field ${JSON.stringify(k)}`);
  if (d.v !== FINALIZED_V) bad(`v must be ${FINALIZED_V}`);
  if (typeof d.anchor !== 'object' || d.anchor === null) bad('anchor missing');
  let anchor: Anchor;
  try {
    anchor = decodeAnchor(d.anchor, '/anchor');
  } catch (e) {
    return bad((e as Error).message);
  }
  const witnessSet = parseWitnessSet(d.witness_set);
  if (!Array.isArray(d.receipts)) return bad('receipts must be an array');
  const receipts = d.receipts.map((r: unknown, i) => {
    try {
      return parseReceipt(r, `/receipts/${i}`);
    } catch (e) {
      return bad((e as Error).message);
    }
  });
  return { anchor, witnessSet, receipts };
}
