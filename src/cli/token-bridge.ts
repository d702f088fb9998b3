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
import { parseRateLimit } from '../server/rate-limit.ts';
import { buildTokenRequest } from '../bridge/client.ts';
import { fetchCause } from '../client/http.ts';
import { DEFAULT_AUDIENCE, DEFAULT_TTL_SECONDS, MAX_TTL_LIMIT_SECONDS } from '../bridge/decide.ts';
import { writeDemo } from '../bridge/demo.ts';
import { KeyDir } from '../bridge/key-dir.ts';
import { DEFAULT_PREPUBLISH_SECONDS, encodeKeysJson } from '../bridge/keyring.ts';
import { startBridge } from '../bridge/node.ts';
import type { BridgeConfig } from '../bridge/node.ts';
import { DISCOVERY_PATH, TOKEN_PATH } from '../bridge/oidc.ts';
import { SIGNING_ALGS } from '../bridge/signing.ts';
import type { SigningAlg } from '../bridge/signing.ts';
import { collectList, envProgram, intArg, missingFlagsMessage } from './options.ts';
import { BridgeConfigError } from '../bridge/errors.ts';
import { readInputFile } from '../config/input-file.ts';
import { HTTP_LIMIT_KEYS, type HttpLimits } from '../server/limits.ts';
import { addHttpLimitOptions, closeOnSignals, parseListen } from './serve-common.ts';
import { addFederationCommands } from './federation-commands.ts';
import { addVersionOption } from './version-option.ts';
import { addChainStateCommand, addKelGateOptions, applyKelGateFlags, type KelGateFlags } from './token-bridge-gate.ts';

