/**
 * The anchor-witness node: turns a configuration into a running server (keys, store, registry,
 * roles, routes), and shuts it down gracefully. The CLI's `serve` and `npm start` both use it.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { SignaturePool } from '../anchoring/verify-pool.ts';
import { join } from 'node:path';
import type { KeyObject } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { parseRegistry, type Registry as PartyRegistry } from '../anchor/registry.ts';
import { ed25519PrivateKeyFromPem, ed25519PrivateKeyToPem, ed25519PublicKeyBytes, generateEd25519 } from '../crypto/ed25519.ts';
import { signingKeyFromPem, type SigningKey } from '../crypto/signing-key.ts';
import { encodeHex } from '../encoding/hex.ts';
import { readKeyFile, writeNewKeyFile } from '../keys/keyfile.ts';
import { readInputFile } from '../config/input-file.ts';
import { validateName } from '../note/checkpoint.ts';
import { createServer, registerMetricsRoute } from '../server/server.ts';
import { closeGracefully, listen, type ListenInfo } from '../server/lifecycle.ts';
import type { App } from '../server/options.ts';
import { SqliteStore } from '../store/sqlite/store.ts';
import { httpLimitOptions, type HttpLimits } from '../server/limits.ts';
import { PostgresStore } from '../store/postgres/store.ts';
import type { WitnessStore } from '../store/types.ts';
import { StoreHealth } from '../store/health.ts';
import { VERSION } from '../version.ts';
import { AnchorService } from '../anchoring/service.ts';
import { ConfigError } from './errors.ts';
import { readDocument } from '../config/config-file.ts';
import { TransparencyLog } from '../log/log.ts';
import { LogSigner } from '../log/signer.ts';
import type { QuotaDefaults } from '../anchor/quota-window.ts';
import { Reloadable } from '../config/reloadable.ts';
import { registerWitnessRoutes } from './routes.ts';
import { CheckpointClock, createWitnessStatusPage, type WitnessPageSources } from './status-page.ts';
import { createCosignRole, type CosignRole } from '../cosign/role.ts';
import { loadBuildAttestation } from '../release/attestation.ts';
import { startKelRegistry, type KelSourceConfig } from './kel-registry.ts';
import { loadBastionCa, loadBastionKey, startBastionBackends, type BastionBackends } from '../bastion/backends.ts';
import { parseBastionAddresses } from '../bastion/address.ts';
import type { BastionTiming } from '../bastion/connection.ts';
import { startLogWitnessing } from '../log-witness/node-part.ts';
import { ExternalSigners, ed25519PublicKeyObject, isExternalKeyRef, type SignerSettings } from '../keys/external.ts';
import type { Signer } from '../keys/signer.ts';
import { isExternalSigner } from '../cosign/service.ts';
import { formatVkey } from '../note/vkey.ts';
import { SIG_TYPE_COSIGNATURE_V1 } from '../note/signed-note.ts';
import { registerReadinessRoutes } from '../server/readiness.ts';
import type { ForkedCheckpoint, LogWitnessing } from '../log-witness/witnessing.ts';

export const ROLES = ['anchor', 'cosign'] as const;
export type Role = (typeof ROLES)[number];

export interface WitnessConfig extends HttpLimits {
  host: string;
  port: number;
  dataDir: string;
  /** `--key`: a key file, or an `ssh-agent:`/`pkcs11:` reference (SPEC §1.1). */
  keyFile?: string;
  /** `--signer-timeout`, `--signer-max-pending`, `--signer-start-timeout`, `--pkcs11-sessions` (SPEC §1.1). */
  signers?: SignerSettings;
  name: string;
  roles: Role[];
  /** One or more cosign keys (one cosignature line each). */
  cosignKeyFiles?: string[];
  registryFile?: string;
  logsFile?: string;
  /** logs/v0 lists, files or https URLs: add new origins only (SPEC §5.5). */
  logsLists?: string[];
  /** `--logs-list-interval`, seconds. */
  logsListIntervalSeconds?: number;
  /** `--logs-list-max-qpd`, `-max-new`, `-max-origins`. */
  logsListLimits?: { maxQpd: number; maxNew: number; maxOrigins: number };
  logOrigin?: string;
  store?: string;
  allowUnderivedSeeds: boolean;
  dev: boolean;
  quota: QuotaDefaults;
  rateLimit?: { rps: number; burst: number } | null;
  /** POST /sign-subtree with an ML-DSA-44 cosign key (default true; `--no-sign-subtree`: false). */
  signSubtree?: boolean;
  /** `--sign-subtree-rate`: its own per-client bucket (default 2:10; null = off). */
  signSubtreeRate?: { rps: number; burst: number } | null;
  /** Worker threads for Ed25519 verification (default: cores − 1; 0 = on the event loop). */
  verifyThreads?: number;
  /** DSSE build attestation served at /build (SPEC §6); refused unless it names the running bundle. */
  buildAttestation?: string;
  /** Parties' keys from key event logs (SPEC §3.5; needs registryFile). */
  kel?: KelSourceConfig;
  /** `--bastion HOST:PORT`…: serve the cosign routes through these bastions (SPEC §5.6). */
  bastions?: string[];
  /** `--bastion-key`: the backend identity (Ed25519), required with `bastions`. */
  bastionKeyFile?: string;
  /** `--bastion-ca`: PEM roots for the bastions' certificates, instead of the default ones. */
  bastionCaFile?: string;
  /** `--no-listen`: serve only through the bastions (role cosign alone). */
  noListen?: boolean;
  /** Bastion ping and reconnect timing (tests). */
  bastionTiming?: Partial<BastionTiming>;
  /** `--log-witnesses FILE` (SPEC §4.1): peer witnesses cosign this node's own checkpoints. */
  logWitnessesFile?: string;
  /** `--log-witness-interval` in ms (default 1 000). */
  logWitnessIntervalMs?: number;
  /** `--log-witness-alert-lag` in ms (default 10 min). */
  logWitnessAlertLagMs?: number;
  /**
   * TEST-ONLY: expose `RunningWitness.testHooks` (fault injection). Set only by tests through this
   * programmatic API; no flag, variable or config-file setting reaches it.
   */
  testOnlyFaultHooks?: boolean;
}

