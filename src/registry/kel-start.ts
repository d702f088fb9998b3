/**
 * The party registry with a KEL source (SPEC §3.5), as the registry part (part.ts) starts it: the live registry
 * (first load before listening), and reports it: `kel_invalid` log lines, the reload counters
 * shared with the file registry, `registry_kel_invalid_total{reason}`,
 * `registry_kel_parties{status}`, `registry_kel_shadowed_total` (a static-keys party's KEL, logged
 * once per change) and `registry_kel_worker_restarts_total` (the KEL worker died on an identifier).
 */
import type { FastifyBaseLogger } from 'fastify';
import { Counter, Gauge, type Registry as Metrics } from 'prom-client';
import { KelSourceError } from './errors.ts';
import type { KelAggregateLimits } from './kel-evaluator.ts';
import { KelPartyRegistry } from './live.ts';
import type { LedgerFeedReads } from './ledger-source.ts';
import { parseKelSourceSpecs } from './source.ts';
import { KEL_REASONS, type KelLimits } from '../keri/index.ts';
import type { AnchorStateStorage } from '../store/types.ts';

export interface KelSourceConfig {
  /** `dir:PATH` or `git:PATH`; several (`--kel-source` is repeatable), in flag order. */
  source: string | readonly string[];
  pollSeconds: number;
  limits: KelLimits;
  /** `--kel-max-identifiers`, `--kel-max-total-bytes`, `--kel-max-heap` (defaults: DEFAULT_KEL_AGGREGATE). */
  aggregate?: KelAggregateLimits;
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
  ledger?: LedgerFeedReads,
): Promise<KelPartyRegistry> {
  if (registryFile === undefined) {
    throw new KelSourceError(
      'registry_required',
      '--kel-source needs --registry: the registry file stays the list of parties (docs/protocol.md §3.5)',
    );
  }
  const source = parseKelSourceSpecs(config.source, { ledger: true });
  const invalid = new Counter({
    name: 'registry_kel_invalid_total',
    help: 'KELs refused by the registry (kel_invalid), by reason',
    labelNames: ['reason'],
    registers: [metrics],
  });
  for (const reason of KEL_REASONS) invalid.inc({ reason }, 0);
  const shadowed = new Counter({
    name: 'registry_kel_shadowed_total',
    help: 'Registry entries with static keys found shadowing a KEL of the source (counted once per change)',
    registers: [metrics],
  });
  const conflicts = new Counter({
    name: 'registry_kel_source_conflicts_total',
    help: 'Identifiers whose accepted copies in two KEL sources diverge (fork: the last accepted state stays)',
    registers: [metrics],
  });
  const restarts = new Counter({
    name: 'registry_kel_worker_restarts_total',
    help: 'KEL worker threads that died (out of memory or otherwise) on an identifier and were restarted',
    registers: [metrics],
  });
  const kel = await KelPartyRegistry.open({
    registryFile,
    source,
    limits: config.limits,
    pollSeconds: config.pollSeconds,
    ...(config.aggregate === undefined ? {} : { aggregate: config.aggregate }),
    store,
    ...(ledger === undefined ? {} : { ledger }),
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
      shadowed: (ids) => {
        shadowed.inc(ids.length);
        log.warn({ parties: ids }, 'KEL source: registry entries with static keys shadow their KEL (the static keys stand)');
      },
      workerDied: (prefix, reason) => {
        restarts.inc();
        log.error({ prefix, reason }, 'KEL worker died on this identifier (refused as oversize) and was restarted');
      },
      sourceConflict: (prefix, detail) => {
        conflicts.inc();
        log.warn({ event: 'kel_source_conflict', prefix, detail }, 'KEL sources hold diverging copies; the last accepted state stays');
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