interface ServeFlags extends HttpLimits, KelGateFlags {
  listen?: string;
  keyDir?: string;
  issuer?: string;
  audience?: string[];
  trustedRoots?: string;
  tlsCert?: string;
  tlsKey?: string;
  defaultTtl: number;
  maxTtl: number;
  rateLimit: string;
  proofOfPossession: boolean;
  awsSessionTags?: boolean;
  dev?: boolean;
  alg: SigningAlg;
  nonceCapacity?: number;
  dataDir?: string;
  store?: string;
  nonceStore: 'durable' | 'memory';
}

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
  addKelGateOptions(addHttpLimitOptions(program.command('serve')))
    .description('run the OIDC provider: POST /token exchanges an attestation chain for a JWT')
    .option('--listen <host:port>', 'address to listen on (port 0 = any free port); required')
    .option(
      '--key-dir <dir>',
      'signing keys (PKCS#8 PEM, 0600) and keys.json; the first key is created on first start; required without --dev',
    )
    .option('--issuer <url>', 'issuer URL: https://host[/path], no port, query, fragment or trailing slash; required without --dev')
    .option('--audience <aud>', `allowed audience (repeatable, comma-separated; default ${DEFAULT_AUDIENCE})`, collectList)
    .option(
      '--trusted-roots <file>',
      'trusted roots (party registry format plus "revoked"; JSON or YAML), reloaded on SIGHUP and rename-into-place',
    )
    .option('--tls-cert <file>', 'TLS certificate chain (PEM)')
    .option('--tls-key <file>', 'TLS private key (PEM, mode 0600)')
    .option('--default-ttl <s>', 'token lifetime when the request names none', intArg(1, MAX_TTL_LIMIT_SECONDS), DEFAULT_TTL_SECONDS)
    .option('--max-ttl <s>', 'longest token lifetime a request may ask for', intArg(1, MAX_TTL_LIMIT_SECONDS), MAX_TTL_LIMIT_SECONDS)
    .option('--rate-limit <rps[:burst]>', 'per-client-IP limit on POST /token; 0 = off', '10:20')
    .option(
      '--no-proof-of-possession',
      'accept requests without a proof by the leaf device key (requires --trusted-roots; tokens carry "pop": false)',
    )
    .option('--aws-session-tags', 'add the https://aws.amazon.com/tags claim (principal tags auths_leaf, auths_caps)')
    .option(
      '--dev',
      'development: http:// or a port allowed in a loopback issuer (default: the listening URL), throwaway keys without --key-dir, a demo chain',
    )
    .addOption(algOption())
    .option('--nonce-capacity <n>', 'proof-of-possession nonces remembered at once (full → 503 overloaded; default 100000)', intArg(1))
    .option(
      '--data-dir <dir>',
      'where the nonce store nonces.sqlite (mode 0600) lives (default: --key-dir); one serve process per data dir',
    )
    .option(
      '--store <url>',
      'postgres://…: keep the nonce store in PostgreSQL instead, shared by bridge replicas of one issuer (the database is bound to --issuer at first use; signing keys stay in --key-dir)',
    )
    .addOption(
      new Option(
        '--nonce-store <kind>',
        'durable: used nonces survive restarts (SQLite in --data-dir, or --store). memory: forgotten at each restart, so every proof with iat up to 60 s after the start is refused (pop_stale) for 121 s after it — no tokens for about a minute after each restart',
      )
        .choices(['durable', 'memory'])
        .default('durable'),
    )
    .action(async (flags: ServeFlags, cmd: Command) => {
      // every missing required flag in one message
      const dev = flags.dev === true;
      const missing = [
        flags.listen === undefined && 'listen',
        !dev && flags.keyDir === undefined && 'keyDir',
        !dev && flags.issuer === undefined && 'issuer',
      ].filter((x): x is string => x !== false);
      if (missing.length > 0) throw new BridgeConfigError('invalid_option', missingFlagsMessage(cmd, missing, 'TB_'));
      const { host, port } = parseListen(flags.listen!);
      const config: BridgeConfig = {
        host,
        port,
        defaultTtl: flags.defaultTtl,
        maxTtl: flags.maxTtl,
        rateLimit: parseRateLimit(flags.rateLimit),
        proofOfPossession: flags.proofOfPossession,
        awsSessionTags: flags.awsSessionTags ?? false,
        dev: flags.dev ?? false,
        alg: flags.alg,
        nonceStore: flags.nonceStore,
      };
      const optional = [...HTTP_LIMIT_KEYS, 'keyDir', 'issuer', 'nonceCapacity', 'dataDir', 'store'] as const;
      for (const k of optional) if (flags[k] !== undefined) (config as unknown as Record<string, unknown>)[k] = flags[k];
      if (flags.audience !== undefined) config.audiences = flags.audience;
      if (flags.trustedRoots !== undefined) config.trustedRootsFile = flags.trustedRoots;
      if (flags.tlsCert !== undefined) config.tlsCertFile = flags.tlsCert;
      if (flags.tlsKey !== undefined) config.tlsKeyFile = flags.tlsKey;
      applyKelGateFlags(flags, config);
      const log = pino({ base: { svc: 'token-bridge' } }, pino.destination(2));
      const node = await startBridge(config, log);
      io.out(`listening on ${node.url}\n`);
      if (config.dev === true) {
        const demo = writeDemo(mkdtempSync(join(tmpdir(), 'token-bridge-demo-')), node.url, config.audiences?.[0] ?? DEFAULT_AUDIENCE);
        log.warn({ ...demo }, 'dev mode: demo chain written; run the command to get a token');
      }
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
    .option('--prepublish <s>', 'seconds the new key is published before it signs', intArg(0), DEFAULT_PREPUBLISH_SECONDS)
    .addOption(algOption())
    .action(async (flags: { keyDir: string; prepublish: number; alg: SigningAlg }) => {
      const dir = new KeyDir(flags.keyDir);
      const entry = await dir.rotate(Math.floor(Date.now() / 1000), flags.prepublish, flags.alg);
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

async function fetchIssuer(bridge: string): Promise<string> {
  const res = await fetchOrSay(bridge + DISCOVERY_PATH);
  if (!res.ok) throw new Error(`${bridge}${DISCOVERY_PATH}: HTTP ${res.status}`);
  const doc = (await res.json()) as { issuer?: unknown };
  if (typeof doc.issuer !== 'string') throw new Error(`${bridge}${DISCOVERY_PATH}: no issuer`);
  return doc.issuer;
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
    .option('--ttl <s>', 'token lifetime in seconds', intArg(1))
    .option('--capability <cap>', 'request only these capabilities (repeatable, comma-separated)', collectList)
    .option('--print-request', 'print the request body instead of sending it (pipe it to curl --data-binary @-)')
    .action(async (flags: TokenFlags) => {
      const bridge = flags.bridge.replace(/\/+$/, '');
      const doc = readInputFile('--chain', flags.chain, () => parseStrictJson(readFileSync(flags.chain, 'utf8'), { maxDepth: 32 }));
      const chain = Array.isArray(doc) ? doc : (doc as { attestation_chain?: unknown }).attestation_chain;
      if (!Array.isArray(chain)) throw new Error(`--chain ${flags.chain}: expected a JSON array of attestations`);
      const rootPublicKey = encodeHex(decodeHex(flags.rootKey, 32));
      const issuer = flags.issuer ?? (await fetchIssuer(bridge));
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