export interface RunningWitness {
  app: App;
  /** the listener's URL; '' with --no-listen */
  url: string;
  /** null with --no-listen */
  listen: ListenInfo | null;
  /** the bastion connections, when --bastion is given */
  bastions: BastionBackends | null;
  store: WitnessStore;
  /** The store up or down (`/health` "store"; one log line per outage). */
  storeHealth: StoreHealth;
  witnessPublicKey: Uint8Array;
  logOrigin: string;
  /** The witnessed own log, with --log-witnesses. */
  logWitnessing: LogWitnessing | undefined;
  /** TEST-ONLY (config.testOnlyFaultHooks): make the node sign and offer a second, inconsistent checkpoint. */
  testHooks?: { forkLogCheckpoint(): Promise<ForkedCheckpoint> };
  close(): Promise<void>;
}

export function parseRoles(text: string[]): Role[] {
  const roles = new Set<Role>();
  for (const r of text) {
    if (!(ROLES as readonly string[]).includes(r))
      throw new ConfigError('invalid_role', `unknown role ${JSON.stringify(r)} (valid: ${ROLES.join(', ')})`);
    roles.add(r as Role);
  }
  if (roles.size === 0) throw new ConfigError('invalid_role', '--roles must name at least one role');
  return [...roles];
}

/** The key file's path; with --dev a missing key is created once in the data dir (and kept). */
function keyPath(file: string | undefined, devFile: string, dev: boolean, what: 'witness' | 'cosign', log: FastifyBaseLogger): string {
  const flag = what === 'witness' ? '--key' : '--cosign-key';
  if (file !== undefined) return file;
  if (!dev)
    throw new ConfigError(
      'key_required',
      `the ${what} key file is required (${flag} FILE; create one with: anchor-witness keygen --out FILE)`,
    );
  if (!existsSync(devFile)) {
    writeNewKeyFile(devFile, ed25519PrivateKeyToPem(generateEd25519().privateKey));
    log.warn({ path: devFile }, `--dev: generated a ${what} key for a first try (kept in the data dir; use ${flag} for a real deployment)`);
  }
  return devFile;
}

/** The witness key: Ed25519 only. */
function loadWitnessKey(file: string | undefined, devFile: string, dev: boolean, log: FastifyBaseLogger): KeyObject {
  const path = keyPath(file, devFile, dev, 'witness', log);
  return readInputFile('--key', path, () => ed25519PrivateKeyFromPem(readKeyFile(path)));
}

/** A cosign key: Ed25519 or ML-DSA-44, the type from the PKCS#8 algorithm OID (SPEC §5.1). */
function loadCosignKey(file: string | undefined, devFile: string, dev: boolean, log: FastifyBaseLogger): SigningKey {
  const path = keyPath(file, devFile, dev, 'cosign', log);
  return readInputFile('--cosign-key', path, () => signingKeyFromPem(readKeyFile(path)));
}

