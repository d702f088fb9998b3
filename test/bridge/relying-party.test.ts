// A relying party doing what AWS STS does with a web identity token (SPEC §7, issue "Must show"):
// over HTTPS (a self-signed certificate made with the openssl CLI for the issuer host
// `bridge.test`, resolved to the loopback bridge), fetch the discovery document at
// <issuer>/.well-known/openid-configuration, fetch jwks_uri with jose's createRemoteJWKSet, verify
// the RS256 signature, check iss / aud / exp / sub and that there is no azp — for a fresh bridge,
// after a key rotation, and after a restart (tokens issued before both still verify). A second
// relying-party library no one here wrote, npm `openid-client` (panva), discovers the issuer
// (its checks: the document's `issuer` is the URL asked for, HTTPS, JSON) and names the JWKS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { pino } from 'pino';
import { createRemoteJWKSet, customFetch, decodeProtectedHeader, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { buildTokenRequest } from '../../src/bridge/client.ts';
import { KeyDir } from '../../src/bridge/key-dir.ts';
import { startBridge } from '../../src/bridge/node.ts';
import type { RunningBridge } from '../../src/bridge/node.ts';
import { tempDir } from '../helpers/tmp.ts';
import { selfSignedCertificate } from '../helpers/tls.ts';
import { chain, DEV1, DEV2, ROOT } from './_helpers.ts';

const HOST = 'bridge.test';
const ISSUER = `https://${HOST}`;
const AUDIENCE = 'sts.amazonaws.com';

let tmp: { dir: string; cleanup: () => void };
let ca: Buffer;
let bridge: RunningBridge;
let keyDir: string;
const log = pino({ level: 'silent' });

function start(): Promise<RunningBridge> {
  return startBridge(
    {
      host: '127.0.0.1',
      port: 0,
      keyDir,
      issuer: ISSUER,
      tlsCertFile: join(tmp.dir, 'cert.pem'),
      tlsKeyFile: join(tmp.dir, 'key.pem'),
      rateLimit: null,
    },
    log,
  );
}

before(async () => {
  tmp = tempDir('tb-rp-');
  selfSignedCertificate({ keyFile: join(tmp.dir, 'key.pem'), certFile: join(tmp.dir, 'cert.pem'), host: HOST });
  ca = readFileSync(join(tmp.dir, 'cert.pem'));
  keyDir = join(tmp.dir, 'keys');
  bridge = await start();
});

after(async () => {
  await bridge.close();
  tmp.cleanup();
});

/**
 * fetch for the relying party: `https://bridge.test/...` goes to the bridge's loopback port, with
 * SNI and certificate verification for bridge.test against the test CA (no verification is skipped).
 */
const rpFetch = (
  url: string,
  init: { method?: string; headers?: ConstructorParameters<typeof Headers>[0]; body?: string; signal?: AbortSignal } = {},
): Promise<Response> =>
  new Promise((resolve, reject) => {
    const u = new URL(url);
    assert.equal(u.protocol, 'https:');
    assert.equal(u.hostname, HOST);
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: bridge.listen.port,
        servername: HOST,
        ca,
        method: init.method ?? 'GET',
        path: u.pathname + u.search,
        headers: { ...headers, host: HOST },
        signal: init.signal,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
          resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0, headers: h }));
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });

/** What AWS does: discovery, JWKS from jwks_uri, signature, iss, aud, exp, sub; no azp. */
async function relyingPartyVerify(token: string, expectedSub: string) {
  const disc = await rpFetch(`${ISSUER}/.well-known/openid-configuration`);
  assert.equal(disc.status, 200);
  const doc = (await disc.json()) as { issuer: string; jwks_uri: string; id_token_signing_alg_values_supported: string[] };
  assert.equal(doc.issuer, ISSUER);
  assert.equal(doc.jwks_uri, `${ISSUER}/.well-known/jwks.json`);
  assert.ok(doc.id_token_signing_alg_values_supported.includes('RS256'));
  const jwks = createRemoteJWKSet(new URL(doc.jwks_uri), { [customFetch]: rpFetch, cooldownDuration: 0 });
  const { payload, protectedHeader } = await jwtVerify(token, jwks, {
    issuer: ISSUER,
    audience: AUDIENCE,
    algorithms: ['RS256'],
    requiredClaims: ['exp', 'iat', 'sub'],
  });
  assert.equal(protectedHeader.alg, 'RS256');
  assert.equal(protectedHeader.typ, 'JWT');
  assert.equal(payload.sub, expectedSub);
  assert.equal(payload.aud, AUDIENCE); // one string, not an array
  assert.ok(payload.exp! > Math.floor(Date.now() / 1000));
  assert.equal(payload.nbf, payload.iat! - 60);
  assert.ok(!('azp' in payload), 'no azp claim (AWS would use it as the audience)');
  return { payload, kid: protectedHeader.kid! };
}

