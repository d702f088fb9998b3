/**
 * `anchor-witness serve`: flags (SPEC §9), environment (AW_…), an optional config file, then the
 * node. The options are the parts' tables (src/config/option-table.ts); this file only composes
 * them and builds the node's configuration from their typed values.
 */
import { pino } from 'pino';
import type { Command } from 'commander';
import { ConfigError } from '../witness/errors.ts';
import { parseRoles, startWitness, type WitnessConfig } from '../witness/node.ts';
import { reloadOnSighup } from './sighup.ts';
import { checkTable, flag, int, list, text, value, type OptionValues } from '../config/option-table.ts';
import { configOption, logLevelOption } from '../config/common-options.ts';
import { parseRateLimit } from '../server/rate-limit.ts';
import { HTTP_LIMIT_OPTIONS, httpLimits } from '../server/http-options.ts';
import { ANCHORING_OPTIONS, anchoringConfig } from '../anchoring/options.ts';
import { KEL_SOURCE_OPTIONS, kelSourceConfig } from '../registry/options.ts';
import { COSIGN_OPTIONS, cosignConfig } from '../cosign/options.ts';
import { BASTION_OPTIONS, bastionConfig } from '../bastion/options.ts';
import { LOG_WITNESS_OPTIONS, logWitnessConfig } from '../log-witness/options.ts';
import { KEL_WITNESS_OPTIONS, kelWitnessConfig } from '../kel-witness/options.ts';
import { ROTATION_OPTIONS, rotationConfig, SIGNER_OPTIONS, signerConfig } from '../keys/options.ts';
import { missingFlagsMessage } from './options.ts';
import { addOptionTable, applyConfigFile, optionValues, type ReplacedList } from './option-command.ts';
import { closeOnSignals, parseListen } from './serve-common.ts';
import { progress } from './progress.ts';

/** The node's own flags: where it listens and keeps its state, who it is, its roles. */
export const WITNESS_NODE_OPTIONS = checkTable({
  config: configOption(),
  listen: text('--listen <host:port>', 'address to listen on (port 0 = any free port)', 'essentials', { default: '127.0.0.1:8420' }),
  dataDir: text('--data-dir <dir>', 'data directory (created with parents when missing)', 'essentials'),
  key: text(
    '--key <file>',
    'witness key: an Ed25519 PKCS#8 PEM file (mode 0600), or ssh-agent:SHA256:… / pkcs11:… (docs/keys.md); signs anchor cosignatures and log checkpoints',
    'essentials',
  ),
  name: text('--name <name>', 'witness name (1–255 bytes of 0x21–0x7E, no "+", a "." before the first "/")', 'essentials'),
  roles: list('--roles <roles>', 'comma-separated roles: anchor, cosign, kel', 'essentials', {
    default: ['anchor', 'cosign'],
    defaultHelp: 'anchor,cosign',
  }),
  store: text('--store <spec>', 'sqlite:PATH (default <data-dir>/witness.db) or postgres://…', 'essentials'),
  logOrigin: text('--log-origin <origin>', "origin of the witness's own log (default <name>/anchors)", 'essentials'),
  logLevel: logLevelOption(),
  dev: flag('--dev', 'development relaxations: generated keys kept in the data dir when --key/--cosign-key are missing', 'essentials'),
  rateLimit: value('--rate-limit <rps[:burst]>', 'per-client-IP rate limit; 0 = off', 'http', parseRateLimit, {
    default: null,
    defaultHelp: '0',
  }),
  verifyThreads: int(
    '--verify-threads <n>',
    'worker threads for signature verification, anchor cosigning and ML-DSA-44 signing (default: CPU cores − 1; 0 = on the event loop)',
    'operations',
    [0, 64],
  ),
  buildAttestation: text(
    '--build-attestation <file>',
    'DSSE build attestation served at /build (needs the bundle dist/anchor-witness.mjs; refuses to start unless it names the running digest)',
    'operations',
  ),
});

