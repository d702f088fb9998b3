/**
 * Finalization (the one implementation; `anchor-witness/client` re-exports it): an anchor is final under a witness set when at
 * least `threshold` distinct members each returned a receipt that verifies under the key the SET
 * pins, the anchor commits to the set (`witness_set.said`, same threshold) and carries a valid
 * party signature — under the party key the caller pins, else under the key the anchor carries.
 * The set is re-validated so that no receipt or key counts twice. Results are typed per member.
 *
 * The bundle is what `anchor-witness party submit` writes:
 *   {"v": "anchor-witness/finalized/v1", "anchor": Anchor, "witness_set": WitnessSet, "receipts": [Receipt…]}
 */
import { decodeAnchor, encodeAnchor } from '../anchor/codec.ts';
import type { Anchor, AnchorWire } from '../anchor/types.ts';
import { VerificationError, UsageError } from './errors.ts';
import {
  checkPartyKeyPinned,
  parseReceipt,
  verifyPartySignature,
  verifyWitnessReceipt,
  type PinnedParty,
  type Receipt,
} from './receipt.ts';
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

export const FINALIZED_V = 'anchor-witness/finalized/v1';

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

/** The bundle document (`party submit --out`), the set's `d` filled in. */
export async function encodeFinalizedBundle(b: FinalizedBundle): Promise<FinalizedBundleWire> {
  return {
    v: FINALIZED_V,
    anchor: encodeAnchor(b.anchor),
    witness_set: await encodeWitnessSet(b.witnessSet),
    // cosignature_next (SPEC §1.2) is kept: during a witness-key rotation it is what a verifier
    // pinned to the next key counts (a bridge pinning the new set, §7.2)
    receipts: b.receipts.map((r) => ({
      cosignature: r.cosignature,
      ...(r.cosignature_next === undefined ? {} : { cosignature_next: r.cosignature_next }),
      inclusion: r.inclusion,
    })),
  };
}

export type MemberResult =
  | { name: string; status: 'valid'; treeSize: number; leafIndex: number }
  | { name: string; status: 'missing' }
  | { name: string; status: 'invalid'; code: VerificationError['code']; reason: string };

/** Why an anchor is not final. */
export type FinalityFailureCode =
  | 'threshold_not_met'
  | 'witness_set_invalid'
  | 'witness_set_mismatch'
  | 'threshold_mismatch'
  | 'said_mismatch'
  | 'party_key_mismatch'
  | 'party_signature_invalid'
  | 'receipt_invalid';

export type FinalityCode = 'final' | FinalityFailureCode;

interface FinalityCounts {
  /** One line for humans. */
  reason: string;
  /** The set's SAID, computed. */
  said: string;
  threshold: number;
  /** Distinct members with a valid receipt. */
  valid: number;
  /** One entry per member of the set, in set order. */
  members: MemberResult[];
  /** Receipts whose `witness_name` is not a member (never counted). */
  outsiders: { name: string; receipt: number }[];
}

export type FinalityResult =
  (FinalityCounts & { final: true; code: 'final' }) | (FinalityCounts & { final: false; code: FinalityFailureCode });

export interface FinalityOptions {
  /** Any invalid receipt fails the verification (default false: it only fails its member). */
  strict?: boolean;
  /** A SAID obtained independently (e.g. from the party's KEL): the set must have it. */
  expectedSaid?: string;
  /** The party key(s) the caller trusts: the anchor must be signed by one of them (`party_key_mismatch`). */
  party?: PinnedParty;
}

export async function verifyFinalized(
  anchor: Anchor,
  given: WitnessSet,
  receipts: readonly Receipt[],
  opts: FinalityOptions = {},
): Promise<FinalityResult> {
  let set: WitnessSet;
  try {
    set = makeWitnessSet(given.threshold, given.members);
  } catch (e) {
    if (!(e instanceof VerificationError)) throw e;
    return invalidSetResult(given, e.message);
  }
  const said = await witnessSetSaid(set);
  const unbound = setBindingFailure(anchor, set, said, opts);
  if (unbound !== undefined) return unbound;
  // The party's part is the anchor's, the same for every receipt: its signature is verified once
  // here (verifyReceipt would repeat it per receipt), then each receipt's witness part.
  if (!(await verifyPartySignature(anchor)))
    return notFinal(set, said, 'party_signature_invalid', 'the party signature of the anchor does not verify');
  if (opts.party !== undefined) {
    try {
      checkPartyKeyPinned(anchor, opts.party);
    } catch (e) {
      if (!(e instanceof VerificationError)) throw e;
      return notFinal(set, said, 'party_key_mismatch', e.message);
    }
  }
  const results: (MemberResult | undefined)[] = [];
  for (const r of receipts) {
    const member = findMember(set, r.cosignature.witness_name);
    if (member === undefined) {
      results.push(undefined);
      continue;
    }
    try {
      const v = await verifyWitnessReceipt(anchor, r, memberPin(member));
      results.push({ name: member.name, status: 'valid', treeSize: v.treeSize, leafIndex: v.leafIndex });
    } catch (e) {
      if (!(e instanceof VerificationError)) throw e;
      results.push({ name: member.name, status: 'invalid', code: e.code, reason: e.message });
    }
  }
  return tallyFinality(set, said, receipts, results, opts);
}

/** Not final, before any receipt was counted. */
function notFinal(set: WitnessSet, said: string, code: FinalityFailureCode, reason: string): FinalityResult {
  return { said, threshold: set.threshold, valid: 0, members: [], outsiders: [], final: false, code, reason };
}

