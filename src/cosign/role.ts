/**
 * The cosign role, assembled for the node (SPEC §1, §5, §6): known logs (reloadable), the service,
 * the routes, metrics and health information.
 *
 *   const role = await createCosignRole({ store, cosignKeys, name, logsFile, logsLists, ownOrigin, … });
 *   role.register(app);            // POST /add-checkpoint, GET /:originHash/checkpoint
 *   role.healthInfo();             // { cosignVkey, cosignVkeys, origins }
 *   role.stop();                   // stop watching files / SIGHUP
 */
import { KeyObject } from 'node:crypto';
import type { CosignKey } from '../note/cosigner.ts';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { ed25519PublicKeyBytes } from '../crypto/ed25519.ts';
import { sha256Hex } from '../crypto/sha256.ts';
import type { CosignStateStorage } from '../store/types.ts';
import type { SignaturePool } from '../anchoring/verify-pool.ts';
import type { RateLimitSpec } from '../server/rate-limit.ts';
import { CosignConfigError } from './errors.ts';
import type { KnownLogs } from './logs.ts';
import { KnownLogsSource, configuredForLists } from './logs.ts';
import { OriginKeyBinder } from './key-binder.ts';
import type { ListFetchOptions } from './list-fetch.ts';
import { LogListImporter } from './list-import.ts';
import { listSource } from './list-source.ts';
import { MAX_MLDSA_ORIGIN_BYTES } from './log-keys.ts';
import type { ListLimits } from './list-merge.ts';
import { createLogListMetrics } from './list-metrics.ts';
import type { CosignMetrics } from './metrics.ts';
import { createCosignMetrics } from './metrics.ts';
import { createSignSubtreeCounter } from './metrics.ts';
import { OutcomeTally, type OutcomeCounts } from './outcome-tally.ts';
import { registerCosignRoutes } from './routes.ts';
import { CosignService } from './service.ts';
import { SignSubtreeService } from './sign-subtree.ts';

/** The logger calls the role makes (a pino logger fits). */
export interface CosignLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface CosignRoleOptions {
  store: CosignStateStorage;
  /** `--cosign-key`: one or more distinct Ed25519 or ML-DSA-44 private keys (one cosignature line each, in order). */
  cosignKeys: readonly CosignKey[];
  /** `--name`: the witness name, key name of the cosignature lines. */
  name: string;
  /** `--logs FILE` (JSON, or YAML for .yaml/.yml). */
  logsFile?: string | undefined;
  /** `--logs-list SRC`, repeatable: logs/v0 lists from files or https URLs (add new origins only; SPEC §5.5). */
  logsLists?: readonly string[] | undefined;
  /** `--logs-list-interval` in seconds (default 3600). */
  logsListIntervalSeconds?: number | undefined;
  /** `--logs-list-max-qpd`, `-max-new`, `-max-origins`. */
  logsListLimits?: Partial<ListLimits> | undefined;
  /** `--dev`: list URLs may be http:// to loopback and reach any address. */
  dev?: boolean | undefined;
  /** The store is shared by several processes (PostgreSQL replicas; `capabilities.multiWriter`). */
  sharedStore?: boolean | undefined;
  /** Fetch settings for list URLs (tests: CA, resolver). */
  listFetch?: ListFetchOptions | undefined;
  /** `--log-origin`: this node's own log, which may not be configured as a log to cosign. */
  ownOrigin?: string | undefined;
  /** The witness public key (32 bytes): start-up refuses a cosign key equal to it (SPEC §1). */
  witnessPublicKey?: Uint8Array | undefined;
  /** Clock in milliseconds (default Date.now). */
  now?: (() => number) | undefined;
  metrics?: Registry | undefined;
  log?: CosignLogger | undefined;
  /** Watch the files for rename-into-place and listen for SIGHUP (default true). */
  watch?: boolean | undefined;
  /** Retry-After seconds on 503 (default 1). */
  retryAfterSeconds?: number | undefined;
  /** Ed25519 verification on worker threads. */
  verifyPool?: SignaturePool | undefined;
  /** Evidence rows kept per origin (default 1 000, SPEC §5). */
  evidenceLimit?: number | undefined;
  /** Serve POST /sign-subtree when an ML-DSA-44 cosign key is configured (default true; `--no-sign-subtree`). */
  signSubtree?: boolean | undefined;
  /** `--sign-subtree-rate`: sign-subtree's own per-client token bucket (default 2:10; null = off). */
  signSubtreeRate?: RateLimitSpec | null | undefined;
}

