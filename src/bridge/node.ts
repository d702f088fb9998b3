/**
 * `token-bridge serve` composition, its parts (parts.ts) on an AsyncDisposableStack that stops them
 * in reverse order: the key directory, the trusted roots (reloaded on `reload()`, which the CLI's
 * SIGHUP handler calls, and on rename-into-place), the nonce store (SQLite `nonces.sqlite` in
 * `--data-dir` by default, PostgreSQL with `--store postgres://…`, in memory only with
 * `--nonce-store memory`), the policy, the hardened HTTP(S) server with the bridge routes, and the
 * timers (the key directory is re-read — new keys, promotion — every 60 s and on `reload()`, so
 * replicas sharing one key directory publish one JWKS).
 *
 * `--dev` relaxes only what it names: an `http://` issuer (or a port) on a loopback host — and when
 * no `--issuer` is given, the issuer is the listening URL itself —, and a generated throwaway key
 * directory when `--key-dir` is missing. Each relaxation is logged at start.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { closeGracefully, listen } from '../server/lifecycle.ts';
import type { ListenInfo } from '../server/lifecycle.ts';
import { httpLimitOptions, type HttpLimits } from '../server/limits.ts';
import type { App } from '../server/options.ts';
import type { NodePart, PartReload } from '../server/part.ts';
import { StoreHealth } from '../store/health.ts';
import { createBridgeServer } from './app.ts';
import { DEFAULT_AUDIENCE, DEFAULT_TTL_SECONDS, MAX_TTL_LIMIT_SECONDS } from './decide.ts';
import type { BridgePolicy } from './decide.ts';
import { BridgeConfigError, type BridgeConfigErrorCode } from './errors.ts';
import { isLoopbackHost, validateIssuer } from './issuer.ts';
import type { IssuerInfo } from './issuer.ts';
import { SigningKeyring } from './signing-keyring.ts';
import { BridgeSigners } from './keys-external.ts';
import type { SignerSettings } from '../keys/external.ts';
import { metricsRegistry } from '../server/server.ts';
import { freePort, loadTls } from './listener.ts';
import type { BridgeMetrics } from './metrics.ts';
import type { NonceStore } from './nonces.ts';
import { keyRefreshReporter, openNonceStore, startKeyringPart, startTrustedRootsPart } from './parts.ts';
import { checkKelConfig, startKelRootsPart, type KelRootsConfig } from './kel-part.ts';
import type { KelRoots } from './roots-kel.ts';
import { checkGateConfig, loadGatePolicy, type GateConfig } from './gate-part.ts';
import { NONCE_MIN_RETENTION_SECONDS } from './pop.ts';
import { TokenService } from './service.ts';
import type { SigningAlg } from './signing.ts';

export const KEY_REFRESH_INTERVAL_MS = 60_000;
/** SPEC §7: a replica whose clock differs from the database's by more than this is not fit to serve. */
const CLOCK_SKEW_WARN_MS = 30_000;

export interface BridgeConfig extends HttpLimits, KelRootsConfig, GateConfig {
  host: string;
  port: number;
  /** Required unless `dev` (then a throwaway directory is generated). */
  keyDir?: string;
  /** Required unless `dev` (then the listening URL is the issuer). */
  issuer?: string;
  audiences?: string[];
  trustedRootsFile?: string;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  defaultTtl?: number;
  maxTtl?: number;
  /** `/token` per-IP limit; undefined = the default 10/s burst 20; null = off */
  rateLimit?: { rps: number; burst: number } | null;
  proofOfPossession?: boolean;
  awsSessionTags?: boolean;
  dev?: boolean;
  /** Algorithm of the first key created in an empty key directory. */
  alg?: SigningAlg;
  nonceCapacity?: number;
  /**
   * 'durable' (default): SQLite `nonces.sqlite` in `dataDir`, or PostgreSQL when `store` is set.
   * 'memory': forgets used nonces at a restart, so proofs with iat ≤ start second + 60 are refused
   * (pop_stale) for 121 s after the start.
   */
  nonceStore?: 'durable' | 'memory';
  /** Where `nonces.sqlite` lives; default: the key directory. */
  dataDir?: string;
  /** `postgres://…`: the nonce store in PostgreSQL, shared by replicas of one issuer. */
  store?: string;
  /** unix ms of the process start (the pop_stale rule of the memory store); default: now */
  startedAt?: number;
  /** How often the key directory is re-read (default 60 000 ms; SPEC: within 60 s). */
  keyRefreshIntervalMs?: number;
  /** How often expired nonces are purged from a durable store (default 10 000 ms). */
  noncePurgeIntervalMs?: number;
  /** This process's clock (unix ms) for `/token` and the nonce store; tests inject a skewed one. Default Date.now. */
  clock?: () => number;
  /** Tests only: stands in for the PostgreSQL server's clock (unix ms); see PostgresNonceStoreOptions. */
  storeDatabaseClock?: () => number;
  /** SPEC §1.1: the settings of token signers (keys.json entries with `"ref":"pkcs11:…"`). */
  signers?: SignerSettings;
}

