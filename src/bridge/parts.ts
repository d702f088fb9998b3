/**
 * The token bridge's parts (docs/ARCHITECTURE.md, "One node, many parts"), which node.ts starts on
 * an AsyncDisposableStack: the signing keyring (re-read every 60 s and on the node's reload), the
 * trusted roots (reloaded on the node's reload and on rename-into-place) and the nonce store.
 */
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { readDocument } from '../config/config-file.ts';
import { readInputFile } from '../config/input-file.ts';
import { Reloadable } from '../config/reloadable.ts';
import { adoptSighupListeners, disposeBy, type NodePart, type PartReload } from '../server/part.ts';
import { BridgeConfigError } from './errors.ts';
import type { SigningKeyring } from './signing-keyring.ts';
import type { BridgeMetrics } from './metrics.ts';
import { DEFAULT_NONCE_CAPACITY, MemoryNonceStore, type NonceStore } from './nonces.ts';
import { PostgresNonceStore } from './nonces-postgres.ts';
import { NONCES_SQLITE_FILE, SqliteNonceStore } from './nonces-sqlite.ts';
import { parseTrustedRoots, type TrustedRoots } from './trusted-roots.ts';

export type KeyRefreshReport = { source: string; error?: unknown; changed?: boolean; promoted?: string | null };

/** Log one outcome of a key directory refresh (and count a failure). */
export function keyRefreshReporter(keyring: SigningKeyring, metrics: BridgeMetrics, log: FastifyBaseLogger): (r: KeyRefreshReport) => void {
  return (r) => {
    if (r.error !== undefined) {
      metrics.keyRefreshFailures.inc();
      log.error(
        { source: r.source, err: r.error instanceof Error ? r.error.message : JSON.stringify(r.error) },
        'key directory refresh failed; keeping the current keys',
      );
    } else if (r.promoted != null) {
      log.info(
        { source: r.source, kid: r.promoted },
        'next signing key promoted to active; the previous key is retired and stays published',
      );
    } else if (r.changed === true) {
      log.info({ source: r.source, keys: keyring.entries.map((e) => `${e.kid}:${e.state}`) }, 'key directory changed');
    }
  };
}

/** The keyring's timer; its own SIGHUP listener adopted as the part's reload. */
export async function startKeyringPart(
  keyring: SigningKeyring,
  intervalMs: number,
  report: (r: KeyRefreshReport) => void,
): Promise<NodePart> {
  const { hup } = await adoptSighupListeners(() => {
    keyring.start(intervalMs, report);
  });
  return {
    name: 'keys',
    reload: () => {
      hup(); // reported through `report`, as the timer's refreshes are
      return { part: 'keys', error: null };
    },
    [Symbol.asyncDispose]: disposeBy(() => {
      keyring.stop();
    }),
  };
}

export interface TrustedRootsPart extends NodePart {
  current: () => TrustedRoots;
}

/** `--trusted-roots`: loaded now (start-up refuses a bad file), then reloaded on rename and on reload(). */
export function startTrustedRootsPart(
  file: string,
  log: FastifyBaseLogger,
  failures: () => BridgeMetrics | undefined,
  o: { kel: boolean; loaded?: () => void } = { kel: false },
): TrustedRootsPart {
  const read = (p: string): TrustedRoots =>
    readInputFile(
      '--trusted-roots',
      p,
      () => parseTrustedRoots(readDocument(p), { kel: o.kel }),
      (m) => new BridgeConfigError('invalid_trusted_roots', m),
    );
  const roots = new Reloadable(file, read, {
    loaded: (source) => {
      log.info({ file, source }, 'trusted roots loaded');
      o.loaded?.();
    },
    failed: (reason) => {
      failures()?.trustedRootsReloadFailures.inc();
      log.error({ file, reason }, 'trusted roots reload failed; keeping the previous copy');
    },
  });
  roots.start(1000, false); // the node's reload() stands for SIGHUP
  return {
    name: 'trusted-roots',
    current: () => roots.current(),
    reload: (): PartReload => ({
      part: 'trusted-roots',
      error: roots.reload('SIGHUP') ? null : `--trusted-roots ${file} was not reloaded`,
    }),
    [Symbol.asyncDispose]: disposeBy(() => {
      roots.stop();
    }),
  };
}

export interface NonceStoreConfig {
  nonceStore?: 'durable' | 'memory' | undefined;
  nonceCapacity?: number | undefined;
  noncePurgeIntervalMs?: number | undefined;
  dataDir?: string | undefined;
  store?: string | undefined;
  clock?: (() => number) | undefined;
  storeDatabaseClock?: (() => number) | undefined;
  /** `--anchor-floor-max-seeds` (SPEC §7.2). */
  anchorFloorMaxSeeds?: number | undefined;
}

/** The nonce store the configuration asks for (opened; the caller disposes of it). */
export async function openNonceStore(config: NonceStoreConfig, issuer: string, keyDir: string): Promise<NonceStore> {
  const capacity = config.nonceCapacity ?? DEFAULT_NONCE_CAPACITY;
  const purgeIntervalMs = config.noncePurgeIntervalMs ?? 10_000;
  const clock = config.clock ?? Date.now;
  if (config.nonceStore === 'memory') return new MemoryNonceStore(capacity);
  if (config.store !== undefined) {
    const databaseClock = config.storeDatabaseClock === undefined ? {} : { databaseClock: config.storeDatabaseClock };
    return PostgresNonceStore.open({
      url: config.store,
      issuer,
      capacity,
      purgeIntervalMs,
      clock,
      ...databaseClock,
      ...(config.anchorFloorMaxSeeds === undefined ? {} : { floorCapacity: config.anchorFloorMaxSeeds }),
    });
  }
  return SqliteNonceStore.open(join(config.dataDir ?? keyDir, NONCES_SQLITE_FILE), {
    capacity,
    purgeIntervalMs,
    clock,
    ...(config.anchorFloorMaxSeeds === undefined ? {} : { floorCapacity: config.anchorFloorMaxSeeds }),
  });
}
