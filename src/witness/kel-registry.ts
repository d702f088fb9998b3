/**
 * The node's party registry with a KEL source (SPEC §3.5): starts src/registry's live registry
 * (first load before listening), and reports it: `kel_invalid` log lines, the reload counters
 * shared with the file registry, `registry_kel_invalid_total{reason}` and
 * `registry_kel_parties{status}`.
 */
import type { FastifyBaseLogger } from 'fastify';
import { Counter, Gauge, type Registry as Metrics } from 'prom-client';
import { KelSourceError } from '../registry/errors.ts';
import { KelPartyRegistry } from '../registry/live.ts';
import { parseKelSourceSpec } from '../registry/source.ts';
import { KEL_REASONS, type KelLimits } from '../keri/index.ts';
import type { AnchorStateStorage } from '../store/types.ts';

export interface KelSourceConfig {
  /** `dir:PATH` or `git:PATH`. */
  source: string;
  pollSeconds: number;
  limits: KelLimits;
}

interface ReloadCounters {
  reloads: Counter;
  reloadFailures: Counter;
}

export async function startKelRegistry(
  config: KelSourceConfig,
  registryFile: string | undefined,
  store: Pick<AnchorStateStorage, 'kelTips' | 'raiseKelTips'>,
  metrics: Metrics,
  counters: ReloadCounters,
  log: FastifyBaseLogger,
): Promise<KelPartyRegistry> {
  if (registryFile === undefined) {
    throw new KelSourceError('registry_required', '--kel-source needs --registry: the registry file stays the list of parties (SPEC §3.5)');
  }
  const source = parseKelSourceSpec(config.source);
  const invalid = new Counter({
    name: 'registry_kel_invalid_total',
    help: 'KELs refused by the registry (kel_invalid), by reason',
    labelNames: ['reason'],
    registers: [metrics],
  });
  for (const reason of KEL_REASONS) invalid.inc({ reason }, 0);
  const kel = await KelPartyRegistry.open({
    registryFile,
    source,
    limits: config.limits,
    pollSeconds: config.pollSeconds,
    store,
    events: {
      loaded: (why, counts) => {
        if (why !== 'start') counters.reloads.inc();
        log.info({ source: why, ...counts }, 'party registry reloaded (KEL source)');
      },
      failed: (why, reason) => {
        counters.reloadFailures.inc();
        log.error({ source: why, reason }, 'party registry reload failed; keeping every current state');
      },
      kelInvalid: (e) => {
        invalid.inc({ reason: e.reason });
        log.warn(
          { event: 'kel_invalid', prefix: e.prefix, reason: e.reason, seq: e.seq, source: e.source, detail: e.detail },
          'kel_invalid',
        );
      },
      ignored: (names) => {
        log.warn({ names: names.slice(0, 20), count: names.length }, 'KEL source: names that are not identifiers were ignored');
      },
    },
  });
  new Gauge({
    name: 'registry_kel_parties',
    help: 'KELs in the KEL source by status (accepted, pending, invalid)',
    labelNames: ['status'],
    registers: [metrics],
    collect() {
      const c = kel.status().counts;
      for (const status of ['accepted', 'pending', 'invalid'] as const) this.set({ status }, c[status]);
    },
  });
  kel.start();
  return kel;
}
