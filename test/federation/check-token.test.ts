// `token-bridge check-token` (SPEC §8): tokens from a real bridge started in-process pass; hand-made
// bad tokens are each caught (azp, aud, sub, iss form, lifetime — AWS accepts until exp + 300 s),
// with the STS error they usually surface as; the CLI reads the token from an argument or stdin
// (also the /token JSON response) and exits 0 / 1 / 2.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pino } from 'pino';
import { generateEd25519 } from '../../src/crypto/ed25519.ts';
import { buildDidKeyChain, buildTokenRequest, hexKey } from '../../src/bridge/client.ts';
import { startBridge } from '../../src/bridge/node.ts';
import type { RunningBridge } from '../../src/bridge/node.ts';
import { checkToken } from '../../src/federation/check-token.ts';
import type { TokenCheck } from '../../src/federation/check-token.ts';
import { FederationError } from '../../src/federation/errors.ts';
import { tempDir } from '../helpers/tmp.ts';
import { runCli } from './_helpers.ts';

const ISSUER = 'https://bridge.example';
const AUD = 'sts.amazonaws.com';
let tmp: { dir: string; cleanup: () => void };
let bridge: RunningBridge;
let subject: string;
let tokenResponse: string;
let token: string;

before(async () => {
  tmp = tempDir('tb-check-');
  bridge = await startBridge(
    {
      host: '127.0.0.1',
      port: 0,
      keyDir: join(tmp.dir, 'keys'),
      issuer: ISSUER,
      audiences: [AUD, 'api://ci'],
      alg: 'ES256',
      rateLimit: null,
    },
    pino({ level: 'silent' }),
  );
  const root = generateEd25519();
  const device = generateEd25519();
  const now = Math.floor(Date.now() / 1000);
  const chain = buildDidKeyChain(root.privateKey, [
    { deviceKey: device.privateKey, capabilities: ['deploy:staging'], expiresAt: now + 3600, timestamp: now - 60 },
  ]);
  subject = chain[0]!.issuer;
  const mint = async (audience: string): Promise<string> => {
    const body = buildTokenRequest({
      chain,
      rootPublicKey: hexKey(root.privateKey),
      audience,
      issuer: ISSUER,
      deviceKey: device.privateKey,
    });
    const res = await fetch(`${bridge.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    return text;
  };
  tokenResponse = await mint(AUD);
  token = (JSON.parse(tokenResponse) as { access_token: string }).access_token;
  otherAudToken = (JSON.parse(await mint('api://ci')) as { access_token: string }).access_token;
});
let otherAudToken: string;

after(async () => {
  await bridge.close();
  tmp.cleanup();
});

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
const NOW = 1_767_225_600;
const goodClaims = (): Record<string, unknown> => ({
  iss: ISSUER,
  sub: 'did:keri:EBfdlu8R27Fbx-ehrqwImnK-8Cm79sqbAQ4MmvEAYqao',
  aud: AUD,
  iat: NOW - 10,
  nbf: NOW - 70,
  exp: NOW + 890,
  jti: 'a3f1c2d4-0000-4000-8000-000000000000',
  capabilities: ['deploy:staging'],
  keri_prefix: 'EBfdlu8R27Fbx-ehrqwImnK-8Cm79sqbAQ4MmvEAYqao',
});
const make = (claims: Record<string, unknown>, header: Record<string, unknown> = { alg: 'RS256', kid: 'k1', typ: 'JWT' }): string =>
  `${b64(header)}.${b64(claims)}.c2ln`;
const ids = (r: TokenCheck, severity: 'error' | 'warning'): string[] => r.findings.filter((f) => f.severity === severity).map((f) => f.id);

void test('a token from the bridge passes: no findings', () => {
  const r = checkToken(token, { issuer: ISSUER, audience: AUD, now: Math.floor(Date.now() / 1000) });
  assert.deepEqual(r.findings, []);
  assert.equal(r.claims.sub, subject);
  assert.equal(r.header.alg, 'ES256');
  assert.ok(!('azp' in r.claims));
  // same token, expected audience differs
  const other = checkToken(otherAudToken, { issuer: ISSUER, audience: AUD, now: Math.floor(Date.now() / 1000) });
  assert.deepEqual(ids(other, 'error'), ['aud_unexpected']);
  assert.match(other.findings[0]!.sts!, /InvalidIdentityToken.*Incorrect token audience/);
});

void test('the hand-made good token passes', () => {
  assert.deepEqual(checkToken(make(goodClaims()), { issuer: ISSUER, now: NOW }).findings, []);
});

const BAD: [string, (c: Record<string, unknown>) => void, string, RegExp?][] = [
  ['azp present', (c) => (c.azp = 'sts.amazonaws.com'), 'azp', /Incorrect token audience/],
  ['aud missing', (c) => delete c.aud, 'aud_missing'],
  ['aud as an array', (c) => (c.aud = [AUD]), 'aud_not_string'],
  ['aud for another relying party', (c) => (c.aud = 'api://other'), 'aud_unexpected'],
  ['sub not a DID', (c) => (c.sub = 'repo:org/name:ref:refs/heads/main'), 'sub_not_did', /AccessDenied/],
  ['sub missing', (c) => delete c.sub, 'sub_missing'],
  ['iss over http', (c) => (c.iss = 'http://bridge.example'), 'iss_form', /No OpenIDConnect provider found/],
  ['iss with a trailing slash', (c) => (c.iss = 'https://bridge.example/'), 'iss_form'],
  ['iss with a port', (c) => (c.iss = 'https://bridge.example:8443'), 'iss_form'],
  ['iss of another bridge', (c) => (c.iss = 'https://other.example'), 'iss_unexpected'],
  ['expired beyond exp + 300 s', (c) => (c.exp = NOW - 301), 'expired', /ExpiredToken/],
  ['exp missing', (c) => delete c.exp, 'exp_missing'],
  [
    'iat in the future',
    (c) => {
      c.iat = NOW + 1000;
      c.nbf = NOW + 940;
      c.exp = NOW + 1900;
    },
    'iat_future',
  ],
  ['exp before iat', (c) => (c.exp = (c.iat as number) - 1), 'lifetime'],
];

for (const [name, mutate, id, sts] of BAD) {
  void test(`caught: ${name} → [${id}]`, () => {
    const c = goodClaims();
    mutate(c);
    const r = checkToken(make(c), { issuer: ISSUER, audience: AUD, now: NOW });
    assert.ok(ids(r, 'error').includes(id), `expected ${id}, got ${JSON.stringify(r.findings)}`);
    if (sts !== undefined) assert.match(r.findings.find((f) => f.id === id)!.sts!, sts);
  });
}

void test('header: alg none and a missing kid are errors', () => {
  const r = checkToken(make(goodClaims(), { alg: 'none' }), { now: NOW });
  assert.deepEqual(ids(r, 'error'), ['alg', 'kid']);
});

void test('warnings: inside the 300 s AWS leeway after exp, lifetime over 3600 s, pop false, keri_prefix mismatch', () => {
  const c = goodClaims();
  c.iat = NOW - 1000;
  c.nbf = NOW - 1060;
  c.exp = NOW - 100;
  const r = checkToken(make(c), { now: NOW });
  assert.deepEqual(ids(r, 'error'), []);
  assert.deepEqual(ids(r, 'warning'), ['expiring']);
  assert.match(r.findings[0]!.message, /AWS still accepts it for 200 s/);
  const long = goodClaims();
  long.exp = (long.iat as number) + 7200;
  long.pop = false;
  long.keri_prefix = 'Eother';
  assert.deepEqual(ids(checkToken(make(long), { now: NOW }), 'warning').sort(), ['keri_prefix', 'lifetime', 'pop_off']);
});

void test('not a JWT: token_unparsable', () => {
  for (const t of [
    'abc',
    'a.b',
    `${b64({ alg: 'RS256' })}.!!!.sig`,
    `${Buffer.from('nope').toString('base64url')}.${b64({})}.sig`,
    `${b64({ alg: 'RS256' })}.${b64({})}.`,
    '{"detail":"x"}',
  ]) {
    assert.throws(
      () => checkToken(t, { now: NOW }),
      (e: unknown) => e instanceof FederationError && e.code === 'token_unparsable',
      t,
    );
  }
});

void test('CLI: argument or stdin (also the /token JSON response), --audience list, --json, exit 0 / 1 / 2', async () => {
  const ok = await runCli(['check-token', token, '--issuer', ISSUER]);
  assert.equal(ok.code, 0, ok.stdout);
  assert.match(ok.stdout, /ok: no findings/);
  assert.match(ok.stdout, new RegExp(`sub  "${subject}"`));

  const piped = await runCli(['check-token', '-', '--issuer', ISSUER], tokenResponse);
  assert.equal(piped.code, 0, piped.stdout);

  const wrongAud = await runCli(['check-token', otherAudToken]);
  assert.equal(wrongAud.code, 1);
  assert.match(wrongAud.stdout, /error \[aud_unexpected\]/);
  assert.match(wrongAud.stdout, /STS: InvalidIdentityToken/);
  const listed = await runCli(['check-token', otherAudToken, '--audience', `${AUD},api://ci`]);
  assert.equal(listed.code, 0, listed.stdout);

  const c = goodClaims();
  c.azp = 'x';
  const json = await runCli(['check-token', make(c), '--json']);
  assert.equal(json.code, 1);
  const doc = JSON.parse(json.stdout) as { ok: boolean; findings: { id: string }[] };
  assert.equal(doc.ok, false);
  assert.ok(doc.findings.some((f) => f.id === 'azp'));

  const junk = await runCli(['check-token', 'not-a-token']);
  assert.equal(junk.code, 2);
  assert.match(junk.stderr, /not a JWT/);
});
