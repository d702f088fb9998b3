/**
 * The anchor-witness node: turns a configuration into a running server and shuts it down
 * gracefully. It loads the keys (NodeKeys), opens the store, builds the signature pool and the
 * log, starts the parts (docs/ARCHITECTURE.md, "One node, many parts") on an
 * AsyncDisposableStack, so they stop in reverse order by construction, mounts their routes and
 * listens. The CLI's `serve` and `npm start` both use it; the CLI's one SIGHUP handler calls
 * `reload()`.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { Registry } from 'prom-client';
import { openSignaturePool, startAnchoringPart } from '../anchoring/part.ts';
import { planBastions, startBastionPart, type BastionBackends, type BastionPart } from '../bastion/part.ts';
import { startCosignPart, type CosignPart } from '../cosign/part.ts';
import { startKelWitnessPart, type KelWitnessPart } from '../kel-witness/part.ts';
import { ExternalSigners } from '../keys/external.ts';
import { NodeKeys } from '../keys/node-keys.ts';
import { TransparencyLog } from '../log/log.ts';
import { LogSigner } from '../log/signer.ts';
import { KeySetWatch } from './key-set-watch.ts';
import { startLogWitnessPart, type ForkedCheckpoint, type LogWitnessing, type LogWitnessPart } from '../log-witness/part.ts';
import { registryReloadCounters, startRegistryPart, type RegistryPart } from '../registry/part.ts';
import { closeGracefully, listen, type ListenInfo } from '../server/lifecycle.ts';
import { httpLimitOptions } from '../server/limits.ts';
import type { App } from '../server/options.ts';
import type { NodePart, PartReload } from '../server/part.ts';
import { registerReadinessRoutes } from '../server/readiness.ts';
import { createServer, registerMetricsRoute } from '../server/server.ts';
import { StoreHealth } from '../store/health.ts';
import { PostgresStore } from '../store/postgres/store.ts';
import { SqliteStore } from '../store/sqlite/store.ts';
import type { WitnessStore } from '../store/types.ts';
import { VERSION } from '../version.ts';
import { checkWitnessConfig, type WitnessConfig } from './config.ts';
import { ConfigError } from './errors.ts';
import { registerKeyRotationRoutes, startKeyRotation } from './key-rotation.ts';
import { registerWitnessRoutes } from './routes.ts';
import { CheckpointClock, createWitnessStatusPage } from './status-page.ts';

export { ROLES, parseRoles, type Role, type WitnessConfig } from './config.ts';

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
  /** The KERI witness role, with role kel (SPEC §3.6). */
  kel: KelWitnessPart | undefined;
  /** TEST-ONLY (config.testOnlyFaultHooks): make the node sign and offer a second, inconsistent checkpoint. */
  testHooks?: { forkLogCheckpoint(): Promise<ForkedCheckpoint> };
  /** Re-read every part's files and sources (the CLI calls it on SIGHUP); one report per reloadable part. */
  reload(): Promise<PartReload[]>;
  close(): Promise<void>;
}

export async function openStore(spec: string | undefined, dataDir: string): Promise<WitnessStore> {
  const s = spec ?? `sqlite:${join(dataDir, 'witness.db')}`;
  if (s.startsWith('sqlite:')) return SqliteStore.open(s.slice('sqlite:'.length));
  // Scale-out (docs/scale-out.md): several replicas may share this database.
  if (s.startsWith('postgres://') || s.startsWith('postgresql://')) return PostgresStore.open(s);
  throw new ConfigError('invalid_store', `--store must be sqlite:PATH or postgres://…, got ${JSON.stringify(s)}`);
}