/** A fresh 2-link chain (times from the real clock: this bridge runs on wall time) and a token for it. */
async function mint(): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const c = chain(ROOT, [
    { device: DEV1, capabilities: ['deploy:staging', 'sign_commit'], expiresAt: now + 86400, timestamp: now - 60 },
    { device: DEV2, capabilities: ['deploy:staging'], expiresAt: now + 3600, timestamp: now - 60 },
  ]);
  const device = DEV2;
  const body = buildTokenRequest({ chain: c, rootPublicKey: ROOT.hex, audience: AUDIENCE, issuer: ISSUER, deviceKey: device.key });
  const res = await rpFetch(`${ISSUER}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { access_token?: string; code?: string; detail?: string };
  assert.equal(res.status, 200, JSON.stringify(json));
  return json.access_token!;
}

void test('RS256 token verified like AWS: HTTPS discovery → JWKS → signature, iss, aud, exp, sub; no azp', async () => {
  assert.match(bridge.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  const token = await mint();
  const { payload, kid } = await relyingPartyVerify(token, ROOT.did);
  assert.equal(kid, bridge.keyring.active.kid);
  assert.deepEqual(payload.capabilities, ['deploy:staging']);
  const jwks = (await (await rpFetch(`${ISSUER}/.well-known/jwks.json`)).json()) as { keys: { kty: string; n: string }[] };
  assert.equal(jwks.keys[0]!.kty, 'RSA');
  assert.equal(Buffer.from(jwks.keys[0]!.n, 'base64url').length * 8, 3072); // generated RSA keys are 3072 bits
});

void test('after a key rotation and after a restart, old and new tokens verify', async () => {
  const before = await mint();
  const oldKid = decodeProtectedHeader(before).kid!;
  // keys rotate (pre-publication 0 s for the test), then the bridge refreshes as on SIGHUP
  const entry = await new KeyDir(keyDir).rotate(Math.floor(Date.now() / 1000), 0, 'RS256');
  const r = await bridge.refreshKeys();
  assert.equal(r.promoted, entry.kid);
  const jwks = (await (await rpFetch(`${ISSUER}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
  assert.deepEqual(
    jwks.keys.map((k) => k.kid),
    [entry.kid, oldKid],
  ); // the retired key stays published
  const after = await mint();
  assert.equal((await relyingPartyVerify(after, ROOT.did)).kid, entry.kid);
  assert.equal((await relyingPartyVerify(before, ROOT.did)).kid, oldKid);

  // restart on the same key directory: nothing is regenerated, tokens in flight keep verifying
  await bridge.close();
  bridge = await start();
  assert.equal(bridge.keyring.active.kid, entry.kid);
  assert.equal((await relyingPartyVerify(before, ROOT.did)).kid, oldKid);
  assert.equal((await relyingPartyVerify(after, ROOT.did)).kid, entry.kid);
  const third = await mint();
  assert.equal((await relyingPartyVerify(third, ROOT.did)).kid, entry.kid);
});

/** rpFetch in openid-client's customFetch shape (its requests here are GETs without a body). */
const oidcFetch =
  (rewrite: (url: string) => string = (u) => u): oidc.CustomFetch =>
  (url, init) =>
    rpFetch(rewrite(url), { method: init.method, headers: init.headers, signal: init.signal ?? undefined });

void test('openid-client discovers the issuer over HTTPS; the JWKS it names verifies the token; a mismatched issuer is refused', async () => {
  const config = await oidc.discovery(new URL(ISSUER), AUDIENCE, undefined, oidc.None(), { [oidc.customFetch]: oidcFetch() });
  const meta = config.serverMetadata();
  assert.equal(meta.issuer, ISSUER);
  assert.equal(meta.jwks_uri, `${ISSUER}/.well-known/jwks.json`);
  const token = await mint();
  const jwks = createRemoteJWKSet(new URL(meta.jwks_uri), { [customFetch]: rpFetch, cooldownDuration: 0 });
  const { payload } = await jwtVerify(token, jwks, { issuer: meta.issuer, audience: AUDIENCE, algorithms: ['RS256'] });
  assert.equal(payload.sub, ROOT.did);
  // The same document fetched as another issuer (a path under this host) is refused by the library:
  // the bridge's `issuer` member names exactly the configured URL.
  await assert.rejects(
    oidc.discovery(new URL(`${ISSUER}/tenant`), AUDIENCE, undefined, oidc.None(), {
      [oidc.customFetch]: oidcFetch((u) => u.replace('/tenant/.well-known/', '/.well-known/')),
    }),
    (e: Error & { code?: string }) => e.code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED' && /issuer/.test(e.message),
  );
});
