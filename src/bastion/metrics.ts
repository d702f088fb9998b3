/**
 * Metrics of the bastion backend (SPEC §5.6), on the node's prom-client Registry (reused if there):
 *
 *   bastion_connected{addr}                 gauge, 1 while the connection to that bastion is up
 *   bastion_connects_total{addr,outcome}    counter, connection attempts by outcome: ok,
 *                                           connect_error (TCP or DNS), tls_error (handshake,
 *                                           version, certificate), alpn_mismatch, timeout
 *
 * Requests served over a bastion are in the HTTP metrics with the label via="bastion".
 */
import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import { reuseMetric } from '../server/metrics.ts';

export const CONNECT_OUTCOMES = ['ok', 'connect_error', 'tls_error', 'alpn_mismatch', 'timeout'] as const;
export type ConnectOutcome = (typeof CONNECT_OUTCOMES)[number];

export interface BastionMetrics {
  readonly connected: Gauge<'addr'>;
  readonly connects: Counter<'addr' | 'outcome'>;
}

export function createBastionMetrics(registry: Registry): BastionMetrics {
  const registers = [registry];
  return {
    connected: reuseMetric(
      registry,
      'bastion_connected',
      () =>
        new Gauge({
          name: 'bastion_connected',
          help: 'Whether the connection to a bastion is up (1) or not (0)',
          labelNames: ['addr'],
          registers,
        }),
    ),
    connects: reuseMetric(
      registry,
      'bastion_connects_total',
      () =>
        new Counter({
          name: 'bastion_connects_total',
          help: 'Connection attempts to a bastion, by outcome',
          labelNames: ['addr', 'outcome'],
          registers,
        }),
    ),
  };
}
