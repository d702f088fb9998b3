/**
 * Metrics of log-list imports (SPEC §5.5), on the caller's prom-client Registry (reused if there).
 * `source` is a file path or, for a URL, its scheme, host and path (never credentials or a query).
 *
 *   logs_list_fetches_total{source,outcome}      counter; outcome = ok | invalid_log_list | a ListFetchErrorCode | store_unavailable | apply_failed
 *   logs_list_last_success_seconds{source}       gauge, unix time of the last read that applied
 *   logs_list_origins{source}                    gauge, distinct origins in usable entries of the last good read
 *   logs_list_conflicts_total{source}            counter, entries naming a known origin with a key it does not have
 *   logs_list_pending_origins{source}            gauge, new origins not imported by the last read (--logs-list-max-new, -max-origins)
 *   logs_list_skipped_entries{source}            gauge, entries skipped in the last good read
 */
import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import { reuseMetric } from '../server/metrics.ts';

export interface LogListMetrics {
  readonly fetches: Counter<'source' | 'outcome'>;
  readonly lastSuccess: Gauge<'source'>;
  readonly origins: Gauge<'source'>;
  readonly conflicts: Counter<'source'>;
  readonly pending: Gauge<'source'>;
  readonly skipped: Gauge<'source'>;
}

export function createLogListMetrics(registry: Registry): LogListMetrics {
  const registers = [registry];
  const labelNames = ['source'] as const;
  return {
    fetches: reuseMetric(
      registry,
      'logs_list_fetches_total',
      () =>
        new Counter({
          name: 'logs_list_fetches_total',
          help: 'Reads of log lists, by source and outcome',
          labelNames: ['source', 'outcome'],
          registers,
        }),
    ),
    lastSuccess: reuseMetric(
      registry,
      'logs_list_last_success_seconds',
      () =>
        new Gauge({
          name: 'logs_list_last_success_seconds',
          help: 'Unix time of the last log-list read that applied',
          labelNames,
          registers,
        }),
    ),
    origins: reuseMetric(
      registry,
      'logs_list_origins',
      () =>
        new Gauge({
          name: 'logs_list_origins',
          help: 'Distinct origins in the usable entries of the last good read',
          labelNames,
          registers,
        }),
    ),
    conflicts: reuseMetric(
      registry,
      'logs_list_conflicts_total',
      () =>
        new Counter({
          name: 'logs_list_conflicts_total',
          help: 'List entries naming a known origin with a key it does not have (not applied)',
          labelNames,
          registers,
        }),
    ),
    pending: reuseMetric(
      registry,
      'logs_list_pending_origins',
      () =>
        new Gauge({
          name: 'logs_list_pending_origins',
          help: 'New origins the last read did not import (per-read or total limit)',
          labelNames,
          registers,
        }),
    ),
    skipped: reuseMetric(
      registry,
      'logs_list_skipped_entries',
      () => new Gauge({ name: 'logs_list_skipped_entries', help: 'Entries skipped in the last good read', labelNames, registers }),
    ),
  };
}
