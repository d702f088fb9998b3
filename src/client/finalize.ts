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
import { FINALIZED_V, type FinalityFailureCode, type FinalityOptions, type FinalityResult, type MemberResult } from '../verify/finalize.ts';
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
    // Re-validate a set built in code: one name (or one key) twice would count one receipt twice.
    set = makeWitnessSet(given.threshold, given.members);
  } catch (e) {
    if (!(e instanceof ClientError)) throw e;
    const members = Array.isArray(given.members) ? given.members : [];
    return {
      said: '',
      threshold: given.threshold,
      valid: 0,
      members: members.map((m) => ({ name: m.name, status: 'missing' as const })),
      outsiders: [],
      final: false,
      code: 'witness_set_invalid',
      reason: e.message,
    };
  }
  const said = witnessSetSaid(set);
  const base = {
    said,
    threshold: set.threshold,
    valid: 0,
    members: [] as MemberResult[],
    outsiders: [] as { name: string; receipt: number }[],
  };
  const stop = (code: FinalityFailureCode, reason: string): FinalityResult => ({ ...base, final: false, code, reason });
  if (opts.expectedSaid !== undefined && opts.expectedSaid !== said)
    return stop('said_mismatch', `the witness set's SAID is ${said}, expected ${opts.expectedSaid}`);
  if (anchor.witnessSet.said !== said)
    return stop('witness_set_mismatch', `the anchor commits to witness set ${anchor.witnessSet.said}, not ${said}`);
  if (anchor.witnessSet.threshold !== set.threshold) {
    return stop('threshold_mismatch', `the anchor's threshold ${anchor.witnessSet.threshold} differs from the set's ${set.threshold}`);
  }
  if (!verifyPartySignature(anchor)) return stop('party_signature_invalid', 'the party signature of the anchor does not verify');
  // Pinned by the caller, or (having just verified it) the key the anchor carries.
  const party: PinnedParty = opts.party ?? { curve: anchor.sigParty.curve, publicKey: anchor.sigParty.publicKey };
  if (opts.party !== undefined) {
    try {
      verifyPartyPin(anchor, opts.party);
    } catch (e) {
      if (!(e instanceof VerificationError)) throw e;
      return stop(e.code === 'party_signature_invalid' ? 'party_signature_invalid' : 'party_key_mismatch', e.message);
    }
  }

  const byMember = new Map<string, MemberResult>();
  let firstInvalid: (MemberResult & { status: 'invalid' }) | undefined;
  receipts.forEach((r, i) => {
    const member = findMember(set, r.cosignature.witness_name);
    if (member === undefined) {
      base.outsiders.push({ name: r.cosignature.witness_name, receipt: i });
      return;
    }
    let result: MemberResult;
    try {
      const v = verifyReceipt(anchor, r, memberPin(member), party);
      result = { name: member.name, status: 'valid', treeSize: v.treeSize, leafIndex: v.leafIndex };
    } catch (e) {
      if (!(e instanceof VerificationError)) throw e;
      const invalid = { name: member.name, status: 'invalid' as const, code: e.code, reason: e.message };
      firstInvalid ??= invalid;
      result = invalid;
    }
    const prev = byMember.get(member.name);
    // A member is valid when one of its receipts is; the first failure is kept otherwise.
    if (prev === undefined || (prev.status === 'invalid' && result.status === 'valid')) byMember.set(member.name, result);
  });
  base.members = set.members.map((m) => byMember.get(m.name) ?? { name: m.name, status: 'missing' });
  base.valid = base.members.filter((m) => m.status === 'valid').length;
  if (opts.strict === true && firstInvalid !== undefined) {
    const bad = firstInvalid;
    return stop('receipt_invalid', `receipt of ${bad.name} is invalid (${bad.code}): ${bad.reason}`);
  }
  if (base.valid < set.threshold) {
    const failed = base.members
      .filter((m) => m.status !== 'valid')
      .map((m) => (m.status === 'invalid' ? `${m.name}: ${m.code}` : `${m.name}: missing`));
    return stop('threshold_not_met', `${base.valid} of ${set.threshold} required valid cosignatures (${failed.join('; ')})`);
  }
  return {
    ...base,
    final: true,
    code: 'final',
    reason: `final: ${base.valid} of ${set.members.length} witnesses (threshold ${set.threshold})`,
  };
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
    anchor = decodeAnchor(d.anchor as AnchorWire, '/anchor');
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
