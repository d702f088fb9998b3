#!/usr/bin/env node
/**
 * `token-bridge` command line (SPEC §9): serve, keys rotate|list|prune, token, plus the federation
 * commands (federation-commands.ts). Every flag also reads TB_<FLAG> (src/cli/options.ts). `serve`
 * prints exactly one `listening on http(s)://HOST:PORT` line on stdout once it accepts connections
 * and logs JSON lines on stderr.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Option } from 'commander';
import type { Command } from 'commander';
import { pino } from 'pino';
import { ed25519PrivateKeyFromPem } from '../crypto/ed25519.ts';
import { decodeHex, encodeHex } from '../encoding/hex.ts';
import { parseStrictJson } from '../encoding/json.ts';
import { readKeyFile } from '../keys/keyfile.ts';
import { buildTokenRequest } from '../bridge/client.ts';
import { fetchCause } from '../client/http.ts';
import { DEFAULT_AUDIENCE } from '../bridge/decide.ts';
import { writeDemo } from '../bridge/demo.ts';
import { KeyDir } from '../bridge/key-dir.ts';
import { DEFAULT_PREPUBLISH_SECONDS, encodeKeysJson } from '../bridge/keyring.ts';
import { startBridge } from '../bridge/node.ts';
import { reloadOnSighup } from './sighup.ts';
import { BRIDGE_SERVE_OPTIONS, bridgeConfig } from '../bridge/options.ts';
import { TOKEN_PATH } from '../bridge/oidc.ts';
import { SIGNING_ALGS } from '../bridge/signing.ts';
import type { SigningAlg } from '../bridge/signing.ts';
import { collectList, envProgram, unitArg, missingFlagsMessage } from './options.ts';
import { BridgeConfigError } from '../bridge/errors.ts';
import { readInputFile } from '../config/input-file.ts';
import { closeOnSignals, parseListen } from './serve-common.ts';
import { addOptionTable, applyConfigFile, optionValues } from './option-command.ts';
import { addFederationCommands } from './federation-commands.ts';
import { addVersionOption } from './version-option.ts';
import { addChainStateCommand } from './token-bridge-gate.ts';
import { discoverIssuer } from '../federation/credentials.ts';

const algOption = (): Option => new Option('--alg <alg>', 'signing algorithm of a generated key').choices(SIGNING_ALGS).default('RS256');

/** Where command output goes (stdout by default; tests collect it). */
export interface CliIo {
  out: (text: string) => void;
}

const stdoutIo: CliIo = {
  out: (text) => {
    process.stdout.write(text);
  },
};

function addServe(program: Command, io: CliIo): void {
  addOptionTable(program.command('serve'), BRIDGE_SERVE_OPTIONS)
    .description('run the OIDC provider: POST /token exchanges an attestation chain for a JWT')
    .hook('preAction', (cmd) => {
      const file = optionValues(cmd, BRIDGE_SERVE_OPTIONS).config;
      if (file !== undefined) applyConfigFile(cmd, BRIDGE_SERVE_OPTIONS, file, 'TB_', (m) => new BridgeConfigError('invalid_option', m));
    })
    .action(async (_flags: unknown, cmd: Command) => {
      const v = optionValues(cmd, BRIDGE_SERVE_OPTIONS);
      // every missing required flag in one message
      const missing = [
        v.listen === undefined && 'listen',
        !v.dev && v.keyDir === undefined && 'keyDir',
        !v.dev && v.issuer === undefined && 'issuer',
      ].filter((x): x is string => x !== false);
      if (missing.length > 0)
        throw new BridgeConfigError(
          'invalid_option',
          missingFlagsMessage(cmd, missing, 'TB_', v.config === undefined ? '' : `, or give them in --config ${v.config}`),
        );
      const config = bridgeConfig(v, parseListen(v.listen!));
      const log = pino({ base: { svc: 'token-bridge' }, level: v.logLevel }, pino.destination(2));
      const node = await startBridge(config, log);
      io.out(`listening on ${node.url}\n`);
      if (config.dev === true) {
        const demo = writeDemo(mkdtempSync(join(tmpdir(), 'token-bridge-demo-')), node.url, config.audiences?.[0] ?? DEFAULT_AUDIENCE);
        log.warn({ ...demo }, 'dev mode: demo chain written; run the command to get a token');
      }
      reloadOnSighup([node], log);
      closeOnSignals(() => node.close(), log);
    });
}

