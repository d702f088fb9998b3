/**
 * Evaluate a whole source snapshot (SPEC §3.5 "Verification", "Caching, reload, rollback"): every
 * KEL is checked on its own (rules 1–7, parse-kel.ts and verify.ts), against the state in force
 * and the store's highest accepted tip (fork, rollback, recovery: history.ts), then across KELs
 * (rule 8, delegation).
 *
 * Incremental: the cache keeps, per prefix, the verified events with the state after each. A
 * source whose hash is unchanged is not verified again; a KEL whose events begin with the cached
 * ones (same JSON values, same attachments) is verified from the first new event on, starting
 * from the cached state. Delegation is re-checked on every evaluation (map lookups), so a
 * delegated KEL follows its delegator's state.
 *
 * On any rejection the last accepted state stays in force; a prefix missing from the snapshot
 * has no evaluation and leaves the cache.
 */
import { MAX_DELEGATION_DEPTH, anchoredCount, indexSeals, type SealIndex } from './delegation.ts';
import { checkHistory, type KelTipRef } from './history.ts';
import { checkShape, commonPrefix, parseEvents, type VerifiedKel } from './parse-kel.ts';
import { keyStateOf } from './state.ts';
import type { KelEvaluation, KelStatus, KeyState, RawKel } from './types.ts';
import { verifyRange, type RuleFailure } from './verify.ts';

/** The accepted KEL in force: the first `count` events of a verified KEL. */
interface AcceptedKel {
  kel: VerifiedKel;
  count: number;
  /** Revocation is sticky: once seen, it stays even if the delegator's KEL later goes missing. */
  revoked: boolean;
  seals?: SealIndex;
}

type Own = { ok: true; kel: VerifiedKel } | ({ ok: false } & RuleFailure);

interface CacheEntry {
  sourceHash: string;
  /** The claimed `d` of each event of the source (null when rule 1 failed). */
  saids: readonly string[] | null;
  own: Own;
  /** The last verified KEL (for incremental reuse). */
  verified: VerifiedKel | null;
  inForce: AcceptedKel | null;
}

/**
 * What evaluateKels remembers between evaluations, per prefix: the verified events and states,
 * the accepted KEL in force and the source hash. Treat as opaque; keep the one returned by the
 * last evaluation and pass it to the next.
 */
export interface KelCache {
  readonly entries: ReadonlyMap<string, CacheEntry>;
}

/** Rules 1–7 for one source, reusing the cache where the events are unchanged. */
function verifyOwn(raw: RawKel, prev: CacheEntry | undefined): { saids: readonly string[] | null; own: Own; verifiedEvents: number } {
  if (prev !== undefined && prev.sourceHash === raw.sourceHash && raw.defect === undefined)
    return { saids: prev.saids, own: prev.own, verifiedEvents: 0 };
  const shape = checkShape(raw);
  if (shape !== null) return { saids: null, own: { ok: false, ...shape }, verifiedEvents: 0 };
  let base: VerifiedKel | null = null;
  let from = 0;
  for (const candidate of [prev?.verified ?? null, prev?.inForce?.kel ?? null]) {
    const k = commonPrefix(candidate, raw);
    if (k > from) {
      from = k;
      base = candidate;
    }
  }
  const parsed = parseEvents(raw, from, from > 0 ? base!.states[from - 1]!.keys.length : null);
  if (!parsed.ok) return { saids: null, own: parsed, verifiedEvents: 0 };
  const events = from > 0 ? [...base!.events.slice(0, from), ...parsed.events] : parsed.events;
  const saids = events.map((e) => e.event.d);
  const result = verifyRange(raw.prefix, events, from, from > 0 ? base!.states[from - 1]! : null);
  const verifiedEvents = events.length - from;
  if (!result.ok) return { saids, own: result, verifiedEvents };
  const states = from > 0 ? [...base!.states.slice(0, from), ...result.states] : result.states;
  return { saids, own: { ok: true, kel: { events, values: raw.events, attachments: raw.attachments, states } }, verifiedEvents };
}

/** A KEL staged for resolveStages (opaque). */
export interface KelStage {
  raw: RawKel;
  prev: CacheEntry | undefined;
  saids: readonly string[] | null;
  own: Own;
  /** Rules 1–7 and history together: the KEL's own verdict. */
  verdict: Own;
  verifiedEvents: number;
}

interface Resolved {
  status: KelStatus;
  inForce: AcceptedKel | null;
  reason: RuleFailure['reason'] | null;
  seq: number | null;
  detail: string | null;
}

