/**
 * The token bridge over HTTP (SPEC §7), mounted on the shared hardened server (src/server):
 *
 *   POST /token                              the exchange (rate-limited per client IP)
 *   GET  /.well-known/openid-configuration   discovery
 *   GET  /.well-known/jwks.json              the published keys (active, next, retired)
 *   GET  /health, GET /metrics, GET /        liveness, Prometheus, status page (no limits)
 *
 * When the issuer has a path (`https://host/bridge`), the OIDC routes are served under that path
 * (where relying parties look for them) and at the root (for a proxy that strips the prefix).
 * Every refusal is problem+json with the SPEC §7 code; body limits, 415, malformed JSON, the
 * in-flight queue, timeouts and the per-IP rate limit come from the shared layer.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import { HttpProblem } from '../server/errors.ts';
import { createServer, metricsRegistry, registerMetricsRoute } from '../server/server.ts';
import type { App, ServerOptions } from '../server/server.ts';
import { VERSION } from '../version.ts';
import { BridgeError } from './errors.ts';
import type { IssuerInfo } from './issuer.ts';
import type { KeyEntry } from './keyring.ts';
import { DISCOVERY_PATH, discoveryDocument, JWKS_PATH, OIDC_CACHE_CONTROL, TOKEN_PATH } from './oidc.ts';
import type { TokenService } from './service.ts';
import type { PublicJwk, SigningAlg, SigningKey } from './signing.ts';

/** What the routes need from the signing keys (SigningKeyring implements it). */
export interface KeySource {
  readonly active: SigningKey;
  readonly entries: readonly KeyEntry[];
  jwks(): { keys: PublicJwk[] };
  algs(): SigningAlg[];
}

export interface BridgeDeps {
  service: TokenService;
  keys: KeySource;
  issuer: IssuerInfo;
}

export interface BridgeMetrics {
  issued: Counter<'alg'>;
  refused: Counter<'code'>;
  keyRefreshFailures: Counter;
  trustedRootsReloadFailures: Counter;
}

function reuse<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

/** Bridge metrics on `registry` (reused when already registered). */
export function bridgeMetrics(registry: Registry, deps: BridgeDeps): BridgeMetrics {
  const registers = [registry];
  reuse(registry, 'bridge_nonce_store_entries', () => new Gauge({
    name: 'bridge_nonce_store_entries',
    help: 'Proof-of-possession nonces remembered (single use, 120 s)',
    registers,
    collect() {
      this.set(deps.service.nonces.size);
    },
  }));
  reuse(registry, 'bridge_signing_keys', () => new Gauge({
    name: 'bridge_signing_keys',
    help: 'Signing keys by state (all of them are published in the JWKS)',
    labelNames: ['state'],
    registers,
    collect() {
      for (const state of ['active', 'next', 'retired']) this.set({ state }, deps.keys.entries.filter((e) => e.state === state).length);
    },
  }));
  return {
    issued: reuse(registry, 'bridge_tokens_issued_total', () => new Counter({ name: 'bridge_tokens_issued_total', help: 'Tokens issued, by signing algorithm', labelNames: ['alg'], registers })),
    refused: reuse(registry, 'bridge_token_refusals_total', () => new Counter({ name: 'bridge_token_refusals_total', help: '/token refusals by problem code', labelNames: ['code'], registers })),
    keyRefreshFailures: reuse(registry, 'bridge_key_refresh_failures_total', () => new Counter({ name: 'bridge_key_refresh_failures_total', help: 'Key directory refreshes that failed (the previous keys stay in use)', registers })),
    trustedRootsReloadFailures: reuse(
      registry,
      'bridge_trusted_roots_reload_failures_total',
      () => new Counter({ name: 'bridge_trusted_roots_reload_failures_total', help: 'Trusted-roots reloads that failed validation (the previous copy stays in use)', registers }),
    ),
  };
}

// ---- OpenAPI documentation of the bodies (validation is done by the strict decoder) -------------

const hexString = (bytes: number) => ({ type: 'string', pattern: `^[0-9a-fA-F]{${bytes * 2}}$` });
const nullableTime = { type: ['string', 'null'], description: 'RFC 3339; re-printed in UTC with 0/3/6/9 fraction digits in the signed bytes' };
const capability = { type: 'string', pattern: '^[a-z0-9_:-]{1,64}$' };

