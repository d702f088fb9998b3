/**
 * `token-bridge serve` composition: the key directory, the trusted roots (reloaded on SIGHUP and
 * rename-into-place), the nonce store (SQLite `nonces.sqlite` in `--data-dir` by default, PostgreSQL
 * with `--store postgres://…`, in memory only with `--nonce-store memory`), the policy, the hardened
 * HTTP(S) server with the bridge routes, and the timers (the key directory is re-read — new keys,
 * promotion — every 60 s and on SIGHUP, so replicas sharing one key directory publish one JWKS).
 *
 * `--dev` relaxes only what it names: an `http://` issuer (or a port) on a loopback host — and when
 * no `--issuer` is given, the issuer is the listening URL itself —, and a generated throwaway key
 * directory when `--key-dir` is missing. Each relaxation is logged at start.
 */
import { httpLimitOptions, type HttpLimits } from '../server/limits.ts';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { readKeyFile } from '../keys/keyfile.ts';
import { fileProblem, readInputFile } from '../config/input-file.ts';
import { closeGracefully, listen } from '../server/lifecycle.ts';
import type { ListenInfo } from '../server/lifecycle.ts';
import type { App } from '../server/options.ts';
import { readDocument } from '../config/config-file.ts';
import { Reloadable } from '../config/reloadable.ts';
import { createBridgeServer } from './app.ts';
import type { BridgeMetrics } from './metrics.ts';
import { DEFAULT_AUDIENCE, DEFAULT_TTL_SECONDS, MAX_TTL_LIMIT_SECONDS } from './decide.ts';
import { NONCE_MIN_RETENTION_SECONDS } from './pop.ts';
import type { BridgePolicy } from './decide.ts';
import { BridgeConfigError, type BridgeConfigErrorCode } from './errors.ts';
import { isLoopbackHost, validateIssuer } from './issuer.ts';
import type { IssuerInfo } from './issuer.ts';
import { SigningKeyring } from './key-dir.ts';
import { DEFAULT_NONCE_CAPACITY, MemoryNonceStore } from './nonces.ts';
import type { NonceStore } from './nonces.ts';
import { PostgresNonceStore } from './nonces-postgres.ts';
import { NONCES_SQLITE_FILE, SqliteNonceStore } from './nonces-sqlite.ts';
import { TokenService } from './service.ts';
import { StoreHealth } from '../store/health.ts';
import type { SigningAlg } from './signing.ts';
import { parseTrustedRoots } from './trusted-roots.ts';
import { checkKelConfig, openKelRoots, type KelRootsConfig } from './kel-part.ts';
import type { KelRoots } from './roots-kel.ts';
import { checkGateConfig, loadGatePolicy, type GateConfig } from './gate-part.ts';
import type { TrustedRoots } from './trusted-roots.ts';

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
  /** With `--kel-source` (SPEC §7.1): the KEL roots (`reload` is what SIGHUP and the poll do). */
  kel?: KelRoots;
  /** Re-read the key directory and promote a due key now (what SIGHUP and the timer do). */
  refreshKeys(): Promise<{ changed: boolean; promoted: string | null }>;
  close(): Promise<void>;
}

function fail(code: BridgeConfigErrorCode, message: string): never {
  throw new BridgeConfigError(code, message);
}

/** A free TCP port on `host` (dev only: the issuer must name the port before the server listens). */
async function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => {
        resolve(port);
      });
    });
  });
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

/** The nonce store the configuration asks for (opened; the caller closes it). */
async function openNonceStore(config: BridgeConfig, issuer: string, keyDir: string): Promise<NonceStore> {
  const capacity = config.nonceCapacity ?? DEFAULT_NONCE_CAPACITY;
  const purgeIntervalMs = config.noncePurgeIntervalMs ?? 10_000;
  const clock = config.clock ?? Date.now;
  if (config.nonceStore === 'memory') return new MemoryNonceStore(capacity);
  if (config.store !== undefined) {
    const databaseClock = config.storeDatabaseClock === undefined ? {} : { databaseClock: config.storeDatabaseClock };
    return PostgresNonceStore.open({ url: config.store, issuer, capacity, purgeIntervalMs, clock, ...databaseClock });
  }
  return SqliteNonceStore.open(join(config.dataDir ?? keyDir, NONCES_SQLITE_FILE), {
    capacity,
    purgeIntervalMs,
    clock,
    ...(config.anchorFloorMaxSeeds === undefined ? {} : { floorCapacity: config.anchorFloorMaxSeeds }),
  });
}

