// The bridge over HTTP (SPEC §2 + §7), on the shared hardened server: problem+json codes and
// statuses for every failure case of the issue's "Must show" list, the OIDC documents and their
// headers, the per-IP rate limit on /token, an issuer with a path, metrics and the status page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createBridgeServer } from '../../src/bridge/app.ts';
import { validateIssuer } from '../../src/bridge/issuer.ts';
import { SigningKeyring } from '../../src/bridge/signing-keyring.ts';
import { TokenService } from '../../src/bridge/service.ts';
import { MemoryNonceStore } from '../../src/bridge/nonces.ts';
import { parseTrustedRoots } from '../../src/bridge/trusted-roots.ts';
import type { App } from '../../src/server/options.ts';
import { tempDir } from '../helpers/tmp.ts';
import { chain, DEV1, DEV2, freshNonce, ISSUER, NOW_MS, NOW_S, policy, request, ROOT, seedKey, twoLinks } from './_helpers.ts';

let tmp: { dir: string; cleanup: () => void };
let ring: SigningKeyring;
let app: App;

async function bridge(opts: { issuer?: string; rateLimit?: { rps: number; burst: number } | null; pop?: boolean } = {}): Promise<App> {
  const issuer = validateIssuer(opts.issuer ?? ISSUER, false);
  const roots = parseTrustedRoots({ parties: [], revoked: [{ rid: 'revoked-by-operator' }] });
  const service = new TokenService({
    policy: policy({ issuer: issuer.issuer, proofOfPossession: opts.pop ?? true }),
    trustedRoots: () => roots,
    signingKey: () => ring.active,
    nonces: new MemoryNonceStore(1000),
    now: () => NOW_MS,
  });
  const { app: a } = await createBridgeServer(
    { service, keys: ring, issuer },
    { rateLimit: opts.rateLimit === undefined ? null : opts.rateLimit },
  );
  return a;
}

before(async () => {
  tmp = tempDir('tb-http-');
  ring = await SigningKeyring.open(tmp.dir, { alg: 'ES256', maxTtl: 3600, create: true }, NOW_S);
  app = await bridge();
});
after(async () => {
  await app.close();
  tmp.cleanup();
});