export const ATTESTATION_SCHEMA = {
  type: 'object',
  description: 'auths v1 attestation; signed bytes = JCS of the decoded fields (SPEC §7)',
  required: ['version', 'rid', 'issuer', 'subject', 'device_public_key'],
  additionalProperties: false,
  properties: {
    version: { type: 'integer', minimum: 0, maximum: 4294967295 },
    rid: { type: 'string' },
    issuer: { type: 'string', description: 'DID; chain[0].issuer is the token subject' },
    subject: { type: 'string' },
    device_public_key: hexString(32),
    identity_signature: { type: 'string', description: 'hex Ed25519 signature by the issuer key; required (absent or empty → 401 chain_signature_invalid)' },
    device_signature: { type: 'string', description: 'hex Ed25519 signature by device_public_key; required' },
    expires_at: nullableTime,
    revoked_at: nullableTime,
    timestamp: nullableTime,
    note: { type: ['string', 'null'] },
    payload: {},
    role: { enum: ['admin', 'member', 'readonly', null] },
    capabilities: { type: ['array', 'null'], items: capability },
    delegated_by: { type: ['string', 'null'] },
    signer_type: { enum: ['Human', 'Agent', 'Workload', null] },
  },
} as const;

export const TOKEN_REQUEST_SCHEMA = {
  type: 'object',
  required: ['attestation_chain', 'root_public_key'],
  additionalProperties: false,
  properties: {
    attestation_chain: { type: 'array', minItems: 1, maxItems: 8, items: ATTESTATION_SCHEMA, description: 'root → leaf' },
    root_public_key: hexString(32),
    audience: { type: 'string', description: 'required when proof of possession is on; must be an allowed audience' },
    ttl_secs: { type: 'integer', minimum: 1 },
    requested_capabilities: { type: 'array', minItems: 1, items: capability },
    proof: {
      type: 'object',
      required: ['iat', 'nonce', 'signature'],
      additionalProperties: false,
      description:
        'Ed25519 signature by the leaf device key over JCS {"v":"token-bridge/pop/v1","iss":<issuer>,"aud":<audience>,"iat","nonce","req":<hex SHA-256 of JCS(request without proof)>}',
      properties: { iat: { type: 'integer' }, nonce: { type: 'string', pattern: '^[A-Za-z0-9_-]{16,64}$' }, signature: hexString(64) },
    },
  },
} as const;

const TOKEN_RESPONSE_SCHEMA = {
  type: 'object',
  required: ['access_token', 'token_type', 'expires_in', 'subject'],
  properties: { access_token: { type: 'string' }, token_type: { const: 'Bearer' }, expires_in: { type: 'integer' }, subject: { type: 'string' } },
} as const;

/** The strict decoder (src/bridge/request.ts) validates bodies; the schema above only documents them. */
const documentationOnly = () => () => true;

// ---- routes ------------------------------------------------------------------------------------

