/**
 * A new copy of a KEL against what was accepted before (SPEC §3.5 "Caching, reload, rollback",
 * rev 4 "Recovery rotations"): the accepted KEL in force (this process's cache) and the store's
 * highest accepted tip (`kel_tips`: s, d, est_s, est_d). A copy that lacks the accepted tip is
 * `fork` (another SAID there) or `rollback` (too short), unless it is a *recovery* over it:
 *
 * 1. the KEL is begun by icp and verifies completely (rules 1–7);
 * 2. it contains the accepted establishment event (est_s, est_d);
 * 3. its next establishment event is a `rot` at sn ≤ the accepted tip's s.
 *
 * Only a holder of the committed next keys can make one (the rot exposes the prior `n`); a `drt`
 * never supersedes. A revision-3 row (no est_s/est_d) can be recovered over only when this
 * process's accepted state has that very tip (its est comes from there).
 *
 * `isAhead` orders rows and states: ahead = a higher est_s, or the same est_s and a higher s.
 */
import type { EventType } from './event.ts';
import type { RuleFailure } from './verify.ts';

/** An accepted tip: kel_tips' row, or the state in force. est_s/est_d are absent on a revision-3 row. */
export interface KelTipRef {
  s: number;
  d: string;
  estS?: number;
  estD?: string;
}

/** What the copy is, as far as history needs it. `types` is null unless the copy verified completely. */
export interface CopyView {
  saids: readonly string[];
  types: readonly EventType[] | null;
}

/** Whether `copy` is a recovery over the accepted tip `ref` (see the module comment). */
export function isRecovery(copy: CopyView, ref: KelTipRef): boolean {
  const { saids, types } = copy;
  if (types === null || types[0] !== 'icp' || ref.estS === undefined || ref.estD === undefined) return false;
  if (saids[ref.estS] !== ref.estD) return false;
  for (let j = ref.estS + 1; j < types.length; j++) {
    if (types[j] === 'ixn') continue;
    return types[j] === 'rot' && j <= ref.s;
  }
  return false;
}

/** The copy contains the tip (s, d). */
const contains = (saids: readonly string[], ref: KelTipRef): boolean => saids[ref.s] === ref.d;

/** Why a copy lacking `ref` is refused: `rollback` when it is too short, else `fork`. */
function lacking(saids: readonly string[], ref: KelTipRef, what: string, accepted: readonly string[] | null): RuleFailure {
  if (accepted !== null) {
    const upTo = Math.min(accepted.length, saids.length);
    for (let j = 0; j < upTo; j++) {
      if (saids[j] !== accepted[j]) return { reason: 'fork', seq: j, detail: `event ${j} is ${saids[j]!}, ${what} has ${accepted[j]!}` };
    }
  }
  if (saids.length <= ref.s) return { reason: 'rollback', seq: saids.length, detail: `${saids.length} events, ${what} is at s=${ref.s}` };
  return { reason: 'fork', seq: ref.s, detail: `event ${ref.s} is ${saids[ref.s]!}, ${what} is ${ref.d}` };
}

/**
 * Fork, rollback or recovery against the accepted KEL in force (`accepted`: its SAIDs and tip) and
 * the store's tip. Null when the copy may be accepted as far as history goes (it extends both, or
 * is a recovery over each it lacks).
 */
export function checkHistory(
  copy: CopyView,
  accepted: { saids: readonly string[]; tip: KelTipRef } | null,
  stored: KelTipRef | undefined,
): RuleFailure | null {
  const { saids } = copy;
  if (accepted !== null && !(contains(saids, accepted.tip) && sameUpTo(saids, accepted.saids)) && !isRecovery(copy, accepted.tip)) {
    return lacking(saids, accepted.tip, 'the accepted KEL', accepted.saids);
  }
  if (stored !== undefined && !contains(saids, stored)) {
    // A revision-3 row (no est): the state in force with that very tip supplies it.
    const ref =
      stored.estS === undefined && accepted !== null && accepted.tip.s === stored.s && accepted.tip.d === stored.d ? accepted.tip : stored;
    if (!isRecovery(copy, ref)) return lacking(saids, stored, 'the stored tip', null);
  }
  return null;
}

function sameUpTo(saids: readonly string[], accepted: readonly string[]): boolean {
  for (let j = 0; j < accepted.length; j++) if (saids[j] !== accepted[j]) return false;
  return true;
}

/** Whether tip `a` is ahead of `b` (rows only move ahead). A side without est_s is compared by s alone. */
export function isAhead(a: KelTipRef, b: KelTipRef): boolean {
  if (a.estS === undefined || b.estS === undefined) return a.s > b.s;
  return a.estS > b.estS || (a.estS === b.estS && a.s > b.s);
}
