/**
 * Signer metrics (SPEC §1.1), on the caller's prom-client Registry (reused if already there):
 *
 *   signer_requests_total{key,outcome}   counter; outcome = ok | unavailable | bad_signature | timeout | overloaded
 *   signer_latency_seconds{key}          histogram of signature latency (all outcomes)
 *   signer_up{key}                       gauge, 1 while the signer is ok
 *   signer_slow_total{key}               counter, signatures that took longer than 50 ms
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { SignerEvents } from './signer.ts';

const SLOW_SECONDS = 0.05;

function reuse<T>(registry: Registry, name: string, make: () => T): T {
  const existing = registry.getSingleMetric(name);
  return existing === undefined ? make() : (existing as T);
}

/** SignerEvents that feed the four metrics; `up(key)` sets the gauge for a signer that starts ok. */
export function signerMetrics(registry: Registry): SignerEvents & { up(key: string, ok: boolean): void } {
  const registers = [registry];
  const requests = reuse(
    registry,
    'signer_requests_total',
    () =>
      new Counter({
        name: 'signer_requests_total',
        help: 'signature requests by key and outcome',
        labelNames: ['key', 'outcome'],
        registers,
      }),
  );
  const latency = reuse(
    registry,
    'signer_latency_seconds',
    () =>
      new Histogram({
        name: 'signer_latency_seconds',
        help: 'signature latency by key',
        labelNames: ['key'],
        buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2],
        registers,
      }),
  );
  const up = reuse(
    registry,
    'signer_up',
    () => new Gauge({ name: 'signer_up', help: '1 while the signer is ok', labelNames: ['key'], registers }),
  );
  const slow = reuse(
    registry,
    'signer_slow_total',
    () => new Counter({ name: 'signer_slow_total', help: 'signatures slower than 50 ms', labelNames: ['key'], registers }),
  );
  return {
    request(key, outcome, seconds) {
      requests.inc({ key, outcome });
      latency.observe({ key }, seconds);
      if (seconds > SLOW_SECONDS) slow.inc({ key });
    },
    stateChanged(key, state) {
      up.set({ key }, state === 'ok' ? 1 : 0);
    },
    up(key, ok) {
      up.set({ key }, ok ? 1 : 0);
    },
  };
}