/** The nonce store, telling `health` of each successful consume (a committed write: the store is up). */
function reportingSuccess(store: NonceStore, health: StoreHealth): NonceStore {
  return {
    kind: store.kind,
    capacity: store.capacity,
    get size() {
      return store.size;
    },
    get clockSkewMs() {
      return store.clockSkewMs;
    },
    consume: async (key, iat, now, raise) => {
      const result = await store.consume(key, iat, now, raise);
      health.succeeded();
      return result;
    },
    peek: (key, iat, now) => store.peek(key, iat, now),
    ...(store.floor === undefined ? {} : { floor: store.floor.bind(store) }),
    ...(store.raiseFloor === undefined ? {} : { raiseFloor: store.raiseFloor.bind(store) }),
    probe: () => store.probe(),
    close: () => store.close(),
  };
}

/**
 * --tls-cert and --tls-key, checked before the listener needs them: each file's problem (and a
 * key that does not belong to the certificate) named by its flag, in plain words.
 */
function loadTls(certFile: string, keyFile: string): { cert: Buffer; key: string } {
  const coded = (m: string): Error => new BridgeConfigError('invalid_option', m);
  // the key file first: a group- or world-readable private key is refused whatever the certificate
  const key = readInputFile('--tls-key', keyFile, () => readKeyFile(keyFile), coded);
  const cert = readInputFile('--tls-cert', certFile, () => readFileSync(certFile), coded);
  const first = readInputFile('--tls-cert', certFile, () => new X509Certificate(cert), coded);
  const privateKey = readInputFile('--tls-key', keyFile, () => createPrivateKey(key), coded);
  if (!first.checkPrivateKey(privateKey))
    fail('invalid_option', `--tls-key ${keyFile}: not the private key of the certificate in --tls-cert ${certFile}`);
  try {
    createSecureContext({ cert, key });
  } catch (e) {
    fail('invalid_option', `--tls-cert ${certFile} with --tls-key ${keyFile}: ${fileProblem(e, certFile)}`);
  }
  return { cert, key };
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

  let trustedRoots: Reloadable<TrustedRoots> | undefined;
  const late: { metrics?: BridgeMetrics; kel?: Awaited<ReturnType<typeof openKelRoots>> } = {};
  if (config.trustedRootsFile !== undefined) {
    const read = (p: string): TrustedRoots =>
      readInputFile(
        '--trusted-roots',
        p,
        () => parseTrustedRoots(readDocument(p), { kel: (config.kelSources ?? []).length > 0 }),
        (m) => new BridgeConfigError('invalid_trusted_roots', m),
      );
    trustedRoots = new Reloadable(config.trustedRootsFile, read, {
      loaded: (source) => {
        log.info({ file: config.trustedRootsFile, source }, 'trusted roots loaded');
        void late.kel?.reload('trusted-roots');
      },
      failed: (reason) => {
        late.metrics?.trustedRootsReloadFailures.inc();
        log.error({ file: config.trustedRootsFile, reason }, 'trusted roots reload failed; keeping the previous copy');
      },
    });
  }

  const keyring = await SigningKeyring.open(keyDir, { alg: config.alg ?? 'RS256', maxTtl, create: true }, Math.floor(Date.now() / 1000));
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
  let nonces: NonceStore;
  try {
    nonces = await openNonceStore(config, issuer.issuer, keyDir);
  } catch (e) {
    trustedRoots?.stop();
    throw e;
  }
  try {
    late.kel = await openKelRoots(config, nonces, () => trustedRoots!.current(), log);
  } catch (e) {
    trustedRoots?.stop();
    await nonces.close();
    throw e;
  }
  const kel = late.kel;
  // Up or down, from the requests (a consumed nonce is a write) and a probe every 5 s.
  const storeHealth = new StoreHealth(nonces.kind, log, { probe: () => nonces.probe() });
  const service = new TokenService({
    policy,
    trustedRoots: () => trustedRoots?.current(),
    signingKey: () => keyring.active,
    nonces: reportingSuccess(nonces, storeHealth),
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
  late.metrics = metrics;

  const report = (r: { source: string; error?: unknown; changed?: boolean; promoted?: string | null }): void => {
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
  keyring.start(config.keyRefreshIntervalMs ?? KEY_REFRESH_INTERVAL_MS, report);
  trustedRoots?.start();
  kel?.start();
  storeHealth.start();

  let info: ListenInfo;
  try {
    info = await listen(app, { host: config.host, port });
  } catch (e) {
    keyring.stop();
    trustedRoots?.stop();
    storeHealth.stop();
    await kel?.stop();
    await app.close();
    await nonces.close();
    throw e;
  }
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
  let closed = false;
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
    close: async () => {
      if (closed) return;
      closed = true;
      keyring.stop();
      trustedRoots?.stop();
      storeHealth.stop();
      await kel?.stop();
      await closeGracefully(app);
      await nonces.close();
    },
  };
}
