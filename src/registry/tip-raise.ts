/**
 * The one rule by which a durable KEL tip row moves (SPEC §3.5 rev 4 "Caching, reload, rollback",
 * "Recovery rotations"), shared by the witness's registry (src/registry/live.ts, `kel_tips`) and the
 * bridge's KEL roots (src/bridge/roots-kel.ts, `tb_kel_tips`). Pure: no I/O.
 *
 * * A row is *ahead* of a state when its est_s is higher, or its est_s is equal and its s higher
 *   (a recovery rotation has a lower s but a higher est_s). A revision-3 row (no est_s/est_d) is
 *   compared by s alone.
 * * Rows only move ahead; a revision-3 row is filled (est_s, est_d) at its own tip.
 * * A process whose derived state is behind the row (or differs from it at the same place) must not
 *   use that state (503 `registry_behind`).
 */
import { isAhead, type KelEvaluation, type KelTipRef } from '../keri/index.ts';
import type { KelTip } from '../store/types.ts';

/** Whether the stored row moves to the accepted tip `next`. */
export function rowMovesTo(row: KelTipRef | undefined, next: KelTipRef): boolean {
  if (row === undefined) return true;
  if (isAhead(next, row)) return true;
  // A row from before revision 4, filled at its own tip once the establishment event is known.
  return row.estS === undefined && next.estS !== undefined && row.s === next.s && row.d === next.d;
}

/**
 * The rows a reload raises (durably, before its states are used): one per accepted state the
 * stored row is not already at or ahead of. `tips` (prefix → row) is updated in place.
 */
export function tipsToRaise(evaluations: Iterable<KelEvaluation>, tips: Map<string, KelTip>): KelTip[] {
  const raised: KelTip[] = [];
  for (const e of evaluations) {
    const st = e.state;
    if (st === null) continue;
    const next: KelTip = { prefix: e.prefix, s: st.s, d: st.d, estS: st.estS, estD: st.estD };
    if (!rowMovesTo(tips.get(e.prefix), next)) continue;
    raised.push(next);
    tips.set(e.prefix, next);
  }
  return raised;
}

/**
 * Whether the store's row is ahead of the state this process derived (or names another event at
 * the same place): that state is not used, 503 `registry_behind`. No state with a row: behind.
 */
export function rowAhead(row: KelTipRef | undefined, state: KelTipRef | null): boolean {
  if (row === undefined) return false;
  if (state === null) return true;
  if (row.estS !== undefined && state.estS !== undefined && row.estS !== state.estS) return row.estS > state.estS;
  return row.s > state.s || (row.s === state.s && row.d !== state.d);
}