export async function startWitness(config: WitnessConfig, log: FastifyBaseLogger): Promise<RunningWitness> {
  const startedAtMs = Date.now();
  const { logOrigin, build } = checkWitnessConfig(config);
  const bastionPlan = planBastions(config);
  mkdirSync(config.dataDir, { recursive: true });
  if (config.dev) log.warn('--dev: development relaxations are on (generated keys may be used; see the docs)');
  if (build !== undefined)
    log.info({ running_digest: build.body.running_digest, bundle: build.file }, 'build attestation names the running bundle');
  const stack = new AsyncDisposableStack();
  try {
    // SPEC §1.1: `--key`/`--cosign-key` may name a key in an ssh-agent or on a PKCS#11 token.
    const metrics = new Registry();
    const external = new ExternalSigners(config.signers, log, metrics);
    stack.defer(() => external.close());
    const keys = await NodeKeys.load(config, log, external);
    const store = await openStore(config.store, config.dataDir);
    stack.defer(() => store.close());
    const pool = openSignaturePool(keys, config.verifyThreads);
    stack.defer(() => pool.close());
    const witnessKeyHex = Buffer.from(keys.witness.publicKey).toString('hex');
    await store.bindIdentity({ witnessKey: witnessKeyHex, name: config.name, logOrigin });
    // SPEC §1.2: during a rotation overlap checkpoints carry both keys' lines; the store's key set is
    // re-read before each signature (replicas follow an announcement or a completion by refusing).
    const logSigner = new LogSigner(logOrigin, keys.witness.privateKey, keys.next?.privateKey);
    const keySet = stack.use(new KeySetWatch(logSigner.keySet, () => store.keyHistory(), config.keySetWatchMs));
    const witnessLog = new TransparencyLog(store, logSigner, undefined, keySet.guard);
    const rotation = await startKeyRotation(witnessLog, keys, {
      name: config.name,
      origin: logOrigin,
      abandonNext: config.abandonNext ?? false,
      overlapMinSeconds: config.keyOverlapMinSeconds ?? 86_400,
      now: (config.rotationNow ?? (() => Math.floor(Date.now() / 1000)))(),
    });
    for (const e of rotation.entries) log.info({ stage: e.stage, old: e.old, new: e.new }, `witness key rotation: ${e.stage} logged`);
    const rotated = (await store.keyHistory()).some((r) => r.state === 'retired');
    // When this process signed (or first saw) the latest checkpoint: the status page shows its age.
    const clock = new CheckpointClock();
    // What the node lends its parts; each part takes the slice it declares.
    const ctx = {
      store,
      keys,
      log: witnessLog,
      rotated,
      pool,
      metrics,
      logger: log,
      clock,
      name: config.name,
      origin: logOrigin,
      dataDir: config.dataDir,
      dev: config.dev,
    };
    const parts: NodePart<unknown, unknown>[] = [];
    const use = <P extends NodePart<unknown, unknown>>(part: P): P => (parts.push(stack.use(part)), part);

    const counters = registryReloadCounters(metrics);
    let registry: RegistryPart | undefined;
    if (config.roles.includes('anchor'))
      registry = use(await startRegistryPart(ctx, { file: config.registryFile, kel: config.kel, counters }));
    const anchoring = use(
      startAnchoringPart(ctx, {
        registry: registry === undefined ? undefined : () => registry.current(),
        allowUnderivedSeeds: config.allowUnderivedSeeds,
        quota: config.quota,
      }),
    );
    const cp = await ctx.log.init();
    anchoring.checkpointSize(cp.size);
    clock.seen(cp.size, Date.now());
    let logWitness: LogWitnessPart | undefined;
    if (config.logWitnessesFile !== undefined)
      logWitness = use(
        await startLogWitnessPart(ctx, {
          file: config.logWitnessesFile,
          intervalMs: config.logWitnessIntervalMs,
          alertLagMs: config.logWitnessAlertLagMs,
        }),
      );
    let cosign: CosignPart | undefined;
    if (keys.cosign.length > 0) cosign = use(await startCosignPart(ctx, config));
    let kel: KelWitnessPart | undefined;
    // --kel-source ledger: reloads after commits (docs/protocol.md §3.6.8)
    if (config.roles.includes('kel')) kel = use(await startKelWitnessPart(ctx, { ...config, committed: registry?.ledgerCommitted }));

    // Up or down, from the requests and a probe every 5 s (a read of the stored checkpoint).
    const storeHealth = new StoreHealth(store instanceof SqliteStore ? 'sqlite' : 'postgres', log, { probe: () => store.log.checkpoint() });
    const app = await createServer({
      logger: log,
      metrics,
      openapi: {
        title: 'anchor-witness',
        version: VERSION,
        description: 'Witness node for append-only anchor chains (docs/protocol.md §3–§6)',
      },
      ...httpLimitOptions(config),
      rateLimit: config.rateLimit ?? null,
      storeHealth,
    });
    stack.defer(() => closeGracefully(app));
    storeHealth.start();
    stack.defer(() => {
      storeHealth.stop();
    });
    registerMetricsRoute(app);
    const readiness = { signers: () => external.all(), storeUp: () => storeHealth.snapshot().state === 'up', other: keySet.failures };
    registerReadinessRoutes(app, readiness);
    let bastion: BastionPart | undefined;
    anchoring.register?.(app); // the anchor routes first: /openapi.json keeps its order
    registerWitnessRoutes(app, {
      log: ctx.log,
      store: storeHealth,
      health: {
        name: config.name,
        roles: config.roles,
        version: VERSION,
        origin: logOrigin,
        witnessKeyHex,
        ...(keys.next === undefined ? {} : { witnessNextKeyHex: Buffer.from(keys.next.publicKey).toString('hex') }),
        logVkey: logSigner.vkey,
        cosign: cosign?.health,
        bastions: bastionPlan === null ? undefined : () => bastion?.health() ?? { bastions: [] },
        logWitnesses: logWitness?.health,
        kel: kel === undefined ? undefined : () => kel.health(),
        signers: () => external.all().map((s) => s.status()),
      },
      statusPage: createWitnessStatusPage({
        store,
        clock,
        cosign: cosign?.status,
        registry: registry?.status,
        logWitnesses: logWitness?.status,
        kelWitness: kel === undefined ? undefined : () => kel.status(),
        build,
        startedAtMs,
      }),
      build,
      logWitnessing: logWitness?.witnessing,
    });
    registerKeyRotationRoutes(app, store);
    for (const p of parts) if (p !== anchoring) p.register?.(app);
    let info: ListenInfo | null = null;
    if (config.noListen === true) await app.ready();
    else info = await listen(app, { host: config.host, port: config.port });
    if (bastionPlan !== null) bastion = use(startBastionPart(ctx, bastionPlan, app));

    const running = stack.move();
    let closed: Promise<void> | undefined;
    const witnessing = logWitness?.witnessing;
    return {
      app,
      url: info?.url ?? '',
      listen: info,
      bastions: bastion?.backends ?? null,
      store,
      storeHealth,
      witnessPublicKey: keys.witness.publicKey,
      logOrigin,
      logWitnessing: witnessing,
      kel,
      ...(config.testOnlyFaultHooks === true && witnessing !== undefined
        ? { testHooks: { forkLogCheckpoint: () => witnessing.forkForTest() } }
        : {}),
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
