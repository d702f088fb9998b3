/**
 * Several sources' copies of one identifier's KEL (SPEC §3.5 rev 4, `--kel-source` repeatable):
 * every copy is staged (rules 1–7 and history, each on its own), and the copy in force is the
 * accepted one that supersedes every other accepted copy — each other copy is a prefix of it, or
 * it is a recovery over that copy — so the longest accepted chain wins, never the first source. A
 * copy behind another accepted copy is ignored (never `rollback`). Accepted copies that diverge
 * (neither supersedes) are `fork` against each other: the last accepted state stays. Flag order
 * only breaks ties between identical copies, and names the refusal when no copy is accepted.
 */
import type { KelStage } from './evaluate.ts';
import { isRecovery, type KelTipRef } from './history.ts';

export interface ChosenCopy {
  stage: KelStage;
  /** Set when accepted copies diverge (the stage is then a `fork` refusal): for the log and `registry_kel_source_conflicts_total`. */
  conflict: string | null;
}

function verified(st: KelStage) {
  return st.verdict.ok ? st.verdict.kel : null;
}

/** Whether copy `a` supersedes copy `b` (both accepted on their own). */
function supersedes(a: KelStage, b: KelStage): boolean {
  const ka = verified(a)!;
  const kb = verified(b)!;
  const sa = ka.events.map((e) => e.event.d);
  const sb = kb.events.map((e) => e.event.d);
  if (sb.length <= sa.length && sb.every((d, j) => sa[j] === d)) return true;
  const w = kb.states.at(-1)!;
  const tip: KelTipRef = { s: w.s, d: w.d, estS: w.estS, estD: w.estD };
  return isRecovery({ saids: sa, types: ka.events.map((e) => e.event.t) }, tip);
}

/** The copy in force among `stages` (one identifier, in `--kel-source` flag order; at least one). */
export function chooseCopy(stages: readonly KelStage[]): ChosenCopy {
  if (stages.length === 1) return { stage: stages[0]!, conflict: null };
  const accepted = stages.filter((st) => st.verdict.ok);
  if (accepted.length === 0) return { stage: stages[0]!, conflict: null };
  const winner = accepted.find((a) => accepted.every((b) => a === b || supersedes(a, b)));
  if (winner !== undefined) return { stage: winner, conflict: null };
  const [a, b] = accepted.filter((x) => !accepted.every((y) => x === y || supersedes(x, y)));
  const sa = verified(a!)!.events;
  const sb = verified(b!)!.events;
  let j = 0;
  while (j < sa.length && j < sb.length && sa[j]!.event.d === sb[j]!.event.d) j++;
  const detail = `the copies of ${a!.raw.source} and ${b!.raw.source} diverge at s=${j} (neither supersedes the other)`;
  return { stage: { ...stages[0]!, verdict: { ok: false, reason: 'fork', seq: j, detail } }, conflict: detail };
}
