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
import type { App, ServerOptions } from '../server/options.ts';
import { VERSION } from '../version.ts';
import { BridgeError } from './errors.ts';
import type { IssuerInfo } from './issuer.ts';
import type { KeyEntry } from './keyring.ts';
import { DISCOVERY_PATH, discoveryDocument, JWKS_PATH, OIDC_CACHE_CONTROL, TOKEN_PATH } from './oidc.ts';
import type { TokenService } from './service.ts';
import type { PublicJwk, SigningAlg, SigningKey } from './signing.ts';
import { JWKS_MAX_AGE_SECONDS, publicationOrder, retentionSeconds } from './keyring.ts';
import { DEFAULT_AUDIENCE } from './decide.ts';
import { formatCount, formatDuration, formatUtc } from '../pages/format.ts';
import { html, joinHtml, safeHref, shellCommand, type SafeHtml } from '../pages/html.ts';
import { PAGE_HEADERS, renderPage } from '../pages/layout.ts';

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
  reuse(
    registry,
    'bridge_nonce_store_entries',
    () =>
      new Gauge({
        name: 'bridge_nonce_store_entries',
        help: 'Proof-of-possession nonces held by the nonce store (single use; each kept until its iat can no longer be accepted). With --store postgres: the shared table as this replica last counted it plus its own inserts since',
        registers,
        collect() {
          this.set(deps.service.nonces.size);
        },
      }),
  );
  reuse(
    registry,
    'bridge_signing_keys',
    () =>
      new Gauge({
        name: 'bridge_signing_keys',
        help: 'Signing keys by state (all of them are published in the JWKS)',
        labelNames: ['state'],
        registers,
        collect() {
          for (const state of ['active', 'next', 'retired']) this.set({ state }, deps.keys.entries.filter((e) => e.state === state).length);
        },
      }),
  );
  return {
    issued: reuse(
      registry,
      'bridge_tokens_issued_total',
      () =>
        new Counter({ name: 'bridge_tokens_issued_total', help: 'Tokens issued, by signing algorithm', labelNames: ['alg'], registers }),
    ),
    refused: reuse(
      registry,
      'bridge_token_refusals_total',
      () => new Counter({ name: 'bridge_token_refusals_total', help: '/token refusals by problem code', labelNames: ['code'], registers }),
    ),
    keyRefreshFailures: reuse(
      registry,
      'bridge_key_refresh_failures_total',
      () =>
        new Counter({
          name: 'bridge_key_refresh_failures_total',
          help: 'Key directory refreshes that failed (the previous keys stay in use)',
          registers,
        }),
    ),
    trustedRootsReloadFailures: reuse(
      registry,
      'bridge_trusted_roots_reload_failures_total',
      () =>
        new Counter({
          name: 'bridge_trusted_roots_reload_failures_total',
          help: 'Trusted-roots reloads that failed validation (the previous copy stays in use)',
          registers,
        }),
    ),
  };
}

// ---- OpenAPI documentation of the bodies (validation is done by the strict decoder) -------------

const hexString = (bytes: number) => ({ type: 'string', pattern: `^[0-9a-fA-F]{${bytes * 2}}$` });
const nullableTime = {
  type: ['string', 'null'],
  description: 'RFC 3339; re-printed in UTC with 0/3/6/9 fraction digits in the signed bytes',
};
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
    identity_signature: {
      type: 'string',
      description: 'hex Ed25519 signature by the issuer key; required (absent or empty → 401 chain_signature_invalid)',
    },
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
  properties: {
    access_token: { type: 'string' },
    token_type: { const: 'Bearer' },
    expires_in: { type: 'integer' },
    subject: { type: 'string' },
  },
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

/** Sum of a counter's values (all label sets). */
async function counterTotal(c: Counter): Promise<number> {
  return (await c.get()).values.reduce((n, v) => n + v.value, 0);
}

/**
 * The status page (`GET /`): issuer and OIDC links, the signing keys with their ages, the token
 * policy, and the next command to run (`token-bridge aws-setup`). No script, no external asset,
 * everything escaped; served with PAGE_CSP (src/pages/layout.ts).
 */
