/**
 * The cosign role, assembled for the node (SPEC §1, §5, §6): known logs (reloadable), the service,
 * the routes, metrics and health information.
 *
 *   const role = await createCosignRole({ store, cosignKeys, name, logsFile, logsLists, ownOrigin, … });
 *   role.register(app);            // POST /add-checkpoint, GET /:originHash/checkpoint
 *   role.healthInfo();             // { cosignVkey, cosignVkeys, origins }
 *   role.stop();                   // stop watching files / SIGHUP
 */
import type { KeyObject } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { ed25519PublicKeyBytes } from '../crypto/ed25519.ts';
import { sha256Hex } from '../crypto/sha256.ts';
import type { CosignStateStorage } from '../store/types.ts';
import type { SignaturePool } from '../anchoring/verify-pool.ts';
import { CosignConfigError } from './errors.ts';
import type { KnownLogs } from './logs.ts';
import { KnownLogsSource } from './logs.ts';
import type { CosignMetrics } from './metrics.ts';
import { createCosignMetrics } from './metrics.ts';
import { registerCosignRoutes } from './routes.ts';
import { CosignService } from './service.ts';

/** The logger calls the role makes (a pino logger fits). */
export interface CosignLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface CosignRoleOptions {
  store: CosignStateStorage;
  /** `--cosign-key`: one or more distinct Ed25519 or ML-DSA-44 private keys (one cosignature line each, in order). */
  cosignKeys: readonly KeyObject[];
  /** `--name`: the witness name, key name of the cosignature lines. */
  name: string;
  /** `--logs FILE` (JSON, or YAML for .yaml/.yml). */
  logsFile?: string | undefined;
  /** `--logs-list FILE`, repeatable: witness-network logs/v0 lists (add new origins only). */
  logsLists?: readonly string[] | undefined;
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
  readonly logs: KnownLogsSource;
  register(app: FastifyInstance): void;
  healthInfo(): CosignHealth;
  /** Re-read the logs file and lists now; false if one failed (its previous copy stays). */
  reload(): boolean;
  stop(): void;
}

/**
 * Build the cosign role. Throws CosignConfigError (`invalid_cosign_key`, `invalid_name`) or
 * LogsConfigError (`invalid_logs_config`, `invalid_log_list`) on bad start-up configuration.
 */
export async function createCosignRole(opts: CosignRoleOptions): Promise<CosignRole> {
  const log = opts.log;
  const metrics: CosignMetrics | undefined = opts.metrics === undefined ? undefined : createCosignMetrics(opts.metrics);

  if (opts.witnessPublicKey !== undefined) {
    const witnessHex = Buffer.from(opts.witnessPublicKey).toString('hex');
    for (const k of opts.cosignKeys) {
      let hex: string | undefined;
      try {
        hex = Buffer.from(ed25519PublicKeyBytes(k)).toString('hex');
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
  const remember = (logs: KnownLogs): void => {
    for (const origin of logs.keys()) byHash.set(sha256Hex(origin), origin);
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
  const logs: KnownLogsSource = new KnownLogsSource({
    logsFile: opts.logsFile,
    logsLists: opts.logsLists,
    ownOrigin: opts.ownOrigin,
    policy: { mlDsaCosignKey: service.hasMlDsaKey },
    events: {
      loaded: (source, current) => {
        metrics?.reloads.inc({ result: 'ok' });
        metrics?.knownLogs.set(current.size);
        log?.info({ source, logs: current.size }, 'cosign: known logs loaded');
        remember(current);
        service.pruneQuota(current);
      },
      failed: (reason) => {
        metrics?.reloads.inc({ result: 'failed' });
        log?.warn({ reason }, 'cosign: logs reload failed; keeping the previous copy');
      },
      notice: (n) => {
        log?.warn({ origin: n.origin, list: n.source }, `cosign: log list: ${n.message}`);
      },
    },
  });
  const svc = service;

  if (metrics !== undefined) {
    for (const origin of logs.current().keys()) {
      const state = await opts.store.getOrigin(origin);
      if (state !== undefined) metrics.size.set({ origin }, state.size);
    }
  }

  if (opts.watch !== false) logs.start();

  return {
    service: svc,
    logs,
    register(app) {
      registerCosignRoutes(app, {
        service: svc,
        originForHash: (h) => byHash.get(h),
        metrics,
        retryAfterSeconds: opts.retryAfterSeconds ?? 1,
      });
    },
    healthInfo() {
      return { cosignVkey: svc.ed25519Vkey ?? null, cosignVkeys: svc.vkeys, origins: [...logs.current().keys()].sort() };
    },
    reload: () => logs.reload(),
    stop: () => {
      logs.stop();
    },
  };
}
