/**
 * Evaluate a whole source snapshot (SPEC §3.5 "Verification", "Caching, reload, rollback"): every
 * KEL is checked on its own (rules 1–7), against the state in force and the store's highest
 * accepted tip (fork, rollback), then across KELs (rule 8, delegation).
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
import { parseAttachment } from './attachments.ts';
import { MAX_DELEGATION_DEPTH, anchoredCount, indexSeals, type SealIndex } from './delegation.ts';
import { KelError } from './errors.ts';
import { parseEvent } from './event.ts';
import { MAX_SIGNATURES_PER_KEY } from './signatures.ts';
import { keyStateOf } from './state.ts';
import type { KelEvaluation, KelStatus, KeyState, RawKel } from './types.ts';
import { verifyRange, type ParsedEvent, type RuleFailure, type WalkState } from './verify.ts';

/** Events that passed rules 1–7, with the state after each. */
interface VerifiedKel {
  events: readonly ParsedEvent[];
  /** Each event's JSON value as the source gave it (to recognise unchanged events cheaply). */
  values: readonly unknown[];
  attachments: readonly string[];
  states: readonly WalkState[];
}

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

type Tip = { s: number; d: string };

function failure(reason: RuleFailure['reason'], seq: number | null, detail: string): { ok: false } & RuleFailure {
  return { ok: false, reason, seq, detail };
}

/** Rule 1 for the source as a whole: its defect, no events, one attachment per event. */
function checkShape(raw: RawKel): RuleFailure | null {
  if (raw.defect !== undefined) return { reason: raw.defect.reason, seq: null, detail: raw.defect.detail };
  if (raw.events.length === 0) return { reason: 'malformed', seq: null, detail: 'no events' };
  if (raw.attachments.length !== raw.events.length) {
    return {
      reason: 'malformed',
      seq: null,
      detail: `${raw.events.length} events but ${raw.attachments.length} attachments (one per event)`,
    };
  }
  return null;
}

/**
 * Rule 1 for events[from…]: each event and attachment parses, and carries at most
 * MAX_SIGNATURES_PER_KEY × its signing keys signatures (its own `k`, or for an ixn the last
 * establishment event's; `keyCount` is that of the state before `from`, null without one).
 */
function parseEvents(
  raw: RawKel,
  from: number,
  keyCount: number | null,
): { ok: true; events: ParsedEvent[] } | ({ ok: false } & RuleFailure) {
  const events: ParsedEvent[] = [];
  for (let j = from; j < raw.events.length; j++) {
    try {
      const event = parseEvent(raw.events[j], j);
      const attachment = parseAttachment(raw.attachments[j]!, j);
      if (attachment.sourceSeals.length > 0 && event.t !== 'dip' && event.t !== 'drt') {
        return failure('malformed', j, `attachment: a -G source seal on a ${event.t}`);
      }
      if (event.t !== 'ixn') keyCount = event.keys.length;
      // An ixn with no establishment event before it is refused by rule 3 (not_inception).
      if (keyCount !== null && attachment.signatures.length > MAX_SIGNATURES_PER_KEY * keyCount) {
        return failure(
          'malformed',
          j,
          `attachment: ${attachment.signatures.length} signatures for ${keyCount} signing key(s) (at most ${MAX_SIGNATURES_PER_KEY} per key)`,
        );
      }
      events.push({ event, attachment });
    } catch (err) {
      if (err instanceof KelError) return failure(err.code, err.seq, err.message);
      throw err;
    }
  }
  return { ok: true, events };
}

/** Deep equality of two parsed JSON values (member order aside: parseEvent does not depend on it). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  let members = 0;
  for (const k in ao) {
    members++;
    if (!Object.hasOwn(bo, k) || !sameJson(ao[k], bo[k])) return false;
  }
  for (const k in bo) if (Object.hasOwn(bo, k)) members--;
  return members === 0;
}

/**
 * How many leading events of the source are those of `kel`: the same JSON value and the same
 * attachment, so an unchanged event is neither parsed nor verified again.
 */
function commonPrefix(kel: VerifiedKel | null, raw: RawKel): number {
  if (kel === null) return 0;
  const n = Math.min(kel.values.length, raw.events.length);
  let j = 0;
  while (j < n && raw.attachments[j] === kel.attachments[j] && sameJson(raw.events[j], kel.values[j])) j++;
  return j;
}

/** Fork and rollback against the state in force and the store's tip. */
function checkHistory(saids: readonly string[], inForce: AcceptedKel | null, tip: Tip | undefined): RuleFailure | null {
  if (inForce !== null) {
    const upTo = Math.min(inForce.count, saids.length);
    for (let j = 0; j < upTo; j++) {
      const d = inForce.kel.events[j]!.event.d;
      if (saids[j] !== d) return { reason: 'fork', seq: j, detail: `event ${j} is ${saids[j]!}, the accepted KEL has ${d}` };
    }
    if (saids.length < inForce.count) {
      return { reason: 'rollback', seq: saids.length, detail: `${saids.length} events, the accepted KEL has ${inForce.count}` };
    }
  }
  if (tip !== undefined) {
    if (saids.length <= tip.s)
      return { reason: 'rollback', seq: saids.length, detail: `${saids.length} events, the stored tip is at s=${tip.s}` };
    if (saids[tip.s] !== tip.d)
      return { reason: 'fork', seq: tip.s, detail: `event ${tip.s} is ${saids[tip.s]!}, the stored tip is ${tip.d}` };
  }
  return null;
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
  tips: ReadonlyMap<string, { s: number; d: string }>,
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
export function stageKel(raw: RawKel, previous: KelCache | null, tip: Tip | undefined): KelStage {
  const prev = previous?.entries.get(raw.prefix);
  const { saids, own, verifiedEvents } = verifyOwn(raw, prev);
  let verdict: Own = own;
  if (saids !== null) {
    const history = checkHistory(saids, prev?.inForce ?? null, tip);
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
    if (kept !== null && count < kept.count) {
      return reject({
        reason: 'rollback',
        seq: count,
        detail: `the delegator's accepted KEL no longer anchors event ${count}, which was accepted`,
      });
    }
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
