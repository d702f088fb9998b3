/** `anchor-witness serve`: flags (SPEC §9), environment (AW_…), an optional config file, then the node. */
import { pino } from 'pino';
import type { Command } from 'commander';
import { parseRateLimit } from '../server/rate-limit.ts';
import { readDocument } from '../config/config-file.ts';
import { readInputFile } from '../config/input-file.ts';
import { ConfigError } from '../witness/errors.ts';
import { parseRoles, startWitness, type WitnessConfig } from '../witness/node.ts';
import { DEFAULT_QUOTA } from '../anchor/quota-window.ts';
import { DEFAULT_KEL_LIMITS } from '../keri/index.ts';
import { DEFAULT_KEL_AGGREGATE } from '../registry/kel-evaluator.ts';
import { collectList, envName, intArg, missingFlagsMessage } from './options.ts';
import { durationArg } from '../config/duration.ts';
import {
  DEFAULT_LIST_INTERVAL_SECONDS,
  DEFAULT_LIST_LIMITS,
  MAX_LIST_INTERVAL_SECONDS,
  MIN_LIST_INTERVAL_SECONDS,
} from '../cosign/list-import.ts';
import { HTTP_LIMIT_KEYS, type HttpLimits } from '../server/limits.ts';
import { addHttpLimitOptions, closeOnSignals, parseListen } from './serve-common.ts';
import { progress } from './progress.ts';

interface ServeFlags extends HttpLimits {
  config?: string;
  listen?: string | false; // false: --no-listen
  bastion?: string[];
  bastionKey?: string;
  bastionCa?: string;
  dataDir?: string;
  key?: string;
  name?: string;
  roles?: string[];
  cosignKey?: string[];
  logsList?: string[];
  logsListInterval?: number;
  logsListMaxQpd?: number;
  logsListMaxNew?: number;
  logsListMaxOrigins?: number;
  registry?: string;
  logs?: string;
  logOrigin?: string;
  rateLimit?: string;
  signSubtree?: boolean;
  signSubtreeRate?: string;
  buildAttestation?: string;
  store?: string;
  allowUnderivedSeeds?: boolean;
  partyAnchorsPerMinute?: number;
  partyNewSeedsPerDay?: number;
  dev?: boolean;
  logLevel?: string;
  verifyThreads?: number;
  kelSource?: string;
  kelPollSeconds?: number;
  kelMaxEvents?: number;
  kelMaxBytes?: number;
  kelMaxIdentifiers?: number;
  kelMaxTotalBytes?: number;
  kelMaxHeap?: number;
  kelKey?: string;
  kelAllow?: string[];
  logWitnesses?: string;
  logWitnessInterval?: number;
  logWitnessAlertLag?: number;
}

/** The list settings: a config file gives them as a YAML/JSON list (or a comma-separated string). */
const LIST_KEYS = new Set(['roles', 'trustProxy', 'cosignKey', 'logsList', 'bastion', 'kelAllow']);

/**
 * A config-file list that a flag or a variable replaced (whole, not merged) and so dropped some of
 * its entries: logged as one warning at start.
 */
export interface ReplacedList {
  setting: string;
  /** `--cosign-key` or `AW_COSIGN_KEY`. */
  by: string;
  file: string;
  fileValue: string[];
  value: string[];
}

/**
 * Config-file values fill whatever neither a flag nor a variable set (keys: flag names, kebab or
 * camel case). Returns the file's lists that a flag or variable replaced.
 */