export async function renderBridgeStatusPage(deps: BridgeDeps, metrics: BridgeMetrics, nowMs: number): Promise<string> {
  const now = Math.floor(nowMs / 1000);
  const iss = deps.issuer.issuer;
  const policy = deps.service.policy;
  const algOf = new Map(deps.keys.jwks().keys.map((k) => [k.kid, k.alg]));
  const retention = retentionSeconds(policy.maxTtl);
  const [issued, refused] = await Promise.all([counterTotal(metrics.issued), counterTotal(metrics.refused)]);
  const active = deps.keys.entries.find((e) => e.state === 'active');
  const keyRows = publicationOrder(deps.keys.entries).map((e) => {
    let when: SafeHtml;
    if (e.state === 'active')
      when = html`signing since ${formatUtc(e.notBefore)} <span class="muted">(${formatDuration(now - e.notBefore)} ago)</span>`;
    else if (e.state === 'next')
      when = html`published; signs from ${formatUtc(e.notBefore)} <span class="muted">(${formatDuration(e.notBefore - now)})</span>`;
    else {
      const retireAfter = e.retireAfter ?? now;
      when = html`retired ≈ ${formatDuration(now - (retireAfter - retention))} ago; unpublished after ${formatUtc(retireAfter)}
        <span class="muted">(${formatDuration(retireAfter - now)})</span>`;
    }
    const pill = e.state === 'active' ? 'ok' : 'warning';
    return html`<tr>
      <td><code>${e.kid}</code></td>
      <td>${algOf.get(e.kid) ?? '?'}</td>
      <td><span class="pill ${pill}">${e.state}</span></td>
      <td>${when}</td>
    </tr>`;
  });
  const audience = policy.audiences.includes(DEFAULT_AUDIENCE) ? DEFAULT_AUDIENCE : policy.audiences[0]!;
  const setup = shellCommand([
    'token-bridge',
    'aws-setup',
    '--issuer',
    iss,
    '--subject',
    '$ROOT_DID',
    '--audience',
    audience,
    '--connect',
    '--format',
    'cli',
  ]);
  const https = iss.startsWith('https://');
  const body = html`<section class="cards">
      <div class="card" id="active-key">
        <div class="label">active key</div>
        <div class="value">${active === undefined ? '—' : (algOf.get(active.kid) ?? '?')}</div>
        <div class="note">
          ${active === undefined ? 'none' : html`<code>${active.kid.slice(0, 12)}…</code> · ${formatDuration(now - active.notBefore)} old`}
        </div>
      </div>
      <div class="card" id="tokens-issued">
        <div class="label">tokens issued</div>
        <div class="value">${formatCount(issued)}</div>
        <div class="note">since this process started</div>
      </div>
      <div class="card" id="tokens-refused">
        <div class="label">refusals</div>
        <div class="value">${formatCount(refused)}</div>
        <div class="note">since this process started (<a href="/metrics">by code</a>)</div>
      </div>
      <div class="card" id="pop">
        <div class="label">proof of possession</div>
        <div class="value">${policy.proofOfPossession ? 'required' : 'off'}</div>
        <div class="note">${policy.proofOfPossession ? 'the leaf device key signs each request' : 'tokens carry "pop": false'}</div>
      </div>
    </section>
    <h2>OpenID Connect</h2>
    <table class="kv" id="oidc">
      <tbody>
        <tr>
          <th scope="row">issuer</th>
          <td><code>${iss}</code></td>
        </tr>
        <tr>
          <th scope="row">discovery</th>
          <td>
            <a href="${safeHref(iss + DISCOVERY_PATH)}">${iss}${DISCOVERY_PATH}</a>
            <span class="muted">(<a href="${DISCOVERY_PATH}">on this server</a>)</span>
          </td>
        </tr>
        <tr>
          <th scope="row">JWKS</th>
          <td>
            <a href="${safeHref(iss + JWKS_PATH)}">${iss}${JWKS_PATH}</a>
            <span class="muted">(<a href="${JWKS_PATH}">on this server</a>)</span>
          </td>
        </tr>
        <tr>
          <th scope="row">token endpoint</th>
          <td><code>POST ${iss}${TOKEN_PATH}</code></td>
        </tr>
      </tbody>
    </table>
    <h2>Signing keys</h2>
    <table id="keys">
      <thead>
        <tr>
          <th>kid</th>
          <th>alg</th>
          <th>state</th>
          <th>age</th>
        </tr>
      </thead>
      <tbody>
        ${keyRows}
      </tbody>
    </table>
    <p class="muted">
      Every key listed is published in the JWKS. A retired key stays published max TTL + ${JWKS_MAX_AGE_SECONDS} s after it stopped signing.
    </p>
    <h2>Token policy</h2>
    <table class="kv" id="policy">
      <tbody>
        <tr>
          <th scope="row">allowed audiences</th>
          <td>
            ${joinHtml(
              policy.audiences.map((a) => html`<code>${a}</code>`),
              html`<br />`,
            )}
          </td>
        </tr>
        <tr>
          <th scope="row">default TTL</th>
          <td>${formatDuration(policy.defaultTtl)} <span class="muted">(${policy.defaultTtl} s)</span></td>
        </tr>
        <tr>
          <th scope="row">maximum TTL</th>
          <td>${formatDuration(policy.maxTtl)} <span class="muted">(${policy.maxTtl} s)</span></td>
        </tr>
        <tr>
          <th scope="row">proof of possession</th>
          <td>${policy.proofOfPossession ? 'required' : html`<strong>off</strong> — a copied chain of a trusted root mints tokens`}</td>
        </tr>
        <tr>
          <th scope="row">AWS session tags</th>
          <td>${policy.awsSessionTags ? 'on (auths_leaf, auths_caps)' : 'off'}</td>
        </tr>
      </tbody>
    </table>
    <h2>Next: let AWS trust this bridge</h2>
    <p>
      Print the IAM OIDC provider and a role whose trust policy pins this issuer, the audience and exactly one root identity (set
      <code>ROOT_DID</code> to the root's <code>did:keri:</code> or <code>did:key:</code>):
    </p>
    <pre id="cmd-aws-setup">${setup}</pre>
    ${https ? '' : html`<p class="finding"><strong>This issuer is not https://</strong> (development mode): AWS accepts only an https issuer, so <code>aws-setup</code> refuses it. Run the bridge with <code>--issuer https://…</code> behind TLS first.</p>`}
    <p>Then check a policy and a token against the trust rules:</p>
    <pre id="cmd-check">
${[shellCommand(['token-bridge', 'lint-policy', 'trust-policy.json', '--issuer', iss]), shellCommand(['token-bridge', 'check-token', '$JWT', '--issuer', iss, '--audience', audience])].join('\n')}</pre>`;
  return renderPage({
    title: `token-bridge — ${iss}`,
    heading: html`token-bridge <code>${iss}</code>`,
    subtitle: html`OIDC provider for attestation chains · version ${VERSION} · <a href="/health">/health</a> ·
      <a href="/metrics">/metrics</a> · <a href="/openapi.json">/openapi.json</a>`,
    body,
    footer: html`Rendered ${formatUtc(now)}. Relying parties verify tokens with the JWKS; this page is informational.`,
  });
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
      request.log.info(
        {
          sub: issued.response.subject,
          jti: issued.grant.claims.jti,
          kid: issued.kid,
          aud: issued.grant.claims.aud,
          links: issued.grant.links,
          binding: issued.grant.binding,
        },
        'token issued',
      );
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
    reply
      .header('cache-control', OIDC_CACHE_CONTROL)
      .send(discoveryDocument(deps.issuer.issuer, deps.keys.algs(), deps.service.policy.awsSessionTags));
  const jwks = (_request: FastifyRequest, reply: FastifyReply) => reply.header('cache-control', OIDC_CACHE_CONTROL).send(deps.keys.jwks());

  for (const prefix of prefixes) {
    const hide = prefix !== prefixes[0];
    app.post(
      prefix + TOKEN_PATH,
      {
        config: { rateLimit: true },
        schema: {
          hide,
          summary: 'Exchange an attestation chain for a JWT',
          body: TOKEN_REQUEST_SCHEMA,
          response: { 200: TOKEN_RESPONSE_SCHEMA },
        },
        validatorCompiler: documentationOnly,
      },
      token,
    );
    app.get(prefix + DISCOVERY_PATH, { schema: { hide, summary: 'OIDC discovery document' } }, discovery);
    app.get(prefix + JWKS_PATH, { schema: { hide, summary: 'JSON Web Key Set (active, next and retired signing keys)' } }, jwks);
  }
  if (opts.statusRoutes === false) return metrics;
  app.get('/health', { config: { bypassLimits: true }, schema: { summary: 'Liveness and configuration summary' } }, () => healthBody(deps));
  app.get('/', { config: { bypassLimits: true }, schema: { hide: true } }, async (request, reply) => {
    const accept = request.headers.accept ?? '';
    if (/application\/json/i.test(accept) && !/text\/html/i.test(accept)) return reply.send(healthBody(deps));
    const page = await renderBridgeStatusPage(deps, metrics, Date.now());
    return reply.header('content-type', 'text/html; charset=utf-8').headers(PAGE_HEADERS).send(page);
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