/** Every option of `anchor-witness serve`: one row each (adding an option is adding a row to a part's table). */
export const WITNESS_SERVE_OPTIONS = {
  ...WITNESS_NODE_OPTIONS,
  ...ROTATION_OPTIONS,
  ...HTTP_LIMIT_OPTIONS,
  ...ANCHORING_OPTIONS,
  ...KEL_SOURCE_OPTIONS,
  ...KEL_WITNESS_OPTIONS,
  ...SIGNER_OPTIONS,
  ...COSIGN_OPTIONS,
  ...BASTION_OPTIONS,
  ...LOG_WITNESS_OPTIONS,
};
export type WitnessServeValues = OptionValues<typeof WITNESS_SERVE_OPTIONS>;

/**
 * Every missing required flag in one message: --data-dir and --name; the keys unless --dev
 * (--cosign-key with the cosign role, the default). The node checks the rules between flags
 * (--bastion needs --bastion-key, …) after these.
 */
function checkRequired(v: WitnessServeValues, cmd: Command): void {
  const missing = [
    v.dataDir === undefined && 'dataDir',
    v.name === undefined && 'name',
    !v.dev && v.key === undefined && 'key',
    !v.dev && v.roles.includes('cosign') && (v.cosignKey ?? []).length === 0 && 'cosignKey',
  ].filter((x): x is string => x !== false);
  if (missing.length === 0) return;
  const keys = missing.some((m) => m.endsWith('ey'));
  throw new ConfigError(
    missing.includes('dataDir') || missing.includes('name') ? 'missing_option' : 'key_required',
    missingFlagsMessage(cmd, missing, 'AW_', v.config === undefined ? '' : `, or give them in --config ${v.config}`) +
      (keys ? '; create a key with: anchor-witness keygen --out FILE (or try --dev)' : ''),
  );
}

/** The node's configuration from the typed values (the required ones checked). */
export function witnessConfig(v: WitnessServeValues): WitnessConfig {
  const bastion = bastionConfig(v);
  const { host, port } = bastion.noListen ? { host: '', port: 0 } : parseListen(v.listen);
  return {
    host,
    port,
    dataDir: v.dataDir!,
    name: v.name!,
    keyFile: v.key,
    roles: parseRoles(v.roles),
    logOrigin: v.logOrigin,
    store: v.store,
    dev: v.dev,
    rateLimit: v.rateLimit,
    verifyThreads: v.verifyThreads,
    buildAttestation: v.buildAttestation,
    ...httpLimits(v),
    ...anchoringConfig(v),
    kel: kelSourceConfig(v),
    ...cosignConfig(v),
    ...bastion,
    ...logWitnessConfig(v),
    ...kelWitnessConfig(v),
    ...signerConfig(v),
    ...rotationConfig(v),
  };
}

export function addServeCommand(program: Command): void {
  let replacedLists: ReplacedList[] = [];
  addOptionTable(program.command('serve'), WITNESS_SERVE_OPTIONS)
    .description('run the witness node')
    .hook('preAction', (cmd) => {
      const file = optionValues(cmd, WITNESS_SERVE_OPTIONS).config;
      if (file !== undefined)
        replacedLists = applyConfigFile(cmd, WITNESS_SERVE_OPTIONS, file, 'AW_', (m) => new ConfigError('invalid_config', m));
    })
    .action(async (_flags: unknown, cmd: Command) => {
      const v = optionValues(cmd, WITNESS_SERVE_OPTIONS);
      checkRequired(v, cmd);
      const config = witnessConfig(v);
      // On a terminal, the first read of the log lists (start-up waits for it) shows a status line;
      // log lines are written around it.
      const lists = config.logsLists?.length ?? 0;
      const shown = lists > 0 ? progress('anchor-witness serve') : null;
      const log = pino(
        { base: { svc: 'anchor-witness' }, level: v.logLevel },
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
      reloadOnSighup([node], log);
      closeOnSignals(() => node.close(), log);
    });
}
