/** `token-bridge serve`'s flags (SPEC §7, §9): one row each (src/config/option-table.ts). */
import { checkTable, choice, flag, int, list, negation, text, time, value, type OptionValues } from '../config/option-table.ts';
import { configOption, logLevelOption } from '../config/common-options.ts';
import { parseRateLimit } from '../server/rate-limit.ts';
import { HTTP_LIMIT_OPTIONS, httpLimits } from '../server/http-options.ts';
import { DEFAULT_AUDIENCE, DEFAULT_TTL_SECONDS, MAX_TTL_LIMIT_SECONDS } from './decide.ts';
import { SIGNING_ALGS } from './signing.ts';
import { BRIDGE_GATE_OPTIONS, bridgeGateConfig } from './gate-options.ts';
import type { BridgeConfig } from './node.ts';

export const BRIDGE_NODE_OPTIONS = checkTable({
  config: configOption(),
  listen: text('--listen <host:port>', 'address to listen on (port 0 = any free port); required', 'essentials'),
  keyDir: text(
    '--key-dir <dir>',
    'signing keys (PKCS#8 PEM, 0600) and keys.json; the first key is created on first start; required without --dev',
    'essentials',
  ),
  issuer: text(
    '--issuer <url>',
    'issuer URL: https://host[/path], no port, query, fragment or trailing slash; required without --dev',
    'essentials',
  ),
  tlsCert: text('--tls-cert <file>', 'TLS certificate chain (PEM)', 'essentials'),
  tlsKey: text('--tls-key <file>', 'TLS private key (PEM, mode 0600)', 'essentials'),
  dataDir: text(
    '--data-dir <dir>',
    'where the nonce store nonces.sqlite (mode 0600) lives (default: --key-dir); one serve process per data dir',
    'essentials',
  ),
  store: text(
    '--store <url>',
    'postgres://…: keep the nonce store in PostgreSQL instead, shared by bridge replicas of one issuer (the database is bound to --issuer at first use; signing keys stay in --key-dir)',
    'essentials',
  ),
  logLevel: logLevelOption(),
  dev: flag(
    '--dev',
    'development: http:// or a port allowed in a loopback issuer (default: the listening URL), throwaway keys without --key-dir, a demo chain',
    'essentials',
  ),
  rateLimit: value('--rate-limit <rps[:burst]>', 'per-client-IP limit on POST /token; 0 = off', 'http', parseRateLimit, {
    default: parseRateLimit('10:20'),
    defaultHelp: '10:20',
  }),
  audience: list('--audience <aud>', `allowed audience (repeatable, comma-separated; default ${DEFAULT_AUDIENCE})`, 'tokens'),
  trustedRoots: text(
    '--trusted-roots <file>',
    'trusted roots (party registry format plus "revoked"; JSON or YAML), reloaded on SIGHUP and rename-into-place',
    'tokens',
  ),
  defaultTtl: time(
    '--default-ttl <s>',
    'token lifetime when the request names none (seconds, or 5m, 1h)',
    'tokens',
    's',
    [1, MAX_TTL_LIMIT_SECONDS],
    {
      default: DEFAULT_TTL_SECONDS,
    },
  ),
  maxTtl: time(
    '--max-ttl <s>',
    'longest token lifetime a request may ask for (seconds, or 5m, 1h)',
    'tokens',
    's',
    [1, MAX_TTL_LIMIT_SECONDS],
    {
      default: MAX_TTL_LIMIT_SECONDS,
    },
  ),
  noProofOfPossession: negation(
    '--no-proof-of-possession',
    'accept requests without a proof by the leaf device key (requires --trusted-roots; tokens carry "pop": false)',
    'tokens',
  ),
  awsSessionTags: flag('--aws-session-tags', 'add the https://aws.amazon.com/tags claim (principal tags auths_leaf, auths_caps)', 'tokens'),
  alg: choice('--alg <alg>', 'signing algorithm of a generated key', 'tokens', SIGNING_ALGS, 'RS256'),
  nonceCapacity: int(
    '--nonce-capacity <n>',
    'proof-of-possession nonces remembered at once (full → 503 overloaded; default 100000)',
    'operations',
    [1],
  ),
  nonceStore: choice(
    '--nonce-store <kind>',
    'durable: used nonces survive restarts (SQLite in --data-dir, or --store). memory: forgotten at each restart, so every proof with iat up to 60 s after the start is refused (pop_stale) for 121 s after it — no tokens for about a minute after each restart',
    'operations',
    ['durable', 'memory'] as const,
    'durable',
  ),
});

/** Every option of `token-bridge serve`. */
export const BRIDGE_SERVE_OPTIONS = { ...BRIDGE_NODE_OPTIONS, ...BRIDGE_GATE_OPTIONS, ...HTTP_LIMIT_OPTIONS };
export type BridgeServeValues = OptionValues<typeof BRIDGE_SERVE_OPTIONS>;

/** The bridge's configuration from the typed values (`host`/`port` from the parsed --listen). */
export function bridgeConfig(v: BridgeServeValues, listen: { host: string; port: number }): BridgeConfig {
  return {
    ...listen,
    keyDir: v.keyDir,
    issuer: v.issuer,
    audiences: v.audience,
    trustedRootsFile: v.trustedRoots,
    tlsCertFile: v.tlsCert,
    tlsKeyFile: v.tlsKey,
    defaultTtl: v.defaultTtl,
    maxTtl: v.maxTtl,
    rateLimit: v.rateLimit,
    proofOfPossession: !v.noProofOfPossession,
    awsSessionTags: v.awsSessionTags,
    dev: v.dev,
    alg: v.alg,
    nonceCapacity: v.nonceCapacity,
    nonceStore: v.nonceStore,
    dataDir: v.dataDir,
    store: v.store,
    ...bridgeGateConfig(v),
    ...httpLimits(v),
  };
}