function applyConfigFile(cmd: Command, path: string): ReplacedList[] {
  const replaced: ReplacedList[] = [];
  const doc = readInputFile(
    '--config',
    path,
    () => readDocument(path),
    (m) => new ConfigError('invalid_config', m),
  );
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new ConfigError('invalid_config', `--config ${path}: must be an object of flag names`);
  const known = new Map(cmd.options.map((o) => [o.attributeName(), o]));
  for (const [rawKey, value] of Object.entries(doc as Record<string, unknown>)) {
    let key = rawKey.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
    if (key === 'noListen') {
      // --no-listen is commander's negation of --listen
      if (value !== true && value !== 'true' && value !== 1) continue;
      key = 'listen';
      if (cmd.getOptionValueSource(key) !== 'cli' && cmd.getOptionValueSource(key) !== 'env')
        cmd.setOptionValueWithSource(key, false, 'config');
      continue;
    }
    const option = known.get(key);
    if (option === undefined || key === 'config')
      throw new ConfigError('invalid_config', `--config ${path}: unknown setting ${JSON.stringify(rawKey)}`);
    const source = cmd.getOptionValueSource(key);
    const overridden = source === 'cli' || source === 'env';
    const scalar = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
    if (LIST_KEYS.has(key)) {
      const list = Array.isArray(value)
        ? value.map((x: unknown) => (typeof x === 'string' ? x : JSON.stringify(x)))
        : collectList(scalar ?? '', undefined);
      const current = (cmd.getOptionValue(key) as string[] | undefined) ?? [];
      if (!overridden) cmd.setOptionValueWithSource(key, list, 'config');
      else if (list.some((x) => !current.includes(x)))
        replaced.push({
          setting: option.long!,
          by: source === 'cli' ? option.long! : envName('AW_', option),
          file: path,
          fileValue: list,
          value: current,
        });
      continue;
    }
    if (overridden) continue;
    let v: unknown;
    if (option.isBoolean()) {
      v = value === true || value === 'true' || value === 1;
    } else if (scalar === undefined) {
      throw new ConfigError('invalid_config', `--config ${path}: ${rawKey} must be a string or a number`);
    } else {
      const parse = option.parseArg as ((text: string, previous: unknown) => unknown) | undefined;
      try {
        v = parse ? parse(scalar, undefined) : scalar;
      } catch (e) {
        throw new ConfigError('invalid_config', `--config ${path}: ${rawKey}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    cmd.setOptionValueWithSource(key, v, 'config');
  }
  return replaced;
}

/**
 * Every missing required flag in one message: --data-dir and --name; the keys unless --dev
 * (--cosign-key with the cosign role, the default). The node checks the rules between flags
 * (--bastion needs --bastion-key, …) after these.
 */
function checkRequired(flags: ServeFlags, cmd: Command): void {
  const dev = flags.dev === true;
  const missing = [
    flags.dataDir === undefined && 'dataDir',
    flags.name === undefined && 'name',
    !dev && flags.key === undefined && 'key',
    !dev && (flags.roles ?? ['cosign']).includes('cosign') && (flags.cosignKey ?? []).length === 0 && 'cosignKey',
  ].filter((x): x is string => x !== false);
  if (missing.length === 0) return;
  const keys = missing.some((m) => m.endsWith('ey'));
  throw new ConfigError(
    missing.includes('dataDir') || missing.includes('name') ? 'missing_option' : 'key_required',
    missingFlagsMessage(cmd, missing, 'AW_', flags.config === undefined ? '' : `, or give them in --config ${flags.config}`) +
      (keys ? '; create a key with: anchor-witness keygen --out FILE (or try --dev)' : ''),
  );
}

export function addServeCommand(program: Command): void {
  let replacedLists: ReplacedList[] = [];
  addHttpLimitOptions(program.command('serve'))
    .description('run the witness node')
    .option('--config <file>', 'optional JSON/YAML file of settings (flag names as keys); flags and variables win over it')
    .option('--listen <host:port>', 'address to listen on (port 0 = any free port)', '127.0.0.1:8420')
    .option('--data-dir <dir>', 'data directory (created with parents when missing)')
    .option('--key <file>', 'witness key (Ed25519 PKCS#8 PEM, mode 0600): signs anchor cosignatures and log checkpoints')
    .option('--name <name>', 'witness name (1–255 bytes of 0x21–0x7E, no "+", a "." before the first "/")')
    .option('--roles <roles>', 'comma-separated roles: anchor, cosign, kel', collectList)
    .option('--kel-key <file>', 'KERI witness key (Ed25519 PKCS#8 PEM, mode 0600; its own key), required with role kel (SPEC §3.6.1)')
    .option(
      '--kel-allow <who>',
      'who role kel witnesses: PREFIX, delegates-of:PREFIX or any (repeatable; required with role kel)',
      collectList,
    )
    .option(
      '--cosign-key <file>',
      'cosign key (Ed25519 or ML-DSA-44 PKCS#8 PEM, mode 0600; type from the OID), required with role cosign; repeatable: one cosignature line per key, in order',
      collectList,
    )
    .option('--registry <file>', 'party registry (JSON or YAML), reloaded on SIGHUP and rename-into-place')
    .option('--kel-source <dir:PATH|git:PATH>', "parties' keys from key event logs (docs/protocol.md §3.5); needs --registry")
    .option('--kel-poll-seconds <n>', 'how often the KEL source is re-read (0 = only on SIGHUP and, for dir:, renames)', intArg(0), 30)
    .option('--kel-max-events <n>', 'most events one KEL may have', intArg(1), DEFAULT_KEL_LIMITS.maxEvents)
    .option(
      '--kel-max-bytes <n>',
      'most bytes one KEL may have (the file, or the sum of its blobs)',
      intArg(1),
      DEFAULT_KEL_LIMITS.maxBytes,
    )
    .option(
      '--kel-max-identifiers <n>',
      'most identifiers one KEL source reload reads (the parties and their delegators first); the rest are refused as oversize',
      intArg(1),
      DEFAULT_KEL_AGGREGATE.maxIdentifiers,
    )
    .option('--kel-max-total-bytes <n>', 'most bytes one KEL source reload reads in all', intArg(1), DEFAULT_KEL_AGGREGATE.maxTotalBytes)
    .option(
      '--kel-max-heap <mib>',
      'heap limit of the KEL worker thread, in MiB (an identifier that exhausts it is refused as oversize; the worker restarts)',
      intArg(16, 65536),
      DEFAULT_KEL_AGGREGATE.maxHeapMb,
    )
    .option('--logs <file>', 'known logs of the cosign role (JSON or YAML), reloaded on SIGHUP and rename-into-place')
    .option(
      '--logs-list <src>',
      'logs/v0 list to import, a file or an https:// URL (adds new origins only, kept in the store; repeatable)',
      collectList,
    )
    .option(
      '--logs-list-interval <duration>',
      're-read every list this often (5m..7d; s, m, h or d)',
      durationArg(MIN_LIST_INTERVAL_SECONDS, MAX_LIST_INTERVAL_SECONDS),
      DEFAULT_LIST_INTERVAL_SECONDS,
    )
    .option('--logs-list-max-qpd <n>', 'imported qpd values are clamped to this', intArg(1, 2 ** 31 - 1), DEFAULT_LIST_LIMITS.maxQpd)
    .option('--logs-list-max-new <n>', 'new origins one list read may add (the rest wait)', intArg(1), DEFAULT_LIST_LIMITS.maxNew)
    .option('--logs-list-max-origins <n>', 'origins imported from lists in all', intArg(0), DEFAULT_LIST_LIMITS.maxOrigins)
    .option('--log-origin <origin>', "origin of the witness's own log (default <name>/anchors)")
    .option('--rate-limit <rps[:burst]>', 'per-client-IP rate limit; 0 = off', '0')
    .option('--no-sign-subtree', 'do not serve POST /sign-subtree (served by default when an ML-DSA-44 cosign key is configured)')
    .option('--sign-subtree-rate <rps[:burst]>', 'per-client-IP rate limit of POST /sign-subtree, besides --rate-limit; 0 = off', '2:10')
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
    .option(
      '--bastion <host:port>',
      'also serve the cosign routes through this C2SP https-bastion (repeatable, comma-separated)',
      collectList,
    )
    .option('--bastion-key <file>', 'bastion backend key (Ed25519 PKCS#8 PEM, mode 0600; its own key), required with --bastion')
    .option('--bastion-ca <file>', "PEM roots for the bastions' certificates (replace the default roots)")
    .option('--no-listen', 'serve only through --bastion (needs --roles cosign alone): no listener')
    .option(
      '--log-witnesses <file>',
      "peer witnesses that cosign this node's own log, and their quorum (JSON or YAML; docs/protocol.md §4.1)",
    )
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
      if (file !== undefined) replacedLists = applyConfigFile(cmd, file);
    })
    .action(async (flags: ServeFlags, cmd: Command) => {
      checkRequired(flags, cmd);
      const noListen = flags.listen === false;
      const { host, port } = flags.listen === false ? { host: '', port: 0 } : parseListen(flags.listen ?? '127.0.0.1:8420');
      const config: WitnessConfig = {
        host,
        port,
        dataDir: flags.dataDir!,
        name: flags.name!,
        roles: parseRoles(flags.roles ?? ['anchor', 'cosign']),
        allowUnderivedSeeds: flags.allowUnderivedSeeds ?? false,
        dev: flags.dev ?? false,
        quota: {
          anchorsPerMinute: flags.partyAnchorsPerMinute ?? DEFAULT_QUOTA.anchorsPerMinute,
          newSeedsPerDay: flags.partyNewSeedsPerDay ?? DEFAULT_QUOTA.newSeedsPerDay,
        },
        rateLimit: parseRateLimit(flags.rateLimit ?? '0'),
        signSubtree: flags.signSubtree ?? true,
        signSubtreeRate: parseRateLimit(flags.signSubtreeRate ?? '2:10'),
        logsListIntervalSeconds: flags.logsListInterval ?? DEFAULT_LIST_INTERVAL_SECONDS,
        logsListLimits: {
          maxQpd: flags.logsListMaxQpd ?? DEFAULT_LIST_LIMITS.maxQpd,
          maxNew: flags.logsListMaxNew ?? DEFAULT_LIST_LIMITS.maxNew,
          maxOrigins: flags.logsListMaxOrigins ?? DEFAULT_LIST_LIMITS.maxOrigins,
        },
        noListen,
      };
      if (flags.kelSource !== undefined) {
        config.kel = {
          source: flags.kelSource,
          pollSeconds: flags.kelPollSeconds ?? 30,
          limits: {
            maxEvents: flags.kelMaxEvents ?? DEFAULT_KEL_LIMITS.maxEvents,
            maxBytes: flags.kelMaxBytes ?? DEFAULT_KEL_LIMITS.maxBytes,
          },
          aggregate: {
            maxIdentifiers: flags.kelMaxIdentifiers ?? DEFAULT_KEL_AGGREGATE.maxIdentifiers,
            maxTotalBytes: flags.kelMaxTotalBytes ?? DEFAULT_KEL_AGGREGATE.maxTotalBytes,
            maxHeapMb: flags.kelMaxHeap ?? DEFAULT_KEL_AGGREGATE.maxHeapMb,
          },
        };
      }
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
        'bastion',
        'bastionKey',
        'bastionCa',
        'logWitnesses',
        'kelKey',
        'kelAllow',
      ] as const;
      const rename: Partial<Record<(typeof optional)[number], keyof WitnessConfig>> = {
        key: 'keyFile',
        cosignKey: 'cosignKeyFiles',
        logsList: 'logsLists',
        registry: 'registryFile',
        logs: 'logsFile',
        bastion: 'bastions',
        bastionKey: 'bastionKeyFile',
        bastionCa: 'bastionCaFile',
        logWitnesses: 'logWitnessesFile',
        kelKey: 'kelKeyFile',
      };
      for (const k of optional) {
        const v = flags[k];
        if (v !== undefined) (config as unknown as Record<string, unknown>)[rename[k] ?? k] = v;
      }
      if (flags.logWitnesses !== undefined) {
        config.logWitnessIntervalMs = (flags.logWitnessInterval ?? 1) * 1000;
        config.logWitnessAlertLagMs = (flags.logWitnessAlertLag ?? 600) * 1000;
      }
      // On a terminal, the first read of the log lists (start-up waits for it) shows a status line;
      // log lines are written around it.
      const lists = config.logsLists?.length ?? 0;
      const shown = lists > 0 ? progress('anchor-witness serve') : null;
      const log = pino(
        { base: { svc: 'anchor-witness' }, level: flags.logLevel ?? 'info' },
        shown?.active === true
          ? {
              write: (line: string) => {
                shown.line(line);
              },
            }
          : pino.destination(2),
      );
      for (const r of replacedLists)
        log.warn(
          { setting: r.setting, by: r.by, config_file: r.file, config_value: r.fileValue, value: r.value },
          `${r.by} replaces the ${r.setting.slice(2)} list of ${r.file} (lists are not merged): ${r.fileValue.filter((x) => !r.value.includes(x)).join(', ')} from the file not used`,
        );
      let node;
      try {
        node = await (shown?.during(`first read of ${lists} log list(s)`, () => startWitness(config, log)) ?? startWitness(config, log));
      } finally {
        shown?.done();
      }
      if (node.bastions !== null) process.stdout.write(`bastion key hash ${node.bastions.keyHash}\n`);
      if (node.listen !== null) process.stdout.write(`listening on ${node.url}\n`);
      for (const c of node.bastions?.connections ?? []) {
        void c.firstConnected.then(() => {
          process.stdout.write(`serving via bastion ${c.addr}\n`);
        });
      }
      log.info(
        { url: node.url, name: config.name, roles: config.roles, log_origin: node.logOrigin, store: node.storeHealth.kind },
        'witness started',
      );
      closeOnSignals(() => node.close(), log);
    });
}
