/**
 * What one applied log-list read reports (SPEC §5.5): its metrics (list-metrics.ts) and its log
 * lines — per-entry warnings (skipped entries, conflicting keys) in line order, at most
 * WARNINGS_PER_READ of them and a summary of the rest, then one summary line.
 */
import type { ListImportPlan } from './list-merge.ts';
import type { LogListMetrics } from './list-metrics.ts';
import type { ListSource } from './list-source.ts';
import type { SkippedListEntry } from './log-list.ts';

export interface ListLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error?(obj: object, msg: string): void;
}

/** Per-entry warnings logged per read; the rest are summed up in one line. */
const WARNINGS_PER_READ = 20;

/** Metrics and log lines of one applied read of `s` that added `added` origins. */
export function reportListRead(
  to: { metrics: LogListMetrics | undefined; log: ListLogger | undefined; nowMs: number },
  s: ListSource,
  plan: ListImportPlan,
  skipped: readonly SkippedListEntry[],
  added: number,
): void {
  const m = to.metrics;
  const source = s.label;
  m?.fetches.inc({ source, outcome: 'ok' });
  m?.lastSuccess.set({ source }, Math.floor(to.nowMs / 1000));
  m?.origins.set({ source }, plan.origins);
  m?.pending.set({ source }, plan.deferred + plan.overLimit);
  m?.skipped.set({ source }, skipped.length);
  if (plan.conflicts.length > 0) m?.conflicts.inc({ source }, plan.conflicts.length);
  const log = to.log;
  if (log === undefined) return;
  const warnings = [
    ...skipped.map((k) => ({ line: k.line, origin: k.origin, code: k.code, message: `entry skipped: ${k.message}` })),
    ...plan.conflicts.map((c) => ({
      line: c.line,
      origin: c.origin,
      code: 'conflict',
      message: `listed with key ${c.vkey}, which is not one of its keys; a list never changes a known log's keys`,
    })),
  ].sort((a, b) => a.line - b.line);
  for (const w of warnings.slice(0, WARNINGS_PER_READ))
    log.warn({ list: source, line: w.line, origin: w.origin, code: w.code }, `cosign: log list: ${w.message}`);
  if (warnings.length > WARNINGS_PER_READ) {
    const byCode: Record<string, number> = {};
    for (const w of warnings) byCode[w.code] = (byCode[w.code] ?? 0) + 1;
    log.warn(
      { list: source, warnings: warnings.length, by_code: byCode },
      `cosign: log list: ${warnings.length - WARNINGS_PER_READ} more warnings not shown`,
    );
  }
  if (plan.deferred > 0)
    log.warn({ list: source, deferred: plan.deferred }, 'cosign: log list: new origins over --logs-list-max-new wait for the next read');
  if (plan.overLimit > 0)
    log.warn({ list: source, refused: plan.overLimit }, 'cosign: log list: --logs-list-max-origins reached; new origins not imported');
  log.info(
    {
      list: source,
      added,
      qpd_changes: plan.qpdChanges.length,
      conflicts: plan.conflicts.length,
      skipped: skipped.length,
      origins: plan.origins,
    },
    'cosign: log list applied',
  );
}
