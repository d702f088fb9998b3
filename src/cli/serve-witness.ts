/** `anchor-witness serve`: flags (SPEC §9), environment (AW_…), an optional config file, then the node. */
import { pino } from 'pino';
import type { Command } from 'commander';
import { parseRateLimit } from '../server/rate-limit.ts';
import { readDocument } from '../config/config-file.ts';
import { ConfigError } from '../witness/errors.ts';
import { parseRoles, startWitness, type WitnessConfig } from '../witness/node.ts';
import { DEFAULT_QUOTA } from '../anchor/quota-window.ts';
import { collectList, durationArg, intArg } from './options.ts';
import { HTTP_LIMIT_KEYS, type HttpLimits } from '../server/limits.ts';
import { addHttpLimitOptions, closeOnSignals, parseListen } from './serve-common.ts';

interface ServeFlags extends HttpLimits {
  config?: string;
  listen?: string;
  dataDir?: string;
  key?: string;
  name?: string;
  roles?: string[];
  cosignKey?: string[];
  logsList?: string[];
  registry?: string;
  logs?: string;
  logOrigin?: string;
  rateLimit?: string;
  buildAttestation?: string;
  store?: string;
  allowUnderivedSeeds?: boolean;
  partyAnchorsPerMinute?: number;
  partyNewSeedsPerDay?: number;
  dev?: boolean;
  logLevel?: string;
  verifyThreads?: number;
  logWitnesses?: string;
  logWitnessInterval?: number;
  logWitnessAlertLag?: number;
}

/** Config-file values fill whatever neither a flag nor a variable set (keys: flag names, kebab or camel case). */
function applyConfigFile(cmd: Command, path: string): void {
  const doc = readDocument(path);
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new ConfigError('invalid_config', `${path}: must be an object of flag names`);
  const known = new Map(cmd.options.map((o) => [o.attributeName(), o]));
  for (const [rawKey, value] of Object.entries(doc as Record<string, unknown>)) {
    const key = rawKey.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
    const option = known.get(key);
    if (option === undefined || key === 'config')
      throw new ConfigError('invalid_config', `${path}: unknown setting ${JSON.stringify(rawKey)}`);
    const source = cmd.getOptionValueSource(key);
    if (source === 'cli' || source === 'env') continue;
    let v: unknown;
    const scalar = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
    if (key === 'roles' || key === 'trustProxy' || key === 'cosignKey' || key === 'logsList') {
      v = Array.isArray(value)
        ? value.map((x: unknown) => (typeof x === 'string' ? x : JSON.stringify(x)))
        : collectList(scalar ?? '', undefined);
    } else if (option.isBoolean()) {
      v = value === true || value === 'true' || value === 1;
    } else if (scalar === undefined) {
      throw new ConfigError('invalid_config', `${path}: ${rawKey} must be a string or a number`);
    } else {
      const parse = option.parseArg as ((text: string, previous: unknown) => unknown) | undefined;
      v = parse ? parse(scalar, undefined) : scalar;
    }
    cmd.setOptionValueWithSource(key, v, 'config');
  }
}