export async function openStore(spec: string | undefined, dataDir: string): Promise<WitnessStore> {
  const s = spec ?? `sqlite:${join(dataDir, 'witness.db')}`;
  if (s.startsWith('sqlite:')) return SqliteStore.open(s.slice('sqlite:'.length));
  // Scale-out (docs/scale-out.md): several replicas may share this database.
  if (s.startsWith('postgres://') || s.startsWith('postgresql://')) return PostgresStore.open(s);
  throw new ConfigError('invalid_store', `--store must be sqlite:PATH or postgres://…, got ${JSON.stringify(s)}`);
}

export type WitnessMetrics = ReturnType<typeof witnessMetrics>;

function witnessMetrics(registry: Registry, anchorQueueDepth: () => number) {
  return {
    // Read at scrape time. At most --max-in-flight: an abandoned request's anchor leaves the queue.
    queueDepth: new Gauge({
      name: 'anchor_queue_depth',
      help: 'POST /v1/anchor requests waiting in the sequencer for the next group commit',
      registers: [registry],
      collect() {
        this.set(anchorQueueDepth());
      },
    }),
    cosigned: new Counter({ name: 'anchors_cosigned_total', help: 'Anchors co-signed and logged', registers: [registry] }),
    duplicities: new Counter({ name: 'duplicities_total', help: 'Duplicity proofs stored (seeds frozen)', registers: [registry] }),
    logSize: new Gauge({ name: 'log_size', help: "Size of the witness's own log", registers: [registry] }),
    reloads: new Counter({ name: 'registry_reloads_total', help: 'Successful party registry reloads', registers: [registry] }),
    reloadFailures: new Counter({
      name: 'registry_reload_failures_total',
      help: 'Failed registry reloads (old copy kept)',
      registers: [registry],
    }),
    // Group commit: how many POST /v1/anchor requests share one durable commit, and how long the
    // batch's store transaction holds the sequencer (it runs on the event loop, fsync included).
    batchRequests: new Histogram({
      name: 'anchor_batch_requests',
      help: 'Requests decided per committed anchor batch (group commit)',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
      registers: [registry],
    }),
    batchSeconds: new Histogram({
      name: 'anchor_batch_seconds',
      help: 'Store transaction time per committed anchor batch, COMMIT (fsync) included',
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
      registers: [registry],
    }),
  };
}

