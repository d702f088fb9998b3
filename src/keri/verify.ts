/**
 * One KEL on its own: SPEC §3.5 verification rules 2–7, in the SPEC's order (rule by rule; within
 * a rule, the lowest sequence number; rule 2's checks event by event in the order listed). The
 * first failure is the reason. Rule 1 (parsing) is done by the caller (evaluate.ts), rule 8
 * (delegation) across KELs by delegation.ts.
 *
 * Verification can start in the middle: given the state after event `from − 1` (cached from an
 * earlier evaluation of the same events), only events `from…` are checked.
 */
import type { EventAttachment } from './attachments.ts';
import type { KelReason } from './errors.ts';
import { computeSaid, type KelEvent } from './event.ts';
import { decodeQb64 } from './qb64.ts';
import { checkSignatures, type KelSignatureVerifier, type Threshold } from './signatures.ts';
import { parseTholder, tholderMet, type Tholder } from './tholder.ts';
import type { KelKey } from './types.ts';

/** The state after an event, with what the next event is checked against. */
export interface WalkState {
  s: number;
  d: string;
  keys: KelKey[];
  kt: Tholder;
  n: string[];
  nt: Tholder;
  backers: string[];
  /** The last establishment event (sn, SAID): this one, or the one an ixn follows. */
  estS: number;
  estD: string;
  delegator: string | null;
  inception: 'icp' | 'dip';
  /** Inception `n` was non-empty. */
  transferable: boolean;
  /** A rotation set `n` to []. */
  abandoned: boolean;
  /** Inception `c` has EO (no ixn) / DND (may not delegate). */
  establishmentOnly: boolean;
  doNotDelegate: boolean;
}

export interface ParsedEvent {
  event: KelEvent;
  attachment: EventAttachment;
}

export interface RuleFailure {
  reason: KelReason;
  seq: number | null;
  detail: string;
}

export type RangeResult = { ok: true; states: WalkState[] } | ({ ok: false } & RuleFailure);

/** A threshold as the signature check counts it. */
const counting = (t: Tholder): Threshold => ({ met: (indices) => tholderMet(t, indices), text: t.text });

/** Rule 4's thresholds of an establishment event, read once its rule 4 check passed (or not: then never used for signatures). */
function thresholdsOf(e: KelEvent): { kt: Tholder; nt: Tholder } {
  const kt = parseTholder(e.kt, e.k.length, 'kt');
  const nt = parseTholder(e.nt, e.n.length, 'nt');
  const never: Tholder = { weighted: false, value: Infinity, size: 0, text: 'invalid' };
  return { kt: typeof kt === 'string' ? never : kt, nt: typeof nt === 'string' ? never : nt };
}

/** Rule 2 for event j. */
function checkLinks(prefix: string, events: readonly ParsedEvent[], j: number): RuleFailure | null {
  const e = events[j]!.event;
  if (e.v !== e.expectedVersion)
    return { reason: 'version_mismatch', seq: j, detail: `v is ${e.v}, the event's size needs ${e.expectedVersion}` };
  const said = computeSaid(e);
  if (e.d !== said) return { reason: 'said_mismatch', seq: j, detail: `d is ${e.d}, the SAID is ${said}` };
  if (e.sn !== j) return { reason: 'sequence_invalid', seq: j, detail: `s is "${e.s}" at position ${j}` };
  if (e.i !== prefix) return { reason: 'prefix_mismatch', seq: j, detail: `i is ${e.i}, the KEL's prefix is ${prefix}` };
  if (j > 0) {
    // An inception has no `p`: a second one is named for what it is rather than as a broken chain.
    if (e.t === 'icp' || e.t === 'dip') return { reason: 'multiple_inceptions', seq: j, detail: `a second inception (${e.t})` };
    const prior = events[j - 1]!.event.d;
    if (e.p !== prior) return { reason: 'chain_broken', seq: j, detail: `p is ${String(e.p)}, the prior event's d is ${prior}` };
  }
  return null;
}

