/**
 * Metrics of the cosign role, on the caller's prom-client Registry (reused if already there):
 *
 *   cosign_add_checkpoint_total{origin,outcome}   counter; outcome = cosigned | conflict | a CosignRejectionCode;
 *                                                 origin = the log's origin, or `_unknown` for requests
 *                                                 that do not name a known log (never a client string)
 *   cosign_origin_size{origin}                    gauge, the size last cosigned
 *   cosign_evidence_total{origin}                 counter, checkpoints kept as evidence (new rows only)
 *   cosign_evidence_evicted_total{origin}         counter, evidence rows evicted by the per-origin bound
 *   cosign_known_logs                             gauge, origins in the merged logs view
 *   cosign_logs_reloads_total{result}             counter, result = ok | failed
 *   cosign_origin_key_updates_total{origin}       counter, the logs file changed an origin's keys to an
 *                                                 overlapping set (its state continues; SPEC §5 rev 4)
 *   cosign_origin_key_conflicts_total{origin}     counter, a disjoint key set for a cosigned state: not
 *                                                 served until `cosign forget` (counted once per key set)
 */
import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import { reuseMetric } from '../server/metrics.ts';

export const UNKNOWN_ORIGIN_LABEL = '_unknown';

export interface CosignMetrics {
  readonly requests: Counter<'origin' | 'outcome'>;
  readonly size: Gauge<'origin'>;
  readonly evidence: Counter<'origin'>;
  readonly evidenceEvicted: Counter<'origin'>;
  readonly knownLogs: Gauge;
  readonly reloads: Counter<'result'>;
  readonly keyUpdates: Counter<'origin'>;
  readonly keyConflicts: Counter<'origin'>;
}

export function createCosignMetrics(registry: Registry): CosignMetrics {
  const registers = [registry];
  return {
    requests: reuseMetric(
      registry,
      'cosign_add_checkpoint_total',
      () =>
        new Counter({
          name: 'cosign_add_checkpoint_total',
          help: 'add-checkpoint requests by log origin and outcome',
          labelNames: ['origin', 'outcome'],
          registers,
        }),
    ),
    size: reuseMetric(
      registry,
      'cosign_origin_size',
      () => new Gauge({ name: 'cosign_origin_size', help: 'Tree size last cosigned, per log origin', labelNames: ['origin'], registers }),
    ),
    evidence: reuseMetric(
      registry,
      'cosign_evidence_total',
      () =>
        new Counter({
          name: 'cosign_evidence_total',
          help: 'Log-signed checkpoints proving misbehaviour against the stored state, kept as evidence (new rows)',
          labelNames: ['origin'],
          registers,
        }),
    ),
    evidenceEvicted: reuseMetric(
      registry,
      'cosign_evidence_evicted_total',
      () =>
        new Counter({
          name: 'cosign_evidence_evicted_total',
          help: 'Evidence rows evicted (oldest first) by the per-origin bound',
          labelNames: ['origin'],
          registers,
        }),
    ),
    knownLogs: reuseMetric(
      registry,
      'cosign_known_logs',
      () => new Gauge({ name: 'cosign_known_logs', help: 'Log origins this witness cosigns for', registers }),
    ),
    reloads: reuseMetric(
      registry,
      'cosign_logs_reloads_total',
      () =>
        new Counter({
          name: 'cosign_logs_reloads_total',
          help: 'Reloads of the logs file and lists, by result',
          labelNames: ['result'],
          registers,
        }),
    ),
    keyUpdates: reuseMetric(
      registry,
      'cosign_origin_key_updates_total',
      () =>
        new Counter({
          name: 'cosign_origin_key_updates_total',
          help: "Updates of an origin's stored log key set by the logs file (an overlapping set)",
          labelNames: ['origin'],
          registers,
        }),
    ),
    keyConflicts: reuseMetric(
      registry,
      'cosign_origin_key_conflicts_total',
      () =>
        new Counter({
          name: 'cosign_origin_key_conflicts_total',
          help: 'Origins configured with a key set disjoint from the one their stored state was cosigned under (not served)',
          labelNames: ['origin'],
          registers,
        }),
    ),
  };
}

/** The origin label of sign-subtree requests that name no known log (SPEC §5.4). */
export const SIGN_SUBTREE_OTHER_ORIGIN = 'other';

/**
 * sign_subtree_requests_total{origin,outcome}: counter; outcome = signed | a SignSubtreeRejectionCode;
 * origin = the log's origin, or `other` when the request names no known log.
 */
export function createSignSubtreeCounter(registry: Registry): Counter<'origin' | 'outcome'> {
  return reuseMetric(
    registry,
    'sign_subtree_requests_total',
    () =>
      new Counter({
        name: 'sign_subtree_requests_total',
        help: 'sign-subtree requests by log origin and outcome',
        labelNames: ['origin', 'outcome'],
        registers: [registry],
      }),
  );
}
