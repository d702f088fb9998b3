/**
 * HTTP metrics (SPEC §6; the list is in docs/http.md), registered on the caller's prom-client
 * Registry; a second server on the same registry reuses them (values add up). `route` is the route
 * template or `other`; `status` is the numeric status, or `aborted` when the client left first;
 * `via` is set only on requests that came through another transport than the listener (`bastion`).
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import { buildInfo } from '../release/build-info.ts';

export const REJECT_REASONS = ['overloaded', 'body_too_large', 'request_timeout', 'rate_limited', 'connections'] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export interface HttpMetrics {
  readonly requests: Counter<'route' | 'method' | 'status' | 'via'>;
  readonly duration: Histogram<'route' | 'method' | 'status' | 'via'>;
  readonly inFlight: Gauge;
  readonly queueDepth: Gauge;
  readonly openConnections: Gauge;
  readonly rejected: Counter<'reason' | 'via'>;
}

/** The metric `name` already on `registry`, or a new one from `make` (several servers, one registry). */
export function reuseMetric<T>(registry: Registry, name: string, make: () => T): T {
  const existing = registry.getSingleMetric(name);
  return existing === undefined ? make() : (existing as T);
}

export function createHttpMetrics(registry: Registry): HttpMetrics {
  const registers = [registry];
  const rejected = reuseMetric(
    registry,
    'http_rejected_total',
    () =>
      new Counter({
        name: 'http_rejected_total',
        help: 'Requests and connections refused by the HTTP limits, by reason',
        labelNames: ['reason', 'via'],
        registers,
      }),
  );
  for (const reason of REJECT_REASONS) rejected.inc({ reason }, 0);
  reuseMetric(registry, 'build_info', () => {
    const gauge = new Gauge({
      name: 'build_info',
      help: 'The running build: version, source commit (or unknown) and Node version; always 1',
      labelNames: ['version', 'commit', 'node'],
      registers,
    });
    const b = buildInfo();
    gauge.set({ version: b.version, commit: b.commit, node: b.node }, 1);
    return gauge;
  });
  return {
    requests: reuseMetric(
      registry,
      'http_requests_total',
      () =>
        new Counter({
          name: 'http_requests_total',
          help: 'HTTP requests by route template, method and status',
          labelNames: ['route', 'method', 'status', 'via'],
          registers,
        }),
    ),
    duration: reuseMetric(
      registry,
      'http_request_duration_seconds',
      () =>
        new Histogram({
          name: 'http_request_duration_seconds',
          help: 'HTTP request duration from the first request byte to the response, by route template, method and status',
          labelNames: ['route', 'method', 'status', 'via'],
          buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
          registers,
        }),
    ),
    inFlight: reuseMetric(
      registry,
      'http_in_flight',
      () => new Gauge({ name: 'http_in_flight', help: 'Requests holding an in-flight slot', registers }),
    ),
    queueDepth: reuseMetric(
      registry,
      'http_queue_depth',
      () => new Gauge({ name: 'http_queue_depth', help: 'Requests waiting for an in-flight slot', registers }),
    ),
    openConnections: reuseMetric(
      registry,
      'http_open_connections',
      () => new Gauge({ name: 'http_open_connections', help: 'Open client connections', registers }),
    ),
    rejected,
  };
}