function addKeys(program: Command, io: CliIo): void {
  const keys = program
    .command('keys')
    .description('manage the signing keys in --key-dir (a running serve picks changes up within 60 s, or at once on SIGHUP)');
  keys
    .command('rotate')
    .description(
      'add a signing key: on an empty key dir the first key, active at once; otherwise a "next" key, published now and signing after --prepublish seconds',
    )
    .requiredOption('--key-dir <dir>', 'key directory')
    .option(
      '--prepublish <s>',
      'how long the new key is published before it signs (seconds, or 5m, 1h, 7d)',
      unitArg('s', 0),
      DEFAULT_PREPUBLISH_SECONDS,
    )
    .addOption(algOption())
    .option(
      '--ref <pkcs11-uri>',
      'add the P-256 (ES256) key on a PKCS#11 token instead of generating a key file; its public key is read, token objects are never changed',
    )
    .action(async (flags: { keyDir: string; prepublish: number; alg: SigningAlg; ref?: string }) => {
      const dir = new KeyDir(flags.keyDir);
      const now = Math.floor(Date.now() / 1000);
      const entry =
        flags.ref === undefined
          ? await dir.rotate(now, flags.prepublish, flags.alg)
          : await dir.rotateRef(now, flags.prepublish, flags.ref);
      io.out(JSON.stringify(encodeKeysJson([entry]).keys[0]) + '\n');
    });
  keys
    .command('list')
    .description('print keys.json: {"keys":[{kid, state, not_before, retire_after}]}')
    .requiredOption('--key-dir <dir>', 'key directory')
    .action((flags: { keyDir: string }) => {
      io.out(JSON.stringify(encodeKeysJson(new KeyDir(flags.keyDir).readEntries()), null, 2) + '\n');
    });
  keys
    .command('prune')
    .description('drop retired keys whose retire_after has passed (and their key files)')
    .requiredOption('--key-dir <dir>', 'key directory')
    .action(async (flags: { keyDir: string }) => {
      const dropped = await new KeyDir(flags.keyDir).prune(Math.floor(Date.now() / 1000));
      io.out(JSON.stringify({ pruned: dropped.map((e) => e.kid) }) + '\n');
    });
}

interface TokenFlags {
  bridge: string;
  chain: string;
  rootKey: string;
  deviceKey?: string;
  audience: string;
  issuer?: string;
  ttl?: number;
  capability?: string[];
  printRequest?: boolean;
}

/** fetch, with a failure that names the URL and the cause (`fetch failed (ECONNREFUSED…)`, src/client/http.ts). */
async function fetchOrSay(url: string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (e) {
    throw new Error(`${url}: ${(e as Error).message}${fetchCause(e, url)}`, { cause: e });
  }
}

function addToken(program: Command, io: CliIo): void {
  program
    .command('token')
    .description(
      'exchange an attestation chain for a token (signs the proof of possession with the leaf device key) and print the response',
    )
    .requiredOption('--bridge <url>', 'where the bridge is reachable (POST <url>/token)')
    .requiredOption('--chain <file>', 'the attestation chain: a JSON array root → leaf (or an object with "attestation_chain")')
    .requiredOption('--root-key <hex>', 'the Ed25519 root public key (hex)')
    .option(
      '--device-key <file>',
      'the leaf device key (Ed25519 PKCS#8 PEM, mode 0600); omit only for a bridge without proof of possession',
    )
    .option('--audience <aud>', 'token audience', DEFAULT_AUDIENCE)
    .option('--issuer <url>', "the bridge's issuer URL (default: read from its discovery document)")
    .option('--ttl <s>', 'token lifetime (seconds, or 5m, 1h)', unitArg('s', 1))
    .option('--capability <cap>', 'request only these capabilities (repeatable, comma-separated)', collectList)
    .option('--print-request', 'print the request body instead of sending it (pipe it to curl --data-binary @-)')
    .action(async (flags: TokenFlags) => {
      const bridge = flags.bridge.replace(/\/+$/, '');
      const doc = readInputFile('--chain', flags.chain, () => parseStrictJson(readFileSync(flags.chain, 'utf8'), { maxDepth: 32 }));
      const chain = Array.isArray(doc) ? doc : (doc as { attestation_chain?: unknown }).attestation_chain;
      if (!Array.isArray(chain)) throw new Error(`--chain ${flags.chain}: expected a JSON array of attestations`);
      const rootPublicKey = encodeHex(decodeHex(flags.rootKey, 32));
      const issuer = flags.issuer ?? (await discoverIssuer(bridge, fetch));
      const body = buildTokenRequest({
        chain,
        rootPublicKey,
        audience: flags.audience,
        issuer,
        ...(flags.deviceKey === undefined
          ? {}
          : { deviceKey: readInputFile('--device-key', flags.deviceKey, () => ed25519PrivateKeyFromPem(readKeyFile(flags.deviceKey!))) }),
        ...(flags.ttl === undefined ? {} : { ttlSecs: flags.ttl }),
        ...(flags.capability === undefined ? {} : { requestedCapabilities: flags.capability }),
      });
      if (flags.printRequest === true) {
        io.out(JSON.stringify(body) + '\n');
        return;
      }
      const res = await fetchOrSay(bridge + TOKEN_PATH, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok) {
        process.stderr.write(`token-bridge: ${bridge}${TOKEN_PATH} answered ${res.status}: ${text}\n`);
        process.exitCode = 1;
        return;
      }
      io.out(text.endsWith('\n') ? text : text + '\n');
    });
}

export function tokenBridgeProgram(io: CliIo = stdoutIo): Command {
  const program = addVersionOption(envProgram('token-bridge', 'TB_')).description(
    'OIDC provider that exchanges attestation chains for JWTs, and the federation tooling',
  );
  addServe(program, io);
  addKeys(program, io);
  addToken(program, io);
  addFederationCommands(program, io);
  addChainStateCommand(program, io.out);
  return program;
}

if (import.meta.main) {
  tokenBridgeProgram()
    .parseAsync(process.argv)
    .catch((e: unknown) => {
      process.stderr.write(`token-bridge: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    });
}