export interface RunningBridge {
  app: App;
  url: string;
  listen: ListenInfo;
  issuer: IssuerInfo;
  keyDir: string;
  keyring: SigningKeyring;
  service: TokenService;
  nonces: NonceStore;
  metrics: BridgeMetrics;
  /** With `--kel-source` (SPEC §7.1): the KEL roots. */
  kel?: KelRoots;
  /** Re-read the key directory and promote a due key now (what SIGHUP and the timer do). */
  refreshKeys(): Promise<{ changed: boolean; promoted: string | null }>;
  /** Re-read the key directory and the trusted roots (the CLI calls it on SIGHUP). */
  reload(): Promise<PartReload[]>;
  close(): Promise<void>;
}

function fail(code: BridgeConfigErrorCode, message: string): never {
  throw new BridgeConfigError(code, message);
}

/** Validate everything that does not need I/O; throws BridgeConfigError. */
export function checkBridgeConfig(config: BridgeConfig): void {
  const maxTtl = config.maxTtl ?? MAX_TTL_LIMIT_SECONDS;
  const defaultTtl = config.defaultTtl ?? DEFAULT_TTL_SECONDS;
  if (!Number.isSafeInteger(maxTtl) || maxTtl < 1 || maxTtl > MAX_TTL_LIMIT_SECONDS)
    fail('invalid_option', `--max-ttl must be 1..${MAX_TTL_LIMIT_SECONDS} seconds`);
  if (!Number.isSafeInteger(defaultTtl) || defaultTtl < 1 || defaultTtl > maxTtl)
    fail('invalid_option', `--default-ttl must be 1..--max-ttl (${maxTtl}) seconds`);
  if (config.proofOfPossession === false && config.trustedRootsFile === undefined) {
    fail('invalid_option', '--no-proof-of-possession requires --trusted-roots');
  }
  if ((config.tlsCertFile === undefined) !== (config.tlsKeyFile === undefined))
    fail('invalid_option', '--tls-cert and --tls-key go together');
  if (config.audiences !== undefined && (config.audiences.length === 0 || config.audiences.some((a) => a === '')))
    fail('invalid_option', '--audience must be non-empty');
  if (config.keyDir === undefined && config.dev !== true) fail('invalid_option', '--key-dir is required');
  if (config.issuer === undefined && config.dev !== true) fail('invalid_option', '--issuer is required');
  if (config.store !== undefined && !/^postgres(ql)?:\/\//.test(config.store)) fail('invalid_option', '--store must be a postgres:// URL');
  if (config.store !== undefined && config.nonceStore === 'memory')
    fail('invalid_option', '--store postgres://… and --nonce-store memory exclude each other');
  checkKelConfig(config);
  checkGateConfig(config);
}

export async function startBridge(config: BridgeConfig, log: FastifyBaseLogger): Promise<RunningBridge> {
  checkBridgeConfig(config);
  const dev = config.dev === true;
  const startedAt = config.startedAt ?? Date.now();
  const tls = config.tlsCertFile !== undefined && config.tlsKeyFile !== undefined ? loadTls(config.tlsCertFile, config.tlsKeyFile) : null;
  const scheme = tls === null ? 'http' : 'https';

  let port = config.port;
  let issuerText = config.issuer;
  if (issuerText === undefined) {
    const host = isLoopbackHost(config.host) ? config.host : '127.0.0.1';
    if (port === 0) port = await freePort(config.host);
    issuerText = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
    log.warn({ issuer: issuerText }, 'dev mode: no --issuer given; the listening URL is the issuer');
  }
  const issuer = validateIssuer(issuerText, dev);
  if (dev && !issuer.issuer.startsWith('https://'))
    log.warn({ issuer: issuer.issuer }, 'dev mode: http:// issuer on loopback (relying parties such as AWS require https)');

  let keyDir = config.keyDir;
  if (keyDir === undefined) {
    keyDir = join(mkdtempSync(join(tmpdir(), 'token-bridge-dev-')), 'keys');
    log.warn(
      { keyDir },
      'dev mode: no --key-dir given; generated throwaway signing keys (tokens stop verifying once this directory is gone)',
    );
  }
  const maxTtl = config.maxTtl ?? MAX_TTL_LIMIT_SECONDS;

  const gate = await loadGatePolicy(config);
  const stack = new AsyncDisposableStack();
  try {
    const parts: NodePart[] = [];
    const late: { metrics?: BridgeMetrics; kel?: KelRoots } = {};
    const trustedRoots =
      config.trustedRootsFile === undefined
        ? undefined
        : stack.use(
            startTrustedRootsPart(config.trustedRootsFile, log, () => late.metrics, {
              kel: (config.kelSources ?? []).length > 0,
              loaded: () => void late.kel?.reload('trusted-roots'),
            }),
          );
    if (trustedRoots !== undefined) parts.push(trustedRoots);
    // SPEC §1.1: the active key may be on a PKCS#11 token; its signer is closed last.
    const signers = new BridgeSigners(config.signers, log);
    stack.defer(() => signers.closeAll());
    const keyring = await SigningKeyring.open(
      keyDir,
      { alg: config.alg ?? 'RS256', maxTtl, create: true, signers },
      Math.floor(Date.now() / 1000),
    );
    const policy: BridgePolicy = {
      issuer: issuer.issuer,
      audiences: config.audiences ?? [DEFAULT_AUDIENCE],
      defaultTtl: config.defaultTtl ?? DEFAULT_TTL_SECONDS,
      maxTtl,
      proofOfPossession: config.proofOfPossession ?? true,
      awsSessionTags: config.awsSessionTags ?? false,
      // The restart rule only for a store that forgets (SPEC §7); durable stores remember instead.
      startedAt: config.nonceStore === 'memory' ? startedAt : null,
    };
    const nonces = await openNonceStore(config, issuer.issuer, keyDir);
    stack.defer(() => nonces.close());
    // SPEC §7.1: roots whose keys come from KELs (the first evaluation done before serving).
    const kelPart = await startKelRootsPart(config, nonces, () => trustedRoots!.current(), log);
    if (kelPart !== undefined) parts.push(stack.use(kelPart));
    const kel = (late.kel = kelPart?.roots);
    // Up or down, from the requests (a consumed nonce is a committed write) and a probe every 5 s.
    const storeHealth = new StoreHealth(nonces.kind, log, { probe: () => nonces.probe() });
    const service = new TokenService({
      policy,
      trustedRoots: () => trustedRoots?.current(),
      signingKey: () => keyring.active,
      nonces,
      committed: () => {
        storeHealth.succeeded();
      },
      ...(kel === undefined ? {} : { kelRoots: () => kel.snapshot() }),
      ...(gate === undefined ? {} : { gate }),
      ...(config.clock === undefined ? {} : { now: config.clock }),
    });

    const serverOpts = {
      logger: log,
      https: tls,
      storeHealth,
      ...(config.rateLimit === undefined ? {} : { rateLimit: config.rateLimit }),
      ...httpLimitOptions(config),
    };
    const { app, metrics } = await createBridgeServer(
      {
        service,
        keys: keyring,
        issuer,
        store: storeHealth,
        ...(kel === undefined ? {} : { kel }),
        ...(gate === undefined ? {} : { anchorFloorRate: config.anchorFloorRate ?? { rps: 1, burst: 10 } }),
      },
      serverOpts,
    );
    stack.defer(() => closeGracefully(app));
    late.metrics = metrics;
    signers.attachMetrics(metricsRegistry(app));
    const report = keyRefreshReporter(keyring, metrics, log);
    parts.push(stack.use(await startKeyringPart(keyring, config.keyRefreshIntervalMs ?? KEY_REFRESH_INTERVAL_MS, report)));
    storeHealth.start();
    stack.defer(() => {
      storeHealth.stop();
    });
    const info = await listen(app, { host: config.host, port });
    const running = stack.move();
    log.info(
      {
        url: info.url,
        issuer: issuer.issuer,
        key_dir: keyDir,
        active_kid: keyring.active.kid,
        alg: keyring.active.alg,
        audiences: policy.audiences,
        proof_of_possession: policy.proofOfPossession,
        trusted_roots: config.trustedRootsFile ?? null,
        nonce_store: nonces.kind,
      },
      'token bridge started',
    );
    if (nonces.kind === 'memory' && policy.proofOfPossession) {
      log.warn(
        { until: new Date(startedAt + NONCE_MIN_RETENTION_SECONDS * 1000).toISOString() },
        'in-memory nonce store (--nonce-store memory): nonces used before this start are forgotten, so proofs with iat up to 60 s after the start are refused (pop_stale) for 121 s; tokens are not issued for about a minute after each restart',
      );
    }
    if (nonces.clockSkewMs !== undefined && Math.abs(nonces.clockSkewMs) > CLOCK_SKEW_WARN_MS) {
      log.warn(
        { clock_skew_ms: Math.round(nonces.clockSkewMs) },
        "this host's clock differs from the nonce store database's by more than 30 s: proofs fresh on this clock may be refused at commit (pop_stale); synchronize the clocks (NTP)",
      );
    }
    if (!policy.proofOfPossession)
      log.warn('proof of possession is off: a copied chain of a trusted root mints tokens (they carry "pop": false)');
    let closed: Promise<void> | undefined;
    return {
      app,
      url: info.url,
      listen: info,
      issuer,
      keyDir,
      keyring,
      service,
      nonces,
      metrics,
      ...(kel === undefined ? {} : { kel }),
      refreshKeys: async () => {
        const r = await keyring.refresh(Math.floor(Date.now() / 1000));
        report({ source: 'manual', ...r });
        return r;
      },
      reload: async () => {
        const reports: PartReload[] = [];
        for (const p of parts) if (p.reload !== undefined) reports.push(await p.reload());
        return reports;
      },
      close: () => (closed ??= running.disposeAsync()),
    };
  } catch (e) {
    await stack.disposeAsync();
    throw e;
  }
}