/** A set built in code that fails re-validation (one name or key twice would count one receipt twice). */
function invalidSetResult(given: WitnessSet, reason: string): FinalityResult {
  const members = Array.isArray(given.members) ? given.members : [];
  return {
    said: '',
    threshold: given.threshold,
    valid: 0,
    members: members.map((m) => ({ name: m.name, status: 'missing' as const })),
    outsiders: [],
    final: false,
    code: 'witness_set_invalid',
    reason,
  };
}

/** The anchor must commit to the set (SAID and threshold), and the set must be the one the caller pinned. */
function setBindingFailure(anchor: Anchor, set: WitnessSet, said: string, opts: FinalityOptions): FinalityResult | undefined {
  if (opts.expectedSaid !== undefined && opts.expectedSaid !== said)
    return notFinal(set, said, 'said_mismatch', `the witness set's SAID is ${said}, expected ${opts.expectedSaid}`);
  if (anchor.witnessSet.said !== said)
    return notFinal(set, said, 'witness_set_mismatch', `the anchor commits to witness set ${anchor.witnessSet.said}, not ${said}`);
  if (anchor.witnessSet.threshold !== set.threshold) {
    const reason = `the anchor's threshold ${anchor.witnessSet.threshold} differs from the set's ${set.threshold}`;
    return notFinal(set, said, 'threshold_mismatch', reason);
  }
  return undefined;
}

/**
 * Count the receipts: `results[i]` is what receipt i showed for its member, undefined when its
 * witness is not a member. A member is valid when one of its receipts is; otherwise its first
 * failure is kept. `strict` fails on any invalid receipt.
 */
function tallyFinality(
  set: WitnessSet,
  said: string,
  receipts: readonly Receipt[],
  results: readonly (MemberResult | undefined)[],
  opts: FinalityOptions,
): FinalityResult {
  const outsiders: { name: string; receipt: number }[] = [];
  const byMember = new Map<string, MemberResult>();
  let firstInvalid: (MemberResult & { status: 'invalid' }) | undefined;
  receipts.forEach((r, i) => {
    const result = results[i];
    if (result === undefined) {
      outsiders.push({ name: r.cosignature.witness_name, receipt: i });
      return;
    }
    if (result.status === 'invalid') firstInvalid ??= result;
    const prev = byMember.get(result.name);
    if (prev === undefined || (prev.status === 'invalid' && result.status === 'valid')) byMember.set(result.name, result);
  });
  const members = set.members.map((m): MemberResult => byMember.get(m.name) ?? { name: m.name, status: 'missing' });
  const valid = members.filter((m) => m.status === 'valid').length;
  const base = { said, threshold: set.threshold, valid, members, outsiders };
  if (opts.strict === true && firstInvalid !== undefined) {
    const bad: MemberResult & { status: 'invalid' } = firstInvalid;
    return { ...base, final: false, code: 'receipt_invalid', reason: `receipt of ${bad.name} is invalid (${bad.code}): ${bad.reason}` };
  }
  if (valid < set.threshold) {
    const failed = members
      .filter((m) => m.status !== 'valid')
      .map((m) => (m.status === 'invalid' ? `${m.name}: ${m.code}` : `${m.name}: missing`));
    const reason = `${valid} of ${set.threshold} required valid cosignatures (${failed.join('; ')})`;
    return { ...base, final: false, code: 'threshold_not_met', reason };
  }
  return { ...base, final: true, code: 'final', reason: `final: ${valid} of ${set.members.length} witnesses (threshold ${set.threshold})` };
}

/** Parse a finalized bundle document (`bundle_invalid`, `witness_set_invalid`). */
export async function parseFinalizedBundle(doc: unknown): Promise<FinalizedBundle> {
  const bad = (m: string): never => {
    throw new VerificationError('bundle_invalid', `invalid finalized-anchor bundle: ${m}`);
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
  const witnessSet = await parseWitnessSet(d.witness_set);
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

/**
 * A finalized bundle (parsed JSON) against a witness set the CALLER pins — the one contract of this
 * name in both entry points (`anchor-witness/verify` and `anchor-witness/client`), stable: callers
 * such as the bridge's freshness gate rely on it.
 *
 *   verifyFinalizedBundle(doc: unknown, opts: FinalityOptions & { witnessSet?: WitnessSet }): Promise<FinalityResult>
 *
 * The bundle's own set must be the one pinned by `opts.expectedSaid` (e.g. from the party's KEL) or
 * given as `opts.witnessSet` (whose SAID is then expected); neither is VerificationError `usage` (a
 * bundle's own set proves nothing: whoever made it chose the witnesses). A document that is not a
 * bundle throws `bundle_invalid` / `witness_set_invalid`; every verdict about the anchor is the
 * returned FinalityResult (`final`, or why not). To judge a bundle under the set it brings
 * (knowingly trusting it), call verifyFinalized(bundle.anchor, bundle.witnessSet, bundle.receipts).
 */
export async function verifyFinalizedBundle(
  doc: unknown,
  opts: FinalityOptions & { witnessSet?: WitnessSet } = {},
): Promise<FinalityResult> {
  if (opts.expectedSaid === undefined && opts.witnessSet === undefined) {
    throw new UsageError(
      "pin the witness set: give expectedSaid (e.g. from the party's KEL) or witnessSet; a bundle's own set proves nothing",
    );
  }
  const bundle = await parseFinalizedBundle(doc);
  const expectedSaid =
    opts.expectedSaid ??
    (opts.witnessSet === undefined ? undefined : await witnessSetSaid(makeWitnessSet(opts.witnessSet.threshold, opts.witnessSet.members)));
  const o: FinalityOptions = { ...opts };
  delete (o as { witnessSet?: unknown }).witnessSet;
  if (expectedSaid !== undefined) o.expectedSaid = expectedSaid;
  return verifyFinalized(bundle.anchor, bundle.witnessSet, bundle.receipts, o);
}