/** Rule 3, on event 0. */
function checkInception(e: KelEvent): RuleFailure | null {
  if (e.t !== 'icp' && e.t !== 'dip') return { reason: 'not_inception', seq: 0, detail: `the first event is ${e.t}, not icp or dip` };
  if (e.i.startsWith('E')) {
    if (e.i !== e.d) return { reason: 'prefix_invalid', seq: 0, detail: 'a self-addressing prefix must equal the inception SAID' };
    return null;
  }
  if (e.t === 'dip') return { reason: 'prefix_invalid', seq: 0, detail: 'a delegated prefix must be self-addressing (E…)' };
  if (e.k.length !== 1 || e.k[0] !== e.i)
    return { reason: 'prefix_invalid', seq: 0, detail: "a basic prefix must be the inception's only key" };
  const code = decodeQb64(e.i, ['B', '1AAI']);
  if (code !== null && e.n.length > 0)
    return { reason: 'prefix_invalid', seq: 0, detail: 'a non-transferable basic prefix (B/1AAI) needs n = []' };
  return null;
}

const keyId = (k: KelKey): string => `${k.curve}:${Buffer.from(k.raw).toString('hex')}`;

/** Rule 4 on establishment event e (prior = the state before it, null for the inception). Returns the new backer list. */
function checkThresholds(e: KelEvent, j: number, prior: WalkState | null): { failure: RuleFailure | null; backers: string[] } {
  const bad = (detail: string): RuleFailure => ({ reason: 'threshold_invalid', seq: j, detail });
  let backers: string[];
  let backerFailure: RuleFailure | null = null;
  if (e.t === 'icp' || e.t === 'dip') {
    backers = e.b;
    if (new Set(e.b).size !== e.b.length) backerFailure = bad('b lists a backer twice');
  } else {
    const current = prior?.backers ?? [];
    const cut = new Set(e.br);
    const survivors = current.filter((b) => !cut.has(b));
    backers = [...survivors, ...e.ba];
    if (cut.size !== e.br.length || !e.br.every((b) => current.includes(b))) backerFailure = bad('br must name distinct current backers');
    else if (new Set(e.ba).size !== e.ba.length || e.ba.some((b) => survivors.includes(b) || cut.has(b))) {
      backerFailure = bad('ba must be distinct and disjoint from the remaining and the removed backers');
    }
  }
  const kt = parseTholder(e.kt, e.k.length, 'kt');
  if (typeof kt === 'string') return { failure: bad(kt), backers };
  if (!kt.weighted && (kt.value < 1 || kt.value > e.k.length)) return { failure: bad(`kt ${kt.text} with ${e.k.length} key(s)`), backers };
  const nt = parseTholder(e.nt, e.n.length, 'nt');
  if (typeof nt === 'string') return { failure: bad(nt), backers };
  if (!nt.weighted && (e.n.length === 0 ? nt.value !== 0 : nt.value < 1 || nt.value > e.n.length))
    return { failure: bad(`nt ${nt.text} with ${e.n.length} next-key commitment(s)`), backers };
  const bt = e.bt;
  if (new Set(e.keys.map(keyId)).size !== e.keys.length) return { failure: bad('k lists a key twice'), backers };
  if (new Set(e.n).size !== e.n.length) return { failure: bad('n lists a next-key digest twice'), backers };
  if (backerFailure !== null) return { failure: backerFailure, backers };
  if (backers.length === 0 ? bt !== 0 : bt < 1 || bt > backers.length)
    return { failure: bad(`bt ${bt} with ${backers.length} backer(s)`), backers };
  return { failure: null, backers };
}

/** Rule 7 for event e given the state before it. */
function checkSequence(e: KelEvent, j: number, prior: WalkState): RuleFailure | null {
  if (!prior.transferable) return { reason: 'non_transferable', seq: j, detail: 'the inception has n = []: no event may follow' };
  if (prior.abandoned) return { reason: 'abandoned', seq: j, detail: 'a rotation to n = [] abandoned the identifier: no event may follow' };
  if (e.t === 'ixn' && prior.establishmentOnly) return { reason: 'establishment_only', seq: j, detail: 'the inception has EO: no ixn' };
  if (e.t === 'rot' && prior.inception === 'dip')
    return { reason: 'rotation_type_invalid', seq: j, detail: 'a delegated KEL rotates with drt, not rot' };
  if (e.t === 'drt' && prior.inception === 'icp') return { reason: 'rotation_type_invalid', seq: j, detail: 'drt in a KEL begun by icp' };
  if (e.t === 'drt' && e.di !== null && e.di !== prior.delegator) {
    return { reason: 'rotation_type_invalid', seq: j, detail: `drt di ${e.di} differs from the dip's ${String(prior.delegator)}` };
  }
  return null;
}