/** The accepted KEL in force; the kept object when nothing changed (its seal index is reused). */
function accepted(kept: AcceptedKel | null, kel: VerifiedKel, count: number, revoked: boolean): AcceptedKel {
  if (kept !== null && kept.kel === kel && kept.count === count && kept.revoked === revoked) return kept;
  return { kel, count, revoked };
}

function sealsOf(accepted: AcceptedKel): SealIndex {
  accepted.seals ??= indexSeals(accepted.kel.events, accepted.count);
  return accepted.seals;
}

function tipOf(accepted: AcceptedKel): KelTipRef {
  const w = accepted.kel.states[accepted.count - 1]!;
  return { s: w.s, d: w.d, estS: w.estS, estD: w.estD };
}

function keyState(prefix: string, accepted: AcceptedKel): KeyState {
  return keyStateOf(prefix, accepted.kel.states[accepted.count - 1]!, accepted.revoked);
}

/**
 * Evaluate every KEL of a source snapshot. `previous` is the cache returned by the last
 * evaluation (null at start); `tips` the store's highest accepted tip per prefix (kel_tips): a KEL
 * that does not contain its tip is `rollback` (too short) or `fork` (another SAID there).
 */
export function evaluateKels(
  kels: ReadonlyMap<string, RawKel>,
  previous: KelCache | null,
  tips: ReadonlyMap<string, KelTipRef>,
): { evaluations: Map<string, KelEvaluation>; cache: KelCache } {
  const stages = new Map<string, KelStage>();
  for (const [prefix, raw] of kels) stages.set(prefix, stageKel(raw, previous, tips.get(prefix)));
  return resolveStages(stages);
}

/**
 * One KEL's own verdict (rules 1–7 and history), the costly part of an evaluation: evaluateKels
 * is stageKel for every KEL, then resolveStages. A caller that evaluates KELs one at a time (the
 * registry's worker thread) stages each as it reads it. The stage keeps the RawKel's `source`,
 * `defect` and `sourceHash` only, never its events.
 */
export function stageKel(raw: RawKel, previous: KelCache | null, tip: KelTipRef | undefined): KelStage {
  const prev = previous?.entries.get(raw.prefix);
  const { saids, own, verifiedEvents } = verifyOwn(raw, prev);
  let verdict: Own = own;
  if (saids !== null) {
    const kept = prev?.inForce ?? null;
    const types = own.ok ? own.kel.events.map((e) => e.event.t) : null;
    const accepted = kept === null ? null : { saids: kept.kel.events.slice(0, kept.count).map((e) => e.event.d), tip: tipOf(kept) };
    const history = checkHistory({ saids, types }, accepted, tip);
    if (history !== null) verdict = { ok: false, ...history };
  }
  const bare: RawKel = { ...raw, events: [], attachments: [] };
  return { raw: bare, prev, saids, own, verdict, verifiedEvents };
}