export function healthBody(deps: BridgeDeps): Record<string, unknown> {
  return {
    status: 'ok',
    version: VERSION,
    issuer: deps.issuer.issuer,
    proof_of_possession: deps.service.policy.proofOfPossession,
    audiences: deps.service.policy.audiences,
    active_kid: deps.keys.active.kid,
    keys: deps.keys.entries.map((e) => ({ kid: e.kid, state: e.state })),
  };
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function statusPage(deps: BridgeDeps): string {
  const h = healthBody(deps);
  const iss = escapeHtml(deps.issuer.issuer);
  const rows = deps.keys.entries.map((e) => `<tr><td><code>${escapeHtml(e.kid)}</code></td><td>${e.state}</td></tr>`).join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>token-bridge</title></head><body>
<h1>token-bridge ${escapeHtml(VERSION)}</h1>
<p>OIDC issuer <code>${iss}</code> — exchanges attestation chains for JWTs (<code>POST ${iss}${TOKEN_PATH}</code>).</p>
<ul><li><a href="${iss}${DISCOVERY_PATH}">discovery</a></li><li><a href="${iss}${JWKS_PATH}">JWKS</a></li><li><a href="/health">health</a></li><li><a href="/metrics">metrics</a></li></ul>
<p>Proof of possession: ${h.proof_of_possession === true ? 'required' : 'off (tokens carry "pop": false)'}. Allowed audiences: ${deps.service.policy.audiences.map((a) => `<code>${escapeHtml(a)}</code>`).join(', ')}.</p>
<table><tr><th>kid</th><th>state</th></tr>${rows}</table>
</body></html>
`;
}

function toProblem(e: BridgeError): HttpProblem {
  return new HttpProblem(e.status, e.code, e.detail, e.code === 'overloaded' ? { 'retry-after': '1' } : {});
}

export interface RegisterOptions {
  /** Also register `GET /`, `GET /health` and `GET /metrics` (default true; false when mounted beside another service that owns them). */
  statusRoutes?: boolean;
}

/** Register the bridge routes on a server built by `createServer`. */
export function registerBridgeRoutes(app: App, deps: BridgeDeps, opts: RegisterOptions = {}): BridgeMetrics {
  const metrics = bridgeMetrics(metricsRegistry(app), deps);
  const prefixes = deps.issuer.pathPrefix === '' ? [''] : [deps.issuer.pathPrefix, ''];

  const token = async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      const issued = await deps.service.exchange(request.body);
      metrics.issued.inc({ alg: deps.keys.active.alg });
      request.log.info({ sub: issued.response.subject, jti: issued.grant.claims.jti, kid: issued.kid, aud: issued.grant.claims.aud, links: issued.grant.links, binding: issued.grant.binding }, 'token issued');
      return await reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(issued.response);
    } catch (e) {
      if (e instanceof BridgeError) {
        metrics.refused.inc({ code: e.code });
        request.log.info({ code: e.code, detail: e.detail }, 'token refused');
        throw toProblem(e);
      }
      throw e;
    }
  };
  const discovery = (_request: FastifyRequest, reply: FastifyReply) =>
    reply.header('cache-control', OIDC_CACHE_CONTROL).send(discoveryDocument(deps.issuer.issuer, deps.keys.algs(), deps.service.policy.awsSessionTags));
  const jwks = (_request: FastifyRequest, reply: FastifyReply) => reply.header('cache-control', OIDC_CACHE_CONTROL).send(deps.keys.jwks());

  for (const prefix of prefixes) {
    const hide = prefix !== prefixes[0];
    app.post(
      prefix + TOKEN_PATH,
      {
        config: { rateLimit: true },
        schema: { hide, summary: 'Exchange an attestation chain for a JWT', body: TOKEN_REQUEST_SCHEMA, response: { 200: TOKEN_RESPONSE_SCHEMA } },
        validatorCompiler: documentationOnly,
      },
      token,
    );
    app.get(prefix + DISCOVERY_PATH, { schema: { hide, summary: 'OIDC discovery document' } }, discovery);
    app.get(prefix + JWKS_PATH, { schema: { hide, summary: 'JSON Web Key Set (active, next and retired signing keys)' } }, jwks);
  }
  if (opts.statusRoutes === false) return metrics;
  app.get('/health', { config: { bypassLimits: true }, schema: { summary: 'Liveness and configuration summary' } }, () => healthBody(deps));
  app.get('/', { config: { bypassLimits: true }, schema: { hide: true } }, (request, reply) => {
    const accept = request.headers.accept ?? '';
    if (/application\/json/i.test(accept) && !/text\/html/i.test(accept)) return reply.send(healthBody(deps));
    return reply.header('content-type', 'text/html; charset=utf-8').send(statusPage(deps));
  });
  registerMetricsRoute(app);
  return metrics;
}

export const DEFAULT_BRIDGE_RATE_LIMIT = { rps: 10, burst: 20 } as const;

export interface BridgeServerOptions extends Omit<ServerOptions, 'rateLimit' | 'openapi'> {
  /** `/token` rate limit per client IP; default 10/s burst 20; null = off. */
  rateLimit?: { rps: number; burst: number } | null;
}

/** A hardened server with the bridge routes (and /openapi.json). Call `listen` on it next. */
export async function createBridgeServer(deps: BridgeDeps, opts: BridgeServerOptions = {}): Promise<{ app: App; metrics: BridgeMetrics }> {
  const rl = opts.rateLimit === undefined ? DEFAULT_BRIDGE_RATE_LIMIT : opts.rateLimit;
  const app = await createServer({
    ...opts,
    problemTypeBase: opts.problemTypeBase ?? 'urn:token-bridge:problem:',
    rateLimit: rl === null ? null : { ...rl, scope: 'opt-in' },
    openapi: { title: 'token-bridge', version: VERSION, description: 'OIDC provider that exchanges attestation chains for JWTs (SPEC §7)' },
  });
  const metrics = registerBridgeRoutes(app, deps);
  return { app, metrics };
}
