/**
 * The registry part (SPEC §3.2, §3.5): the party registry the anchor role reads, from a file
 * (reloaded on the node's SIGHUP and on rename-into-place; a bad file keeps the previous copy) or
 * from a file plus a KEL source (kel-start.ts; the first load finishes before the node listens).
 * Without `--registry` the registry is empty (every submission is `unknown_party`).
 *
 *   const counters = registryReloadCounters(metrics);           // whatever the roles
 *   const registry = await startRegistryPart(ctx, { file, kel, counters });
 *   registry.current();   // the snapshot one request uses
 *   registry.status();    // the KEL source's counts and last reload, for the status page
 */
import type { FastifyBaseLogger } from 'fastify';
import { Counter, type Registry as Metrics } from 'prom-client';
import { parseRegistry, type Registry as PartyRegistry } from '../anchor/registry.ts';
import { readDocument } from '../config/config-file.ts';
import { readInputFile } from '../config/input-file.ts';
import { Reloadable } from '../config/reloadable.ts';
import { adoptSighupListeners, disposeBy, type NodePart, type PartReload } from '../server/part.ts';
import type { AnchorStateStorage } from '../store/types.ts';
import { startKelRegistry, type KelSourceConfig } from './kel-start.ts';
import type { KelRegistryStatus } from './live.ts';
import type { LedgerFeedReads } from './ledger-source.ts';

/** What the registry part borrows of the node's context. */
export interface RegistryPartContext {
  /** `kelLedger`: the KERI witness role's ledger (`--kel-source ledger:`, SPEC §3.6.8). */
  store: { anchors: Pick<AnchorStateStorage, 'kelTips' | 'raiseKelTips'>; kelLedger?: LedgerFeedReads };
  metrics: Metrics;
  logger: FastifyBaseLogger;
}

export interface RegistryPartOptions {
  /** `--registry FILE`. */
  file: string | undefined;
  /** `--kel-source` and its limits (needs `file`). */
  kel: KelSourceConfig | undefined;
  /** From registryReloadCounters (registered whatever the roles, as they always were). */
  counters: RegistryReloadCounters;
}

export interface RegistryReloadCounters {
  reloads: Counter;
  reloadFailures: Counter;
}

/** `registry_reloads_total`, `registry_reload_failures_total` (file and KEL source alike). */
export function registryReloadCounters(metrics: Metrics): RegistryReloadCounters {
  return {
    reloads: new Counter({ name: 'registry_reloads_total', help: 'Successful party registry reloads', registers: [metrics] }),
    reloadFailures: new Counter({
      name: 'registry_reload_failures_total',
      help: 'Failed registry reloads (old copy kept)',
      registers: [metrics],
    }),
  };
}

/** The status page's fragment: the KEL source, when there is one. */
export interface RegistryStatus {
  kel: KelRegistryStatus | undefined;
}

export interface RegistryPart extends NodePart<undefined, RegistryStatus> {
  current(): PartyRegistry;
  status: () => RegistryStatus;
  /** The KERI witness role committed an event of `prefix` (`--kel-source ledger:` reloads after it, SPEC §3.6.8). */
  ledgerCommitted?: (prefix: string) => void;
}

export async function startRegistryPart(ctx: RegistryPartContext, o: RegistryPartOptions): Promise<RegistryPart> {
  const log = ctx.logger;
  const kelConfig = o.kel;
  if (kelConfig !== undefined) {
    // KelPartyRegistry listens for SIGHUP itself: the part adopts that listener as its reload.
    const { value: kel, hup } = await adoptSighupListeners(() =>
      startKelRegistry(kelConfig, o.file, ctx.store.anchors, ctx.metrics, o.counters, log, ctx.store.kelLedger),
    );
    return {
      name: 'registry',
      current: () => kel.current(),
      status: () => ({ kel: kel.status() }),
      ledgerCommitted: (prefix) => {
        kel.ledgerCommitted(prefix);
      },
      reload: () => {
        hup();
        return { part: 'registry', error: null };
      },
      [Symbol.asyncDispose]: () => kel.stop(),
    };
  }
  if (o.file !== undefined) {
    const file = o.file;
    const source = new Reloadable(file, (p) => readInputFile('--registry', p, () => parseRegistry(readDocument(p))), {
      loaded: (why) => {
        o.counters.reloads.inc();
        log.info({ source: why }, 'party registry reloaded');
      },
      failed: (reason) => {
        o.counters.reloadFailures.inc();
        log.error({ reason }, 'party registry reload failed; keeping the previous copy');
      },
    });
    source.start(1000, false); // the node's SIGHUP comes through reload()
    return {
      name: 'registry',
      current: () => source.current(),
      status: () => ({ kel: undefined }),
      reload: (): PartReload => ({ part: 'registry', error: source.reload('SIGHUP') ? null : `--registry ${file} was not reloaded` }),
      [Symbol.asyncDispose]: disposeBy(() => {
        source.stop();
      }),
    };
  }
  const empty = parseRegistry({ parties: [] });
  log.warn('no --registry: the party registry is empty, every submission is unknown_party');
  return { name: 'registry', current: () => empty, status: () => ({ kel: undefined }), [Symbol.asyncDispose]: disposeBy(() => undefined) };
}