async function post(body: unknown, a: App = app, url = '/token') {
  const r = await a.inject({
    method: 'POST',
    url,
    payload: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
  return { status: r.statusCode, headers: r.headers, json: JSON.parse(r.body) as Record<string, unknown> };
}

async function expectProblem(body: unknown, status: number, code: string, detail?: RegExp): Promise<void> {
  const r = await post(body);
  assert.equal(r.status, status, `${code}: got ${r.status} ${JSON.stringify(r.json)}`);
  assert.match(String(r.headers['content-type']), /^application\/problem\+json/);
  assert.equal(r.json.code, code);
  assert.equal(r.json.status, status);
  assert.deepEqual(Object.keys(r.json).sort(), ['code', 'detail', 'status', 'title', 'type']);
  if (detail !== undefined) assert.match(String(r.json.detail), detail);
}

void test('POST /token issues: 200 {access_token, token_type, expires_in, subject}, no-store', async () => {
  const r = await post(request({ ttlSecs: 300 }));
  assert.equal(r.status, 200);
  assert.equal(r.headers['cache-control'], 'no-store');
  assert.deepEqual(Object.keys(r.json), ['access_token', 'token_type', 'expires_in', 'subject']);
  assert.equal(r.json.token_type, 'Bearer');
  assert.equal(r.json.expires_in, 300);
  assert.equal(r.json.subject, ROOT.did);
  assert.equal(r.headers['access-control-allow-origin'], undefined); // POST: no CORS
});

void test('every failure case answers problem+json with its SPEC §7 code and status', async () => {
  const stranger = seedKey(0x66);
  const emptyIdentity = twoLinks();
  emptyIdentity[0]!.identity_signature = '';
  const missingIdentity = twoLinks();
  delete missingIdentity[1]!.identity_signature;
  const nineLinks = Array.from({ length: 9 }, () => twoLinks()[0]);
  const cases: [string, unknown, number, string, RegExp?][] = [
    [
      'bad issuer signature',
      request({ chain: twoLinks({ l1: { signIdentityWith: ROOT.key } }) }),
      401,
      'chain_signature_invalid',
      /^link 1: /,
    ],
    [
      'empty issuer signature',
      request({ chain: emptyIdentity }),
      401,
      'chain_signature_invalid',
      /^link 0: identity_signature is missing or empty/,
    ],
    [
      'missing issuer signature',
      request({ chain: missingIdentity }),
      401,
      'chain_signature_invalid',
      /^link 1: identity_signature is missing/,
    ],
    ['broken link', request({ chain: twoLinks({ l1: { issuer: 'did:key:z6MkSomeoneElse' } }) }), 401, 'chain_broken', /^link 1: /],
    ['expired', request({ chain: twoLinks({ l1: { expiresAt: NOW_S - 1 } }) }), 401, 'attestation_expired', /^link 1: expired at/],
    ['revoked (revoked_at)', request({ chain: twoLinks({ l0: { revokedAt: NOW_S - 5 } }) }), 401, 'attestation_revoked', /^link 0: /],
    [
      'revoked (trusted roots list)',
      request({ chain: twoLinks({ l1: { rid: 'revoked-by-operator' } }) }),
      401,
      'attestation_revoked',
      /^link 1: rid/,
    ],
    ['future timestamp', request({ chain: twoLinks({ l0: { timestamp: NOW_S + 301 } }) }), 401, 'attestation_future', /^link 0: /],
    [
      'untrusted root',
      request({ chain: chain(stranger, [{ device: DEV2, issuer: ROOT.did }]), root: stranger.hex }),
      403,
      'untrusted_root',
    ],
    [
      'widened capabilities',
      request({ chain: twoLinks({ l1: { capabilities: ['deploy:staging', 'admin'] } }) }),
      403,
      'capability_escalation',
      /^link 1: grants "admin"/,
    ],
    ['insufficient capabilities', request({ requestedCapabilities: ['deploy:production'] }), 403, 'insufficient_capabilities'],
    ['disallowed audience', request({ audience: 'api://other' }), 403, 'audience_not_allowed'],
    ['TTL too long', request({ ttlSecs: 3601 }), 400, 'ttl_too_large'],
    ['stale iat', request({ iat: NOW_S - 120 }), 401, 'pop_stale'],
    ['wrong PoP key', request({ device: DEV1.key }), 401, 'pop_invalid'],
    [
      'no proof',
      (() => {
        const r = request();
        delete r.proof;
        return r;
      })(),
      401,
      'pop_required',
    ],
    ['oversize chain', request({ chain: nineLinks }), 400, 'malformed_body', /^\/attestation_chain: must hold at most 8/],
    ['malformed JSON', '{"attestation_chain": [', 400, 'malformed_body'],
    ['duplicate member', '{"audience":"a","audience":"b"}', 400, 'malformed_body', /duplicate member name/],
    ['unknown member', { ...request(), extra: 1 }, 400, 'malformed_body', /^\/extra: unknown field/],
  ];
  for (const [name, body, status, code, detail] of cases) {
    await test(name, () => expectProblem(body, status, code, detail));
  }
});

void test('a replayed nonce is pop_replayed; an invalid proof does not burn its nonce', async () => {
  const nonce = freshNonce();
  await expectProblem(request({ nonce, device: DEV1.key }), 401, 'pop_invalid');
  const body = request({ nonce });
  assert.equal((await post(body)).status, 200);
  await expectProblem(body, 401, 'pop_replayed');
});

void test('shared limits: 415 non-JSON, 413 oversize body, 405 wrong method', async () => {
  const t = await app.inject({ method: 'POST', url: '/token', payload: 'x', headers: { 'content-type': 'text/plain' } });
  assert.equal(t.statusCode, 415);
  assert.equal((JSON.parse(t.body) as { code: string }).code, 'unsupported_media_type');
  const big = JSON.stringify({ ...request(), pad: 'x'.repeat(70_000) });
  const b = await app.inject({ method: 'POST', url: '/token', payload: big, headers: { 'content-type': 'application/json' } });
  assert.equal(b.statusCode, 413);
  assert.equal((JSON.parse(b.body) as { code: string }).code, 'body_too_large');
  const m = await app.inject({ method: 'GET', url: '/token' });
  assert.equal(m.statusCode, 405);
  assert.match(String(m.headers.allow), /POST/);
});

void test('discovery and JWKS: documents, Cache-Control public max-age=300, CORS', async () => {
  const d = await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' });
  assert.equal(d.statusCode, 200);
  assert.equal(d.headers['cache-control'], 'public, max-age=300');
  assert.equal(d.headers['access-control-allow-origin'], '*');
  const doc = JSON.parse(d.body) as Record<string, unknown>;
  assert.deepEqual(Object.keys(doc), [
    'issuer',
    'jwks_uri',
    'token_endpoint',
    'response_types_supported',
    'subject_types_supported',
    'id_token_signing_alg_values_supported',
    'claims_supported',
  ]);
  assert.equal(doc.issuer, ISSUER);
  assert.equal(doc.jwks_uri, `${ISSUER}/.well-known/jwks.json`);
  assert.deepEqual(doc.id_token_signing_alg_values_supported, ['ES256']);
  const j = await app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
  assert.equal(j.headers['cache-control'], 'public, max-age=300');
  const jwks = JSON.parse(j.body) as { keys: Record<string, unknown>[] };
  assert.deepEqual(
    jwks.keys.map((k) => k.kid),
    [ring.active.kid],
  );
  assert.ok(jwks.keys.every((k) => !('d' in k))); // never private members
});

void test('an issuer with a path serves the OIDC routes under it (and at the root)', async () => {
  const a = await bridge({ issuer: 'https://bridge.example/tenant' });
  try {
    const d = await a.inject({ method: 'GET', url: '/tenant/.well-known/openid-configuration' });
    assert.equal((JSON.parse(d.body) as { jwks_uri: string }).jwks_uri, 'https://bridge.example/tenant/.well-known/jwks.json');
    assert.equal((await a.inject({ method: 'GET', url: '/tenant/.well-known/jwks.json' })).statusCode, 200);
    assert.equal((await a.inject({ method: 'GET', url: '/.well-known/jwks.json' })).statusCode, 200);
    const r = await post(request({ issuer: 'https://bridge.example/tenant' }), a, '/tenant/token');
    assert.equal(r.status, 200);
    const spec = JSON.parse((await a.inject({ method: 'GET', url: '/openapi.json' })).body) as { paths: Record<string, unknown> };
    assert.ok('/tenant/token' in spec.paths);
  } finally {
    await a.close();
  }
});

void test('rate limit on /token per client IP (a burst of 20): 429 rate_limited with Retry-After; GETs unaffected', async () => {
  // Refill at 1 per 100 s, not the default 10/s: on a loaded machine the 21 requests took over
  // 100 ms, a token came back, and the 21st got 400 instead of 429.
  const a = await bridge({ rateLimit: { rps: 0.01, burst: 20 } });
  try {
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) statuses.push((await post('{}', a)).status);
    assert.deepEqual(statuses.slice(0, 20), Array<number>(20).fill(400));
    assert.equal(statuses[20], 429);
    const r = await a.inject({ method: 'POST', url: '/token', payload: '{}', headers: { 'content-type': 'application/json' } });
    assert.equal((JSON.parse(r.body) as { code: string }).code, 'rate_limited');
    assert.ok(Number(r.headers['retry-after']) >= 1);
    // another client is not affected; GET routes are not limited
    const other = await a.inject({
      method: 'POST',
      url: '/token',
      payload: '{}',
      headers: { 'content-type': 'application/json' },
      remoteAddress: '10.1.2.3',
    });
    assert.equal(other.statusCode, 400);
    assert.equal((await a.inject({ method: 'GET', url: '/.well-known/jwks.json' })).statusCode, 200);
    assert.equal((await a.inject({ method: 'GET', url: '/health' })).statusCode, 200);
  } finally {
    await a.close();
  }
});

void test('health, status page, metrics, OpenAPI', async () => {
  const h = JSON.parse((await app.inject({ method: 'GET', url: '/health' })).body) as Record<string, unknown>;
  assert.equal(h.status, 'ok');
  assert.equal(h.issuer, ISSUER);
  assert.equal(h.active_kid, ring.active.kid);
  const page = await app.inject({ method: 'GET', url: '/' });
  assert.match(String(page.headers['content-type']), /^text\/html/);
  assert.match(page.body, /token-bridge/);
  const pj = await app.inject({ method: 'GET', url: '/', headers: { accept: 'application/json' } });
  assert.equal((JSON.parse(pj.body) as { status: string }).status, 'ok');
  const m = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  assert.match(m, /^bridge_tokens_issued_total\{alg="ES256"\} [1-9]/m);
  assert.match(m, /^bridge_token_refusals_total\{code="pop_replayed"\} 1/m);
  assert.match(m, /^http_requests_total\{route="\/token",method="POST",status="200"\}/m);
  const spec = JSON.parse((await app.inject({ method: 'GET', url: '/openapi.json' })).body) as {
    paths: Record<string, Record<string, unknown>>;
  };
  assert.ok(spec.paths['/token']?.post !== undefined);
  assert.ok(spec.paths['/.well-known/jwks.json']?.get !== undefined);
});

void test('--no-proof-of-possession: a request without proof issues a token marked "pop": false', async () => {
  const a = await bridge({ pop: false });
  try {
    const body = request({ device: null });
    const r = await post(body, a);
    assert.equal(r.status, 200);
    const payload = JSON.parse(Buffer.from(String(r.json.access_token).split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    assert.equal(payload.pop, false);
  } finally {
    await a.close();
  }
});