export async function startWitness(config: WitnessConfig, log: FastifyBaseLogger): Promise<RunningWitness> {
  const startedAtMs = Date.now();
  // When this process signed (or first saw) the latest checkpoint: the status page shows its age.
  const checkpointClock = new CheckpointClock();
  validateName(config.name);
  const logOrigin = config.logOrigin ?? `${config.name}/anchors`;
  validateName(logOrigin);
  const bastionAddrs = config.bastions ?? [];
  parseBastionAddresses(bastionAddrs);
  if (config.noListen === true && (bastionAddrs.length === 0 || config.roles.length !== 1 || config.roles[0] !== 'cosign'))
    throw new ConfigError(
      'invalid_no_listen',
      '--no-listen needs at least one --bastion and --roles cosign alone (the anchor role, /metrics and the own log need a listener)',
    );
  if (bastionAddrs.length > 0 && config.bastionKeyFile === undefined)
    throw new ConfigError(
      'key_required',
      '--bastion needs --bastion-key FILE (an Ed25519 key of its own; create one with: anchor-witness keygen --out FILE)',
    );
  mkdirSync(config.dataDir, { recursive: true });
  if (config.dev) log.warn('--dev: development relaxations are on (generated keys may be used; see the docs)');
  // SPEC §6: bind the build attestation to the running bundle before anything else starts.
  const build = config.buildAttestation === undefined ? undefined : loadBuildAttestation(config.buildAttestation);
  if (build !== undefined)
    log.info({ running_digest: build.body.running_digest, bundle: build.file }, 'build attestation names the running bundle');

  // SPEC §1.1: `--key`/`--cosign-key` may name a key in an ssh-agent or on a PKCS#11 token.
  const registry = new Registry();
  const external = new ExternalSigners(config.signers, log, registry);
  const witnessSigner = isExternalKeyRef(config.keyFile) ? await external.open(config.keyFile, 'witness', 'ed25519') : undefined;
  const witnessKey =
    witnessSigner === undefined ? loadWitnessKey(config.keyFile, join(config.dataDir, 'witness-key.pem'), config.dev, log) : undefined;
  const witnessPublicKey = witnessSigner?.publicKey ?? ed25519PublicKeyBytes(witnessKey!);
  const witnessKeyHex = encodeHex(witnessPublicKey);
  const cosignKeys: (SigningKey | { algorithm: 'ed25519'; publicKey: Uint8Array; privateKey: Signer })[] = [];
  if (config.roles.includes('cosign')) {
    const files = config.cosignKeyFiles ?? [];
    if (files.length === 0) cosignKeys.push(loadCosignKey(undefined, join(config.dataDir, 'cosign-key.pem'), config.dev, log));
    for (const f of files) {
      if (!isExternalKeyRef(f)) cosignKeys.push(loadCosignKey(f, '', false, log));
      else {
        const s = await external.open(f, (pk) => `cosign:${formatVkey(config.name, SIG_TYPE_COSIGNATURE_V1, pk)}`, 'ed25519');
        cosignKeys.push({ algorithm: 'ed25519', publicKey: s.publicKey, privateKey: s });
      }
    }
    const seen = new Map<string, number>();
    cosignKeys.forEach((k, i) => {
      const hex = encodeHex(k.publicKey);
      if (k.algorithm === 'ed25519' && hex === witnessKeyHex) {
        throw new ConfigError('cosign_key_reused', 'the cosign key must differ from the witness key (a key signs one signature type)');
      }
      const first = seen.get(hex);
      if (first !== undefined)
        throw new ConfigError('cosign_key_duplicate', `--cosign-key ${i + 1} holds the same key as --cosign-key ${first + 1}`);
      seen.set(hex, i);
    });
  }

  const bastionKey =
    config.bastionKeyFile === undefined || bastionAddrs.length === 0
      ? undefined
      : loadBastionKey(config.bastionKeyFile, [
          { what: 'witness key (--key)', key: witnessKey ?? ed25519PublicKeyObject(witnessPublicKey) },
          ...cosignKeys.map((k) => ({
            what: 'cosign key (--cosign-key)',
            key: isExternalSigner(k.privateKey) ? ed25519PublicKeyObject(k.publicKey) : k.privateKey,
          })),
        ]);
  const bastionCa = config.bastionCaFile === undefined ? undefined : loadBastionCa(config.bastionCaFile);

  const store = await openStore(config.store, config.dataDir);
  // Up or down, from the requests and a probe every 5 s (a read of the stored checkpoint).
  const storeHealth = new StoreHealth(store instanceof SqliteStore ? 'sqlite' : 'postgres', log, { probe: () => store.log.checkpoint() });
  // The pool also signs anchor cosign messages with the witness key, and the cosign role's
  // ML-DSA-44 lines with the ML-DSA-44 cosign keys (off the event loop).
  const verifyPool = new SignaturePool(
    config.verifyThreads ?? Math.max(0, availableParallelism() - 1),
    witnessKey,
    cosignKeys.flatMap((k) => (k.algorithm === 'ml-dsa-44' ? [k.privateKey] : [])),
  );
  let anchors: AnchorService | undefined;
  const m = witnessMetrics(registry, () => anchors?.queueDepth ?? 0);
  const closers: (() => Promise<void> | void)[] = [() => store.close(), () => verifyPool.close(), () => external.close()];
  try {
    await store.bindIdentity({ witnessKey: witnessKeyHex, name: config.name, logOrigin });
    const logSigner = new LogSigner(logOrigin, witnessSigner ?? witnessKey!);
    const witnessLog = new TransparencyLog(store, logSigner);

    let kelStatus: WitnessPageSources['kel'];
    if (config.roles.includes('anchor')) {
      let parties: () => PartyRegistry;
      if (config.kel !== undefined) {
        // SPEC §3.5: the first load (whole source verified, kel_tips raised) finishes before listening.
        const kel = await startKelRegistry(config.kel, config.registryFile, store.anchors, registry, m, log);
        closers.push(() => kel.stop());
        parties = () => kel.current();
        kelStatus = () => kel.status();
      } else if (config.registryFile !== undefined) {
        const source = new Reloadable(config.registryFile, (p) => readInputFile('--registry', p, () => parseRegistry(readDocument(p))), {
          loaded: (why) => {
            m.reloads.inc();
            log.info({ source: why }, 'party registry reloaded');
          },
          failed: (reason) => {
            m.reloadFailures.inc();
            log.error({ reason }, 'party registry reload failed; keeping the previous copy');
          },
        });
        source.start();
        closers.push(() => {
          source.stop();
        });
        parties = () => source.current();
      } else {
        const empty = parseRegistry({ parties: [] });
        log.warn('no --registry: the party registry is empty, every submission is unknown_party');
        parties = () => empty;
      }
      anchors = new AnchorService({
        log: witnessLog,
        witnessKey: witnessSigner ?? witnessKey!,
        name: config.name,
        registry: parties,
        allowUnderivedSeeds: config.allowUnderivedSeeds,
        quota: config.quota,
        verifyPool,
        onCommit: (e) => {
          m.cosigned.inc(e.cosigned);
          m.duplicities.inc(e.duplicities.length);
          m.logSize.set(e.size);
          m.batchRequests.observe(e.requests);
          m.batchSeconds.observe(e.seconds);
          checkpointClock.signed(e.size, Date.now());
        },
      });
    }
    const cp = await witnessLog.init();
    m.logSize.set(cp.size);
    checkpointClock.seen(cp.size, Date.now());

    let bastions: BastionBackends | null = null;
    let logWitnessing: LogWitnessing | undefined;
    if (config.logWitnessesFile !== undefined) {
      const part = await startLogWitnessing({
        file: config.logWitnessesFile,
        intervalMs: config.logWitnessIntervalMs,
        alertLagMs: config.logWitnessAlertLagMs,
        log: witnessLog,
        store: store.logWitness,
        metrics: registry,
        logger: log,
      });
      logWitnessing = part.witnessing;
      closers.unshift(part.stop); // before the store closes
    }

    let cosign: CosignRole | undefined;
    if (cosignKeys.length > 0) {
      if (config.logsFile === undefined && (config.logsLists ?? []).length === 0)
        log.warn('role cosign without --logs: no log is known, every add-checkpoint is 404');
      cosign = await createCosignRole({
        store: store.cosign,
        cosignKeys: cosignKeys.map((k) => k.privateKey),
        name: config.name,
        logsFile: config.logsFile,
        logsLists: config.logsLists,
        logsListIntervalSeconds: config.logsListIntervalSeconds,
        logsListLimits: config.logsListLimits,
        dev: config.dev,
        sharedStore: store.capabilities.multiWriter,
        ownOrigin: logOrigin,
        witnessPublicKey,
        metrics: registry,
        log,
        verifyPool,
        signSubtree: config.signSubtree,
        signSubtreeRate: config.signSubtreeRate,
      });
      const role = cosign;
      closers.push(() => {
        role.stop();
      });
    }

    const app = await createServer({
      logger: log,
      metrics: registry,
      openapi: {
        title: 'anchor-witness',
        version: VERSION,
        description: 'Witness node for append-only anchor chains (docs/protocol.md §3–§6)',
      },
      ...httpLimitOptions(config),
      rateLimit: config.rateLimit ?? null,
      storeHealth,
    });
    closers.unshift(() => closeGracefully(app));
    storeHealth.start();
    closers.unshift(() => {
      storeHealth.stop();
    });
    registerMetricsRoute(app);
    registerReadinessRoutes(app, { signers: () => external.all(), storeUp: () => storeHealth.snapshot().state === 'up' });
    registerWitnessRoutes(app, {
      log: witnessLog,
      anchors,
      store: storeHealth,
      signers: () => external.all().map((s) => s.status()),
      health: {
        name: config.name,
        roles: config.roles,
        version: VERSION,
        origin: logOrigin,
        witnessKeyHex,
        logVkey: logSigner.vkey,
        cosignVkey: cosign?.healthInfo().cosignVkey ?? null,
        cosignVkeys: cosign?.healthInfo().cosignVkeys ?? [],
        ...(bastionKey === undefined ? {} : { bastions: () => bastions?.status() ?? [] }),
      },
      statusPage: createWitnessStatusPage({
        store,
        clock: checkpointClock,
        cosign,
        metrics: registry,
        build,
        startedAtMs,
        kel: kelStatus,
        logWitnessing,
      }),
      build,
      logWitnessing,
    });
    cosign?.register(app);
    let info: ListenInfo | null = null;
    if (config.noListen === true) await app.ready();
    else info = await listen(app, { host: config.host, port: config.port });
    if (bastionKey !== undefined) {
      bastions = startBastionBackends({
        key: bastionKey,
        addresses: bastionAddrs,
        ca: bastionCa,
        app,
        registry,
        dataDir: config.dataDir,
        log,
        timing: config.bastionTiming,
      });
      const b = bastions;
      closers.unshift(() => b.close());
    }
    let closed = false;
    return {
      app,
      url: info?.url ?? '',
      listen: info,
      bastions,
      store,
      storeHealth,
      witnessPublicKey,
      logOrigin,
      logWitnessing,
      ...(config.testOnlyFaultHooks === true && logWitnessing !== undefined
        ? { testHooks: { forkLogCheckpoint: () => logWitnessing.forkForTest() } }
        : {}),
      close: async () => {
        if (closed) return;
        closed = true;
        for (const c of closers) await c();
      },
    };
  } catch (e) {
    for (const c of closers) await c();
    throw e;
  }
}