function stateAfter(e: KelEvent, j: number, prior: WalkState | null, backers: string[]): WalkState {
  if (e.t === 'ixn') return { ...prior!, s: j, d: e.d };
  const base = {
    s: j,
    d: e.d,
    keys: e.keys,
    ...thresholdsOf(e),
    n: e.n,
    backers,
    estS: j,
    estD: e.d,
  };
  if (e.t === 'icp' || e.t === 'dip') {
    return {
      ...base,
      delegator: e.t === 'dip' ? e.di : null,
      inception: e.t,
      transferable: e.n.length > 0,
      abandoned: false,
      establishmentOnly: e.c.includes('EO'),
      doNotDelegate: e.c.includes('DND'),
    };
  }
  return { ...prior!, ...base, abandoned: e.n.length === 0 };
}

/**
 * Rules 2–7 over events[from…] (events[0…from) already verified, `prior` the state after event
 * from − 1, null when from = 0). On success, the state after each verified event. `verify` checks
 * one signature (default: verifyKelSignature).
 */
export function verifyRange(
  prefix: string,
  events: readonly ParsedEvent[],
  from: number,
  prior: WalkState | null,
  verify?: KelSignatureVerifier,
): RangeResult {
  for (let j = from; j < events.length; j++) {
    const f = checkLinks(prefix, events, j);
    if (f !== null) return { ok: false, ...f };
  }
  if (from === 0 && events.length > 0) {
    const f = checkInception(events[0]!.event);
    if (f !== null) return { ok: false, ...f };
  }
  // Rules 4–7 in one walk; the first failure of each rule is kept, the lowest rule wins.
  const firsts: (RuleFailure | null)[] = [null, null, null, null]; // rules 4, 5, 6, 7
  const keep = (rule: number, f: RuleFailure | null): void => {
    if (f !== null && firsts[rule - 4] === null) firsts[rule - 4] = f;
  };
  const states: WalkState[] = [];
  let state = prior;
  for (let j = from; j < events.length; j++) {
    const { event: e, attachment } = events[j]!;
    const establishment = e.t !== 'ixn';
    let backers = state?.backers ?? [];
    if (establishment) {
      const r4 = checkThresholds(e, j, state);
      keep(4, r4.failure);
      backers = r4.backers;
    }
    if (state === null && !establishment) {
      // An ixn first: rule 3 already refused it; nothing to walk from.
      return { ok: false, reason: 'not_inception', seq: j, detail: 'no inception' };
    }
    const keys = establishment ? e.keys : state!.keys;
    const kt = establishment ? thresholdsOf(e).kt : state!.kt;
    // Once rule 4 or 5 has failed, no later signature can change the reason (rules 5 and 6 of a
    // later event lose to it): the signatures of the rest are not verified.
    if (firsts[0] === null && firsts[1] === null) {
      const prior = (e.t === 'rot' || e.t === 'drt') && state !== null ? { n: state.n, nt: counting(state.nt) } : null;
      const check = checkSignatures(keys, e.bytes, attachment.signatures, counting(kt), prior, verify);
      if (!check.ok) {
        const kind = check.rule === 5 ? 'signature_invalid' : 'prior_next_unmet';
        keep(check.rule, { reason: kind, seq: j, detail: check.detail });
      }
    }
    if (state !== null) keep(7, checkSequence(e, j, state));
    state = stateAfter(e, j, state, backers);
    states.push(state);
  }
  const first = firsts.find((f): f is RuleFailure => f !== null);
  if (first !== undefined) return { ok: false, ...first };
  return { ok: true, states };
}
