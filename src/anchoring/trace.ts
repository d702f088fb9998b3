/**
 * Diagnostic marks of the anchor path's event-loop work, for the benchmarks' long-turn tracer
 * (bench/_loop-probe.ts, loaded into a witness only by the benchmarks). Published on the
 * `anchor-witness:anchor-path` diagnostics channel; with no subscriber (always, outside a
 * benchmark) a mark costs one property read and nothing is allocated.
 */
import diagnostics_channel from 'node:diagnostics_channel';

export const ANCHOR_PATH_CHANNEL = 'anchor-witness:anchor-path';

/** What the loop did: `what` names the step, `ms` its duration (0 for a point), `n` how many requests it covered. */
export interface AnchorPathMark {
  what: 'verify_send' | 'verify_reply' | 'verify_trip' | 'batch_commit' | 'batch_answer';
  /** performance.now() when the step started. */
  at: number;
  ms: number;
  n: number;
}

const channel = diagnostics_channel.channel(ANCHOR_PATH_CHANNEL);

/** True while someone listens: callers skip taking timestamps otherwise. */
export function tracing(): boolean {
  return channel.hasSubscribers;
}

export function mark(what: AnchorPathMark['what'], at: number, n: number): void {
  if (!channel.hasSubscribers) return;
  const m: AnchorPathMark = { what, at, ms: performance.now() - at, n };
  channel.publish(m);
}
