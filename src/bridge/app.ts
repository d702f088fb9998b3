/**
 * The token bridge over HTTP (SPEC §7), mounted on the shared hardened server (src/server):
 *
 *   POST /token                              the exchange (rate-limited per client IP)
 *   GET  /.well-known/openid-configuration   discovery
 *   GET  /.well-known/jwks.json              the published keys (active, next, retired)
 *   GET  /health, GET /metrics, GET /        liveness, Prometheus, status page (no limits)
 *   GET  /live, GET /ready                   SPEC §1.1 liveness and readiness (no limits)
 *
 * When the issuer has a path (`https://host/bridge`), the OIDC routes are served under that path
 * (where relying parties look for them) and at the root (for a proxy that strips the prefix).
 * Every refusal is problem+json with the SPEC §7 code; body limits, 415, malformed JSON, the
 * in-flight queue, timeouts and the per-IP rate limit come from the shared layer.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpProblem } from '../server/errors.ts';
import { createServer, metricsRegistry, registerMetricsRoute } from '../server/server.ts';
import type { App, ServerOptions } from '../server/options.ts';
import { VERSION } from '../version.ts';
import type { BridgeDeps } from './deps.ts';
import { BridgeError } from './errors.ts';
import { bridgeMetrics, type BridgeMetrics } from './metrics.ts';
import { DISCOVERY_PATH, discoveryDocument, JWKS_PATH, OIDC_CACHE_CONTROL, TOKEN_PATH } from './oidc.ts';
import { documentationOnly, TOKEN_REQUEST_SCHEMA, TOKEN_RESPONSE_SCHEMA } from './schemas.ts';
import { healthBody, renderBridgeStatusPage } from './status-page.ts';
import { PAGE_HEADERS } from '../pages/layout.ts';
import { IpBuckets } from './gate-part.ts';
import { SignerError } from '../keys/errors.ts';
import { registerReadinessRoutes } from '../server/readiness.ts';

function toProblem(e: BridgeError): HttpProblem {
  const headers: Record<string, string> =
    e.code === 'overloaded' ? { 'retry-after': '1' } : e.code === 'registry_behind' ? { 'retry-after': '30' } : {};
  return new HttpProblem(e.status, e.code, e.detail, headers);
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
          ...(issued.grant.claims.keri_state === undefined ? {} : { keri_state: issued.grant.claims.keri_state }),
          ...(issued.grant.claims.auths_anchor === undefined
            ? {}
            : {
                anchor_seed: issued.grant.claims.auths_anchor.seed,
                anchor_index: issued.grant.claims.auths_anchor.idx,
                anchor_age_s: issued.anchorAgeSeconds,
              }),
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
      if (e instanceof SignerError) {
        // SPEC §1.1: the token key cannot sign now; the error handler answers 503 (Retry-After: 5), the nonce stays unconsumed.
        const code = e.code === 'overloaded' ? 'overloaded' : 'signer_unavailable';
        metrics.refused.inc({ code });
        request.log.warn({ code, detail: e.message }, 'token refused');
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
  if (deps.anchorFloorRate !== undefined) {
    const buckets = new IpBuckets(deps.anchorFloorRate);
    app.post(
      '/anchor-floor',
      {
        config: { rateLimit: true },
        schema: { summary: 'Raise a seed’s anchor floor with a newer finalized anchor (docs/protocol.md §7.2)' },
      },
      async (request, reply) => {
        try {
          if (!buckets.take(request.ip, Date.now()))
            throw new BridgeError('rate_limited', 'over the /anchor-floor per-IP rate (--anchor-floor-rate)');
          return await reply.header('cache-control', 'no-store').send(await deps.service.anchorFloor(request.body));
        } catch (e) {
          if (e instanceof BridgeError) {
            request.log.info({ code: e.code, detail: e.detail }, 'anchor floor refused');
            throw toProblem(e);
          }
          throw e;
        }
      },
    );
  }
  if (opts.statusRoutes === false) return metrics;
  registerReadinessRoutes(app, {
    signers: () => deps.keys.signers?.() ?? [],
    ...(deps.store === undefined ? {} : { storeUp: () => deps.store!.snapshot().state === 'up' }),
    other: () => clockSkewFailure(deps.service.nonces.clockSkewMs),
  });
  app.get('/health', { config: { bypassLimits: true }, schema: { summary: 'Liveness and configuration summary' } }, () => healthBody(deps));
  app.get('/', { config: { bypassLimits: true }, schema: { hide: true } }, async (request, reply) => {
    const accept = request.headers.accept ?? '';
    if (/application\/json/i.test(accept) && !/text\/html/i.test(accept)) return reply.send(healthBody(deps));
    const page = renderBridgeStatusPage(deps, metrics, Date.now());
    return reply.header('content-type', 'text/html; charset=utf-8').headers(PAGE_HEADERS).send(page);
  });
  registerMetricsRoute(app);
  return metrics;
}

/** SPEC §7: a replica whose clock differs from its PostgreSQL store's by more than 30 s is not ready. */
export const CLOCK_SKEW_LIMIT_MS = 30_000;

function clockSkewFailure(skewMs: number | undefined): string[] {
  if (skewMs === undefined || Math.abs(skewMs) <= CLOCK_SKEW_LIMIT_MS) return [];
  return [`clock: ${Math.round(skewMs / 1000)} s from the nonce store database's clock (limit 30 s; synchronize with NTP)`];
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
    openapi: {
      title: 'token-bridge',
      version: VERSION,
      description: 'OIDC provider that exchanges attestation chains for JWTs (docs/protocol.md §7)',
    },
  });
  const metrics = registerBridgeRoutes(app, deps);
  return { app, metrics };
}
