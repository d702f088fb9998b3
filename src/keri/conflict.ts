/**
 * A conflicting event at a held sequence number (SPEC §3.6.4 "Conflicts", §3.5 "Recovery
 * rotations"), classified without I/O for the KERI witness role (src/kel-witness) and any other
 * holder of a first-seen KEL.
 *
 *   classifyConflict({ prefix, events, attachments }, { event, attachment })
 *
 * `accepted` is the first-seen chain in force, events 0 … tip (superseded events left out), as
 * the JSON values and CESR attachments that were stored; `conflict` is Y, an event whose `s` is
 * at most the tip and whose SAID differs from the accepted event X there. The caller handles
 * what needs its ledger first: case 1 (Y is a superseded event: `superseded`) and, after a
 * `recovery`, its own checks 10–11. The cases, in SPEC order (the first that applies):
 *
 * - `invalid`: Y does not parse, is not at a held sn, or fails rules 2–7 appended alone after
 *   events 0 … sn − 1 (never evidence: nothing is stored); `reason` is the §3.5 reason.
 * - `recovery`: the KEL is begun by icp, Y is a rot, and sn > the last establishment event's sn
 *   (so X … tip are ixns). `state` is the key state after Y.
 * - `kel_recovery_unsupported`: the KEL is begun by dip and X or Y is a drt.
 * - `stale`: {X, Y} = {ixn, rot}.
 * - `duplicity`: same `t` (ixn/ixn, rot/rot, icp/icp of a basic prefix, drt/drt never reaches here).
 *
 * The accepted events before sn are verified again (rules 2–7): a conflict is rare, and the
 * classification never trusts the caller's copy.
 */
import { parseAttachment } from './attachments.ts';
import { KelError, type KelReason } from './errors.ts';
import { parseEvent, type KelEvent } from './event.ts';
import type { KeyState } from './types.ts';
import { verifyRange, type ParsedEvent, type WalkState } from './verify.ts';
import { keyStateOf } from './state.ts';

export interface ConflictInput {
  prefix: string;
  /** The accepted (first-seen) events 0 … tip, as stored. */
  events: readonly unknown[];
  /** One CESR attachment per event. */
  attachments: readonly string[];
}

export interface ConflictingEvent {
  event: unknown;
  attachment: string;
}

export type ConflictKind = 'invalid' | 'recovery' | 'kel_recovery_unsupported' | 'stale' | 'duplicity';

export type ConflictClass =
  | { kind: 'invalid'; sn: number | null; reason: KelReason; detail: string }
  | { kind: 'recovery'; sn: number; state: KeyState; detail: string }
  | { kind: 'kel_recovery_unsupported' | 'stale' | 'duplicity'; sn: number; detail: string };

function parsed(value: unknown, attachment: string, seq: number): ParsedEvent {
  return { event: parseEvent(value, seq), attachment: parseAttachment(attachment, seq) };
}

/** Classify Y against the accepted KEL (see the module comment). Pure; throws only on a programming error. */
export function classifyConflict(accepted: ConflictInput, conflict: ConflictingEvent): ConflictClass {
  const invalid = (sn: number | null, reason: KelReason, detail: string): ConflictClass => ({ kind: 'invalid', sn, reason, detail });
  let y: ParsedEvent;
  try {
    y = parsed(conflict.event, conflict.attachment, -1);
  } catch (e) {
    if (e instanceof KelError) return invalid(null, e.code, e.message);
    throw e;
  }
  const sn = y.event.sn;
  const tip = accepted.events.length - 1;
  if (!Number.isSafeInteger(sn) || sn > tip) return invalid(sn, 'sequence_invalid', `s is "${y.event.s}", the accepted tip is at ${tip}`);
  let history: ParsedEvent[];
  let x: KelEvent;
  try {
    history = accepted.events.slice(0, sn).map((v, j) => parsed(v, accepted.attachments[j] ?? '', j));
    x = parseEvent(accepted.events[sn], sn);
  } catch (e) {
    if (e instanceof KelError) return invalid(e.seq, e.code, `the accepted KEL: ${e.message}`);
    throw e;
  }
  if (x.d === y.event.d) return invalid(sn, 'said_mismatch', `Y is the accepted event ${x.d}, not a conflict`);
  const before = verifyRange(accepted.prefix, history, 0, null);
  if (!before.ok) return invalid(before.seq, before.reason, `the accepted KEL before s=${sn}: ${before.detail}`);
  const prior: WalkState | null = sn === 0 ? null : before.states[sn - 1]!;
  const withY = [...history, y];
  const result = verifyRange(accepted.prefix, withY, sn, prior);
  if (!result.ok) return invalid(sn, result.reason, result.detail);

  // The last establishment event of the accepted KEL (all of it, tip included).
  let lastEst = 0;
  for (let j = tip; j >= 0; j--) {
    const t = (accepted.events[j] as { t?: unknown } | null)?.t;
    if (t !== 'ixn') {
      lastEst = j;
      break;
    }
  }
  const inception = sn === 0 ? y.event.t : history[0]!.event.t;
  const yt = y.event.t;
  if (inception === 'icp' && yt === 'rot' && sn > lastEst) {
    const state = keyStateOf(accepted.prefix, result.states.at(-1)!, false);
    return { kind: 'recovery', sn, state, detail: `rot at s=${sn} supersedes the ixn(s) at s=${sn}…${tip}` };
  }
  if (inception === 'dip' && (x.t === 'drt' || yt === 'drt')) {
    return { kind: 'kel_recovery_unsupported', sn, detail: `a ${yt} against the accepted ${x.t} at s=${sn} of a delegated KEL` };
  }
  if ((x.t === 'ixn' && yt === 'rot') || (x.t === 'rot' && yt === 'ixn')) {
    return { kind: 'stale', sn, detail: `a ${yt} against the accepted ${x.t} at s=${sn}` };
  }
  return { kind: 'duplicity', sn, detail: `a second valid ${yt} at s=${sn}` };
}