export function addServeCommand(program: Command): void {
  addHttpLimitOptions(program.command('serve'))
    .description('run the witness node')
    .option('--config <file>', 'optional JSON/YAML file of settings (flag names as keys); flags and variables win over it')
    .option('--listen <host:port>', 'address to listen on (port 0 = any free port)', '127.0.0.1:8420')
    .option('--data-dir <dir>', 'data directory (created with parents when missing)')
    .option('--key <file>', 'witness key (Ed25519 PKCS#8 PEM, mode 0600): signs anchor cosignatures and log checkpoints')
    .option('--name <name>', 'witness name (1–255 bytes of 0x21–0x7E, no "+", a "." before the first "/")')
    .option('--roles <roles>', 'comma-separated roles: anchor, cosign', collectList)
    .option(
      '--cosign-key <file>',
      'cosign key (Ed25519 or ML-DSA-44 PKCS#8 PEM, mode 0600; type from the OID), required with role cosign; repeatable: one cosignature line per key, in order',
      collectList,
    )
    .option('--registry <file>', 'party registry (JSON or YAML), reloaded on SIGHUP and rename-into-place')
    .option('--logs <file>', 'known logs of the cosign role (JSON or YAML), reloaded on SIGHUP and rename-into-place')
    .option('--logs-list <file>', 'witness-network logs/v0 list to import (adds new origins only; repeatable)', collectList)
    .option('--log-origin <origin>', "origin of the witness's own log (default <name>/anchors)")
    .option('--rate-limit <rps[:burst]>', 'per-client-IP rate limit; 0 = off', '0')
    .option(
      '--build-attestation <file>',
      'DSSE build attestation served at /build (needs the bundle dist/anchor-witness.mjs; refuses to start unless it names the running digest)',
    )
    .option('--store <spec>', 'sqlite:PATH (default <data-dir>/witness.db) or postgres://…')
    .option('--allow-underived-seeds', 'let whoever anchors a seed first own it, even when it does not derive from the party')
    .option(
      '--party-anchors-per-minute <n>',
      'default per-party quota of co-signed anchors per minute',
      intArg(0),
      DEFAULT_QUOTA.anchorsPerMinute,
    )
    .option('--party-new-seeds-per-day <n>', 'default per-party quota of new seeds per day', intArg(0), DEFAULT_QUOTA.newSeedsPerDay)
    .option(
      '--verify-threads <n>',
      'worker threads for signature verification, anchor cosigning and ML-DSA-44 signing (default: CPU cores − 1; 0 = on the event loop)',
      intArg(0, 64),
    )
    .option('--log-witnesses <file>', "peer witnesses that cosign this node's own log, and their quorum (JSON or YAML; SPEC §4.1)")
    .option(
      '--log-witness-interval <duration>',
      'how often the newest checkpoint goes to the log witnesses (1s..1h)',
      durationArg(1, 3600),
      1,
    )
    .option(
      '--log-witness-alert-lag <duration>',
      'a log witness further behind than this is a /health warning (status stays ok)',
      durationArg(1, 365 * 86_400),
      600,
    )
    .option('--log-level <level>', 'fatal, error, warn, info (default: one line per request), debug', 'info')
    .option('--dev', 'development relaxations: generated keys kept in the data dir when --key/--cosign-key are missing')
    .hook('preAction', (cmd) => {
      const file = cmd.getOptionValue('config') as string | undefined;
      if (file !== undefined) applyConfigFile(cmd, file);
    })
    .action(async (flags: ServeFlags) => {
      if (flags.dataDir === undefined) throw new ConfigError('missing_option', '--data-dir is required');
      if (flags.name === undefined) throw new ConfigError('missing_option', '--name is required');
      const { host, port } = parseListen(flags.listen ?? '127.0.0.1:8420');
      const config: WitnessConfig = {
        host,
        port,
        dataDir: flags.dataDir,
        name: flags.name,
        roles: parseRoles(flags.roles ?? ['anchor', 'cosign']),
        allowUnderivedSeeds: flags.allowUnderivedSeeds ?? false,
        dev: flags.dev ?? false,
        quota: {
          anchorsPerMinute: flags.partyAnchorsPerMinute ?? DEFAULT_QUOTA.anchorsPerMinute,
          newSeedsPerDay: flags.partyNewSeedsPerDay ?? DEFAULT_QUOTA.newSeedsPerDay,
        },
        rateLimit: parseRateLimit(flags.rateLimit ?? '0'),
      };
      const optional = [
        ...HTTP_LIMIT_KEYS,
        'key',
        'cosignKey',
        'logsList',
        'registry',
        'logs',
        'logOrigin',
        'buildAttestation',
        'store',
        'verifyThreads',
        'logWitnesses',
      ] as const;
      const rename: Partial<Record<(typeof optional)[number], keyof WitnessConfig>> = {
        key: 'keyFile',
        cosignKey: 'cosignKeyFiles',
        logsList: 'logsLists',
        registry: 'registryFile',
        logs: 'logsFile',
        logWitnesses: 'logWitnessesFile',
      };
      for (const k of optional) {
        const v = flags[k];
        if (v !== undefined) (config as unknown as Record<string, unknown>)[rename[k] ?? k] = v;
      }
      if (flags.logWitnesses !== undefined) {
        config.logWitnessIntervalMs = (flags.logWitnessInterval ?? 1) * 1000;
        config.logWitnessAlertLagMs = (flags.logWitnessAlertLag ?? 600) * 1000;
      }
      const log = pino({ base: { svc: 'anchor-witness' }, level: flags.logLevel ?? 'info' }, pino.destination(2));
      const node = await startWitness(config, log);
      process.stdout.write(`listening on ${node.url}\n`);
      log.info({ url: node.url, name: config.name, roles: config.roles, log_origin: node.logOrigin }, 'witness started');
      closeOnSignals(() => node.close(), log);
    });
}
