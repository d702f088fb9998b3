/**
 * The bridge's Prometheus metrics (issued tokens, refusals, reload failures, nonce and key gauges),
 * kept apart from the routes. The token counters keep their own totals (`TalliedCounter`): the
 * status page reads those, never the metrics registry.
 */
import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import { reuseMetric } from '../server/metrics.ts';
import type { BridgeDeps } from './deps.ts';

/** A counter the bridge keeps its own total of, as it feeds the Prometheus one. */
export interface TalliedCounter<L extends string> {
  inc(labels: Partial<Record<L, string>>, value?: number): void;
  /** The total since start, all labels (the status page's number; never read back from Prometheus). */
  readonly total: number;
}

function tallied<L extends string>(counter: Counter<L>): TalliedCounter<L> {
  let total = 0;
  return {
    inc(labels, value = 1) {
      total += value;
      counter.inc(labels, value);
    },
    get total() {
      return total;
    },
  };
}

export interface BridgeMetrics {
  issued: TalliedCounter<'alg'>;
  refused: TalliedCounter<'code'>;
  keyRefreshFailures: Counter;
  trustedRootsReloadFailures: Counter;
}

/** Bridge metrics on `registry` (reused when already registered). */
export function bridgeMetrics(registry: Registry, deps: BridgeDeps): BridgeMetrics {
  const registers = [registry];
  reuseMetric(
    registry,
    'bridge_nonce_store_entries',
    () =>
      new Gauge({
        name: 'bridge_nonce_store_entries',
        help: 'Proof-of-possession nonces held by the nonce store (single use; each kept until its iat can no longer be accepted). With --store postgres: the shared table as this replica last counted it plus its own inserts since',
        registers,
        collect() {
          this.set(deps.service.nonces.size);
        },
      }),
  );
  reuseMetric(
    registry,
    'bridge_nonce_store_clock_skew_seconds',
    () =>
      new Gauge({
        name: 'bridge_nonce_store_clock_skew_seconds',
        help: "With --store postgres: the database server's clock minus this replica's, measured at each purge (positive: this replica is behind). Nonce expiry and the proof iat check at commit use the database's clock",
        registers,
        collect() {
          const skew = deps.service.nonces.clockSkewMs;
          if (skew !== undefined) this.set(skew / 1000);
        },
      }),
  );
  reuseMetric(
    registry,
    'bridge_signing_keys',
    () =>
      new Gauge({
        name: 'bridge_signing_keys',
        help: 'Signing keys by state (all of them are published in the JWKS)',
        labelNames: ['state'],
        registers,
        collect() {
          for (const state of ['active', 'next', 'retired']) this.set({ state }, deps.keys.entries.filter((e) => e.state === state).length);
        },
      }),
  );
  if (deps.kel !== undefined) {
    const kel = deps.kel;
    reuseMetric(
      registry,
      'bridge_kel_roots',
      () =>
        new Gauge({
          name: 'bridge_kel_roots',
          help: 'Trusted roots whose keys come from a KEL (docs/protocol.md §7.1), by status: accepted (a key state in force), pending (dip not yet anchored), invalid (no accepted state)',
          labelNames: ['status'],
          registers,
          collect() {
            const r = kel.status().roots;
            for (const status of ['accepted', 'pending', 'invalid'] as const) this.set({ status }, r[status]);
          },
        }),
    );
    reuseMetric(
      registry,
      'registry_kel_shadowed_total',
      () =>
        new Gauge({
          name: 'registry_kel_shadowed_total',
          help: 'Trusted-roots entries with static keys whose KEL in the source was shadowed (the static keys stand), counted once per change',
          registers,
          collect() {
            this.set(kel.shadowedTotal);
          },
        }),
    );
    reuseMetric(
      registry,
      'registry_kel_source_conflicts_total',
      () =>
        new Gauge({
          name: 'registry_kel_source_conflicts_total',
          help: 'Prefixes whose accepted copies in two --kel-sources diverge (fork: the last accepted state stays), counted per reload that finds one',
          registers,
          collect() {
            this.set(kel.sourceConflictsTotal);
          },
        }),
    );
  }
  return {
    issued: tallied(
      reuseMetric(
        registry,
        'bridge_tokens_issued_total',
        () =>
          new Counter({ name: 'bridge_tokens_issued_total', help: 'Tokens issued, by signing algorithm', labelNames: ['alg'], registers }),
      ),
    ),
    refused: tallied(
      reuseMetric(
        registry,
        'bridge_token_refusals_total',
        () =>
          new Counter({ name: 'bridge_token_refusals_total', help: '/token refusals by problem code', labelNames: ['code'], registers }),
      ),
    ),
    keyRefreshFailures: reuseMetric(
      registry,
      'bridge_key_refresh_failures_total',
      () =>
        new Counter({
          name: 'bridge_key_refresh_failures_total',
          help: 'Key directory refreshes that failed (the previous keys stay in use)',
          registers,
        }),
    ),
    trustedRootsReloadFailures: reuseMetric(
      registry,
      'bridge_trusted_roots_reload_failures_total',
      () =>
        new Counter({
          name: 'bridge_trusted_roots_reload_failures_total',
          help: 'Trusted-roots reloads that failed validation (the previous copy stays in use)',
          registers,
        }),
    ),
  };
}