/** Rule 8 and the states in force across the staged KELs (map lookups only): the rest of evaluateKels. */
export function resolveStages(stages: ReadonlyMap<string, KelStage>): { evaluations: Map<string, KelEvaluation>; cache: KelCache } {
  const resolved = new Map<string, Resolved>();
  const inProgress = new Set<string>();

  /**
   * Delegation levels below `prefix` (0 for a KEL begun by icp), up to MAX + 1, counted over the
   * whole delegator chain as resolution walks it: a delegator whose current copy is refused but
   * whose last accepted state is kept is resolved through that state, so it counts as a level too
   * (SPEC §3.5 rule 8, rev 4). The walk stops at a delegator with no KEL or no state at all.
   */
  const depth = (prefix: string): number => {
    let levels = 0;
    let at: string | null = prefix;
    const seen = new Set<string>();
    while (at !== null && levels <= MAX_DELEGATION_DEPTH) {
      const st = stages.get(at);
      if (st === undefined || seen.has(at)) return levels;
      seen.add(at);
      const kel = st.verdict.ok ? st.verdict.kel : (st.prev?.inForce?.kel ?? null);
      if (kel === null) return levels;
      const first = kel.events[0]!.event;
      if (first.t !== 'dip') return levels;
      levels++;
      at = first.di;
    }
    return levels;
  };

  const resolve = (prefix: string): Resolved => {
    const done = resolved.get(prefix);
    if (done !== undefined) return done;
    const st = stages.get(prefix)!;
    const kept = st.prev?.inForce ?? null;
    const reject = (f: RuleFailure): Resolved => ({ status: 'invalid', inForce: kept, reason: f.reason, seq: f.seq, detail: f.detail });
    let out: Resolved;
    if (inProgress.has(prefix)) {
      out = reject({ reason: 'delegation_too_deep', seq: 0, detail: 'the delegation chain loops' });
    } else if (!st.verdict.ok) {
      out = reject(st.verdict);
    } else {
      inProgress.add(prefix);
      out = resolveVerified(prefix, st.verdict.kel, kept);
      inProgress.delete(prefix);
    }
    resolved.set(prefix, out);
    return out;
  };

  const resolveVerified = (prefix: string, kel: VerifiedKel, kept: AcceptedKel | null): Resolved => {
    const reject = (f: RuleFailure): Resolved => ({ status: 'invalid', inForce: kept, reason: f.reason, seq: f.seq, detail: f.detail });
    const inception = kel.events[0]!.event;
    if (inception.t !== 'dip') {
      return { status: 'accepted', inForce: accepted(kept, kel, kel.events.length, false), reason: null, seq: null, detail: null };
    }
    const delegator = inception.di!;
    if (!stages.has(delegator))
      return reject({ reason: 'delegator_missing', seq: 0, detail: `the delegator ${delegator} has no KEL in the source` });
    if (depth(prefix) > MAX_DELEGATION_DEPTH) {
      return reject({ reason: 'delegation_too_deep', seq: 0, detail: `more than ${MAX_DELEGATION_DEPTH} delegation levels` });
    }
    const r = resolve(delegator);
    if (r.inForce === null) {
      return reject({
        reason: 'delegator_invalid',
        seq: 0,
        detail: `the delegator ${delegator} has no accepted state (${r.reason ?? r.status})`,
      });
    }
    const rState = r.inForce.kel.states[r.inForce.count - 1]!;
    if (rState.doNotDelegate) return reject({ reason: 'delegator_dnd', seq: 0, detail: `the delegator ${delegator}'s inception has DND` });
    const seals = sealsOf(r.inForce);
    const { count, failure: f } = anchoredCount(prefix, kel.events, seals);
    if (f !== null) return reject(f);
    const revoked = (kept?.revoked ?? false) || seals.digests.has(prefix);
    // count < kept.count only after a recovery of the delegator superseded the ixn that anchored
    // event `count`: that event is pending again (SPEC §3.5 rev 4 "Recovery rotations").
    const inForce = count === 0 ? null : accepted(kept, kel, count, revoked);
    if (count < kel.events.length) {
      const e = kel.events[count]!.event;
      return {
        status: 'pending',
        inForce,
        reason: null,
        seq: count,
        detail: `${e.t} at s=${count} is not yet anchored by the delegator ${delegator}`,
      };
    }
    return { status: 'accepted', inForce, reason: null, seq: null, detail: null };
  };

  const evaluations = new Map<string, KelEvaluation>();
  const entries = new Map<string, CacheEntry>();
  for (const [prefix, st] of stages) {
    const r = resolve(prefix);
    let inForce = r.inForce;
    // A kept state of a delegated KEL still learns of its revocation.
    if (inForce !== null && !inForce.revoked && inForce.kel.states[0]!.delegator !== null) {
      const delegator = inForce.kel.states[0]!.delegator;
      const dr = stages.has(delegator) ? resolve(delegator) : undefined;
      if (dr !== undefined && dr.inForce !== null && sealsOf(dr.inForce).digests.has(prefix)) inForce = { ...inForce, revoked: true };
    }
    evaluations.set(prefix, {
      prefix,
      status: r.status,
      state: inForce === null ? null : keyState(prefix, inForce),
      reason: r.reason,
      seq: r.seq,
      detail: r.detail,
      source: st.raw.source,
      verifiedEvents: st.verifiedEvents,
    });
    entries.set(prefix, {
      sourceHash: st.raw.defect === undefined ? st.raw.sourceHash : '',
      saids: st.saids,
      own: st.own,
      verified: st.own.ok ? st.own.kel : (st.prev?.verified ?? null),
      inForce,
    });
  }
  return { evaluations, cache: { entries } };
}

/** Verify a set of KELs from scratch (no cache, no stored tips): `anchor-witness kel verify`. */
export function verifyKels(kels: ReadonlyMap<string, RawKel>): Map<string, KelEvaluation> {
  return evaluateKels(kels, null, new Map()).evaluations;
}

/**
 * The digest seals {d} of the accepted KEL in force for `prefix` in `cache` (each names an agent
 * this delegator revokes), so that a reader holding only states can apply a revocation to an agent
 * whose own copy it could not evaluate (SPEC §3.5 rev 4 "Revocation never waits for the agent").
 */
export function revocationSeals(cache: KelCache, prefix: string): string[] {
  const inForce = cache.entries.get(prefix)?.inForce;
  return inForce == null ? [] : [...sealsOf(inForce).digests];
}