export interface CosignHealth {
  /** The vkey (type 0x04) of the first Ed25519 cosign key, or null: `/health` `keys.cosign_vkey`. */
  cosignVkey: string | null;
  /** Every cosign key's vkey, in response line order. */
  cosignVkeys: string[];
  /** Known log origins, sorted. */
  origins: string[];
}

export interface CosignRole {
  readonly service: CosignService;
  /** add-checkpoint outcomes per origin since start (the status page's counts). */
  readonly outcomes: OutcomeCounts;
  readonly logs: KnownLogsSource;
  register(app: FastifyInstance): void;
  healthInfo(): CosignHealth;
  /** Re-read the logs file now, and the lists in the background; false if the logs file failed (its previous copy stays). */
  reload(): boolean;
  readonly lists: LogListImporter;
  stop(): void;
}

/**
 * Build the cosign role. Throws CosignConfigError (`invalid_cosign_key`, `invalid_name`) or
 * LogsConfigError (`invalid_logs_config`, `invalid_log_list`) on bad start-up configuration.
 */
export async function createCosignRole(opts: CosignRoleOptions): Promise<CosignRole> {
  const log = opts.log;
  const metrics: CosignMetrics | undefined = opts.metrics === undefined ? undefined : createCosignMetrics(opts.metrics);
  const tally = new OutcomeTally(metrics);

  if (opts.witnessPublicKey !== undefined) {
    const witnessHex = Buffer.from(opts.witnessPublicKey).toString('hex');
    for (const k of opts.cosignKeys) {
      let hex: string | undefined;
      try {
        hex = Buffer.from(k instanceof KeyObject ? ed25519PublicKeyBytes(k) : k.publicKey).toString('hex');
      } catch {
        hex = undefined; // the service reports bad keys
      }
      if (hex === witnessHex) {
        throw new CosignConfigError(
          'invalid_cosign_key',
          'the cosign key must not be the witness key (a key signs one kind of statement only)',
        );
      }
    }
  }

  // Origins ever known in this process, by SHA-256 hex: the monitoring endpoint keeps serving an
  // origin removed from the configuration (its state stays in the store).
  const byHash = new Map<string, string>();
  const remembered = new Set<string>();
  const remember = (logs: KnownLogs): void => {
    for (const origin of logs.keys()) {
      if (remembered.has(origin)) continue;
      remembered.add(origin);
      byHash.set(sha256Hex(origin), origin);
    }
  };

  const service: CosignService = new CosignService({
    store: opts.store,
    name: opts.name,
    cosignKeys: opts.cosignKeys,
    logs: () => logs.current(),
    now: opts.now,
    verifyPool: opts.verifyPool,
    evidenceLimit: opts.evidenceLimit,
    onEvidence: (origin, reason) => {
      metrics?.evidence.inc({ origin });
      log?.warn({ origin, reason }, 'cosign: log-signed checkpoint contradicting the stored state kept as evidence');
    },
    onEvidenceEvicted: (origin, count) => {
      metrics?.evidenceEvicted.inc({ origin }, count);
      log?.warn({ origin, evicted: count }, 'cosign: evidence bound reached; oldest evidence evicted');
    },
  });
  // The logs file's origins bound to their stored key sets (SPEC §5 rev 4): at start, after each load.
  const binder = new OriginKeyBinder({ store: opts.store, log, metrics });
  const rebind = (): void => {
    binder.reconcile(logs.configured()).catch((e: unknown) => {
      log?.warn({ err: e }, "cosign: could not compare the logs file's keys with the stored key sets");
    });
  };
  const lists: LogListImporter = new LogListImporter({
    store: opts.store,
    sources: (opts.logsLists ?? []).map((spec) => listSource(spec, opts.dev === true, opts.listFetch)),
    intervalSeconds: opts.logsListIntervalSeconds,
    sharedStore: opts.sharedStore,
    limits: opts.logsListLimits,
    rules: { ownOrigin: opts.ownOrigin, witnessName: opts.name, maxOriginBytes: service.hasMlDsaKey ? MAX_MLDSA_ORIGIN_BYTES : undefined },
    configured: () => configuredForLists(logs.configured()),
    onChange: () => {
      logs.recompute('log lists');
    },
    now: opts.now,
    metrics: opts.metrics === undefined ? undefined : createLogListMetrics(opts.metrics),
    log,
  });
  const logs: KnownLogsSource = new KnownLogsSource({
    logsFile: opts.logsFile,
    ownOrigin: opts.ownOrigin,
    imported: () => lists.imported(),
    policy: { mlDsaCosignKey: service.hasMlDsaKey },
    events: {
      loaded: (source, current) => {
        metrics?.reloads.inc({ result: 'ok' });
        metrics?.knownLogs.set(current.size);
        log?.info({ source, logs: current.size }, 'cosign: known logs loaded');
        remember(current);
        service.pruneQuota(current);
        if (source !== 'start' && source !== 'log lists') rebind();
      },
      failed: (reason) => {
        metrics?.reloads.inc({ result: 'failed' });
        log?.warn({ reason }, 'cosign: logs reload failed; keeping the previous copy');
      },
    },
  });
  const svc = service;
  await binder.reconcile(logs.configured());
  await lists.start();

  // POST /sign-subtree (SPEC §5.4): only with an ML-DSA-44 cosign key, unless switched off.
  const mlDsa = service.keyring.mlDsa;
  const subtrees =
    opts.signSubtree === false || mlDsa.length === 0
      ? undefined
      : new SignSubtreeService({
          name: opts.name,
          cosigners: mlDsa,
          logs: () => logs.current(),
          rate: opts.signSubtreeRate,
        });

  // The size gauges of the logs file's origins before serving; those of the (possibly many)
  // imported origins in the background. With a store that reads every cosigned size at once
  // (cosignedSizes), that is one read for both, not one per origin (40 000 round trips to
  // PostgreSQL with a witness-network list, competing with the first minute's requests).
  // The background part ends at stop(): a store closed by the shutdown is no failure to report.
  const configuredOrigins = new Set(logs.configured().map((l) => l.origin));
  let stopped = false;
  const allSizes = metrics === undefined || opts.store.cosignedSizes === undefined ? undefined : await opts.store.cosignedSizes();
  const restoreSizes = async (imported: boolean): Promise<void> => {
    if (metrics === undefined) return;
    let n = 0;
    for (const origin of logs.current().keys()) {
      if (stopped) return;
      if (configuredOrigins.has(origin) === imported) continue;
      if (allSizes === undefined) {
        const state = await opts.store.getOrigin(origin);
        if (state !== undefined) metrics.size.set({ origin }, state.size);
        continue;
      }
      // read at start: a cosignature made since set the gauge itself (the tally), and is newer
      const size = allSizes.get(origin);
      if (size !== undefined && (tally.of(origin)?.cosigned ?? 0) === 0) metrics.size.set({ origin }, size);
      // a turn for requests every 1 000 origins
      if (++n % 1000 === 0) await new Promise((r) => setImmediate(r));
    }
  };
  await restoreSizes(false);
  restoreSizes(true).catch((e: unknown) => {
    if (!stopped) log?.warn({ err: e }, 'cosign: could not read the cosigned sizes of imported logs for the metrics');
  });

  // SIGHUP re-reads the lists too (the logs file listens for it on its own).
  const onHup = (): void => {
    void lists.refreshAll();
  };
  if (opts.watch !== false) {
    logs.start();
    lists.startTimers();
    if (lists.sources.length > 0) process.on('SIGHUP', onHup);
  }

  return {
    service: svc,
    outcomes: tally,
    logs,
    lists,
    register(app) {
      registerCosignRoutes(app, {
        service: svc,
        originForHash: (h) => byHash.get(h),
        tally,
        retryAfterSeconds: opts.retryAfterSeconds ?? 1,
        signSubtree:
          subtrees === undefined
            ? undefined
            : { service: subtrees, requests: opts.metrics === undefined ? undefined : createSignSubtreeCounter(opts.metrics) },
      });
    },
    healthInfo() {
      const current = logs.current();
      return {
        cosignVkey: svc.ed25519Vkey ?? null,
        cosignVkeys: svc.vkeys,
        // Sorted on demand: with lists, the node may know 200 000 origins.
        get origins() {
          return [...current.keys()].sort();
        },
      };
    },
    reload: () => {
      void lists.refreshAll();
      return logs.reload();
    },
    stop: () => {
      stopped = true;
      logs.stop();
      lists.stop();
      process.off('SIGHUP', onHup);
    },
  };
}
