// `token-bridge credentials` (SPEC §8) end to end: the bridge runs in-process on HTTPS (an openssl
// self-signed certificate for bridge.test, trusted by the child process through
// NODE_EXTRA_CA_CERTS), and a local HTTPS stand-in for STS checks the request exactly as the AWS
// Query API defines AssumeRoleWithWebIdentity (form-encoded POST; Action, Version=2011-06-15,
// RoleArn, RoleSessionName, WebIdentityToken; no request signature), verifies the token the way STS
// does (JWKS signature, iss, aud, exp), and answers in the documented XML shape. The printed exports
// parse in bash; the GitHub format masks the values and writes $GITHUB_ENV.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import { createLocalJWKSet, jwtVerify } from 'jose';
import type { JSONWebKeySet } from 'jose';
import { ed25519PrivateKeyToPem, generateEd25519 } from '../../src/crypto/ed25519.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { buildDidKeyChain, hexKey } from '../../src/bridge/client.ts';
import { startBridge } from '../../src/bridge/node.ts';
import type { RunningBridge } from '../../src/bridge/node.ts';
import { sessionNameFor, SESSION_NAME_RE } from '../../src/federation/aws.ts';
import { assumeRoleWithWebIdentity, renderEnv, renderGithub } from '../../src/federation/credentials.ts';
import { FederationError } from '../../src/federation/errors.ts';
import { tempDir } from '../helpers/tmp.ts';
import { makePki, runBin } from './_helpers.ts';
import type { Pki } from './_helpers.ts';

const HOST = 'bridge.test';
const ISSUER = `https://${HOST}`;
const ROLE = 'arn:aws:iam::123456789012:role/ci-deploy';
const DENIED_ROLE = 'arn:aws:iam::123456789012:role/not-trusting';
// Values with characters a shell or $GITHUB_ENV would mangle if quoted badly.
const CREDS = {
  AccessKeyId: 'ASIAEXAMPLE0FEDERATE',
  SecretAccessKey: `wJalr/K7MDENG+bPx$HOME'RfiCY"\`x=`,
  SessionToken: 'IQoJb3JpZ2luX2VjE//////////wEaCXVzLWVhc3QtMSJHMEUCIQ+abc==',
};

let tmp: { dir: string; cleanup: () => void };
let pki: Pki;
let bridge: RunningBridge;
let sts: Server;
let stsUrl: string;
let jwks: ReturnType<typeof createLocalJWKSet>;
let chainFile: string;
let deviceKeyFile: string;
let rootHex: string;
let subject: string;

interface StsCall {
  method: string;
  path: string;
  contentType: string;
  authorization: string | undefined;
  params: [string, string][];
}
const calls: StsCall[] = [];

const xml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');

function stsError(status: number, code: string, message: string): { status: number; body: string } {
  return {
    status,
    body: `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">\n  <Error>\n    <Type>Sender</Type>\n    <Code>${code}</Code>\n    <Message>${xml(message)}</Message>\n  </Error>\n  <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>\n</ErrorResponse>\n`,
  };
}

/** What STS does with the request (as far as this test needs): Query API shape, then the token. */
async function answer(call: StsCall): Promise<{ status: number; body: string }> {
  const p = new Map(call.params);
  const token = p.get('WebIdentityToken')!;
  let claims;
  try {
    ({ payload: claims } = await jwtVerify(token, jwks, { issuer: ISSUER, algorithms: ['RS256', 'ES256'] }));
  } catch (e) {
    return stsError(400, 'InvalidIdentityToken', `The ID Token provided is not a valid JWT: ${(e as Error).message}`);
  }
  if (claims.aud !== 'sts.amazonaws.com' || 'azp' in claims) return stsError(400, 'InvalidIdentityToken', 'Incorrect token audience');
  if (p.get('RoleArn') === DENIED_ROLE) return stsError(403, 'AccessDenied', 'Not authorized to perform sts:AssumeRoleWithWebIdentity');
  const session = p.get('RoleSessionName')!;
  return {
    status: 200,
    body: `<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleWithWebIdentityResult>
    <SubjectFromWebIdentityToken>${xml(claims.sub!)}</SubjectFromWebIdentityToken>
    <Audience>sts.amazonaws.com</Audience>
    <AssumedRoleUser>
      <Arn>arn:aws:sts::123456789012:assumed-role/ci-deploy/${xml(session)}</Arn>
      <AssumedRoleId>AROACLKWSDQRAOEXAMPLE:${xml(session)}</AssumedRoleId>
    </AssumedRoleUser>
    <Credentials>
      <SessionToken>${xml(CREDS.SessionToken)}</SessionToken>
      <SecretAccessKey>${xml(CREDS.SecretAccessKey)}</SecretAccessKey>
      <Expiration>2030-01-01T01:00:00Z</Expiration>
      <AccessKeyId>${CREDS.AccessKeyId}</AccessKeyId>
    </Credentials>
    <SourceIdentity></SourceIdentity>
    <Provider>${ISSUER}</Provider>
  </AssumeRoleWithWebIdentityResult>
  <ResponseMetadata>
    <RequestId>ad4156e9-bce1-11e2-82e6-6b6efEXAMPLE</RequestId>
  </ResponseMetadata>
</AssumeRoleWithWebIdentityResponse>
`,
  };
}

before(async () => {
  tmp = tempDir('tb-creds-');
  pki = makePki(tmp.dir, HOST);
  bridge = await startBridge(
    {
      host: '127.0.0.1',
      port: 0,
      keyDir: join(tmp.dir, 'keys'),
      issuer: ISSUER,
      tlsCertFile: pki.selfPem,
      tlsKeyFile: pki.selfKey,
      rateLimit: null,
      audiences: ['sts.amazonaws.com', 'api://ci'],
    },
    pino({ level: 'silent' }),
  );
  const jwksRes = await bridge.app.inject({ url: '/.well-known/jwks.json' });
  jwks = createLocalJWKSet(jwksRes.json<JSONWebKeySet>());

  const root = generateEd25519();
  const device = generateEd25519();
  const now = Math.floor(Date.now() / 1000);
  const chain = buildDidKeyChain(root.privateKey, [
    { deviceKey: device.privateKey, capabilities: ['deploy:staging'], expiresAt: now + 3600, timestamp: now - 60 },
  ]);
  subject = chain[0]!.issuer;
  rootHex = hexKey(root.privateKey);
  chainFile = join(tmp.dir, 'chain.json');
  writeFileSync(chainFile, JSON.stringify(chain));
  deviceKeyFile = join(tmp.dir, 'device.pem');
  writeNewKeyFile(deviceKeyFile, ed25519PrivateKeyToPem(device.privateKey));

  sts = createServer({ cert: readFileSync(pki.selfPem), key: readFileSync(pki.selfKey) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const call: StsCall = {
        method: req.method ?? '',
        path: req.url ?? '',
        contentType: req.headers['content-type'] ?? '',
        authorization: req.headers.authorization,
        params: [...new URLSearchParams(Buffer.concat(chunks).toString('utf8'))],
      };
      calls.push(call);
      void answer(call).then(({ status, body }) => {
        res.writeHead(status, { 'content-type': 'text/xml' });
        res.end(body);
      });
    });
  });
  await new Promise<void>((resolve) => sts.listen(0, '127.0.0.1', resolve));
  stsUrl = `https://127.0.0.1:${(sts.address() as AddressInfo).port}`;
});

after(async () => {
  await bridge.close();
  await new Promise((resolve) => sts.close(resolve));
  tmp.cleanup();
});

/** The Query API request, exactly: form POST to /, these parameters and no others, unsigned. */
function assertQueryApi(call: StsCall, roleArn: string, extra: [string, string][] = []): void {
  assert.equal(call.method, 'POST');
  assert.equal(call.path, '/');
  assert.match(call.contentType, /^application\/x-www-form-urlencoded(;|$)/);
  assert.equal(call.authorization, undefined, 'AssumeRoleWithWebIdentity is not signed');
  const names = call.params.map(([k]) => k);
  assert.deepEqual(names.sort(), ['Action', 'RoleArn', 'RoleSessionName', 'Version', 'WebIdentityToken', ...extra.map(([k]) => k)].sort());
  const p = new Map(call.params);
  assert.equal(p.get('Action'), 'AssumeRoleWithWebIdentity');
  assert.equal(p.get('Version'), '2011-06-15');
  assert.equal(p.get('RoleArn'), roleArn);
  assert.match(p.get('RoleSessionName')!, SESSION_NAME_RE);
  assert.match(p.get('WebIdentityToken')!, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  for (const [k, v] of extra) assert.equal(p.get(k), v);
}

const baseArgs = (): string[] => [
  'credentials',
  '--bridge',
  bridge.url,
  '--chain',
  chainFile,
  '--root-key',
  rootHex,
  '--device-key',
  deviceKeyFile,
  '--sts-endpoint',
  stsUrl,
  '--region',
  'eu-west-1',
];
const childEnv = (): Record<string, string> => ({ NODE_EXTRA_CA_CERTS: pki.selfPem, AWS_EC2_METADATA_DISABLED: 'true', HOME: tmp.dir });

void test('session names: tb-<subject without did:>, [\\w+=,.@-]{2,64}', () => {
  assert.equal(
    sessionNameFor('did:keri:EBfdlu8R27Fbx-ehrqwImnK-8Cm79sqbAQ4MmvEAYqao'),
    'tb-keri-EBfdlu8R27Fbx-ehrqwImnK-8Cm79sqbAQ4MmvEAYqao',
  );
  const long = sessionNameFor('did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK');
  assert.equal(long, 'tb-key-z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK');
  assert.equal(sessionNameFor('did:keri:' + 'E'.repeat(100)).length, 64);
  assert.equal(sessionNameFor('did:web:example.com:user/1 x'), 'tb-web-example.com-user-1-x');
  for (const s of ['did:keri:E' + 'a'.repeat(200), 'did:key:z6Mk', 'x']) assert.match(sessionNameFor(s), SESSION_NAME_RE);
});

void test('--format env: /token with PoP → STS Query API → exports that bash evaluates', async () => {
  const before = calls.length;
  const r = await runBin([...baseArgs(), '--role-arn', ROLE], { env: childEnv() });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(calls.length, before + 1);
  const call = calls[calls.length - 1]!;
  assertQueryApi(call, ROLE);
  assert.equal(new Map(call.params).get('RoleSessionName'), sessionNameFor(subject));
  assert.equal(r.stdout.split('\n').filter((l) => l !== '').length, 3);
  assert.match(
    r.stderr,
    new RegExp(`assumed arn:aws:sts::123456789012:assumed-role/ci-deploy/tb-key-z6Mk\\S+ as ${subject} until 2030-01-01T01:00:00.000Z`),
  );
  for (const v of Object.values(CREDS)) assert.ok(!r.stderr.includes(v), 'no credential on stderr');

  const out = join(tmp.dir, 'creds.env');
  writeFileSync(out, r.stdout);
  const printed = execFileSync(
    'bash',
    ['-c', 'eval "$(cat "$1")"; printf "%s\\n%s\\n%s\\n" "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" "$AWS_SESSION_TOKEN"', 'bash', out],
    { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: '/should-not-expand' } },
  );
  assert.equal(printed, `${CREDS.AccessKeyId}\n${CREDS.SecretAccessKey}\n${CREDS.SessionToken}\n`);
  const sh = execFileSync('sh', ['-c', 'eval "$(cat "$1")"; printf "%s" "$AWS_SECRET_ACCESS_KEY"', 'sh', out], { encoding: 'utf8' });
  assert.equal(sh, CREDS.SecretAccessKey);
});

void test('--format github: ::add-mask:: for each value on stdout, NAME=value lines appended to $GITHUB_ENV; --session-name, --duration-seconds; TB_* variables', async () => {
  const githubEnv = join(tmp.dir, 'github_env');
  writeFileSync(githubEnv, 'EXISTING=1\n');
  const before = calls.length;
  // --bridge and --role-arn from TB_BRIDGE / TB_ROLE_ARN, as in the documented workflow
  const args = baseArgs().filter((a, i, all) => a !== '--bridge' && all[i - 1] !== '--bridge');
  const r = await runBin([...args, '--format', 'github', '--session-name', 'build-42', '--duration-seconds', '900'], {
    env: { ...childEnv(), GITHUB_ENV: githubEnv, TB_BRIDGE: bridge.url, TB_ROLE_ARN: ROLE },
  });
  assert.equal(r.code, 0, r.stderr);
  assertQueryApi(calls[before]!, ROLE, [['DurationSeconds', '900']]);
  assert.equal(new Map(calls[before]!.params).get('RoleSessionName'), 'build-42');
  assert.equal(r.stdout, `::add-mask::${CREDS.AccessKeyId}\n::add-mask::${CREDS.SecretAccessKey}\n::add-mask::${CREDS.SessionToken}\n`);
  assert.equal(
    readFileSync(githubEnv, 'utf8'),
    `EXISTING=1\nAWS_ACCESS_KEY_ID=${CREDS.AccessKeyId}\nAWS_SECRET_ACCESS_KEY=${CREDS.SecretAccessKey}\nAWS_SESSION_TOKEN=${CREDS.SessionToken}\n`,
  );

  const noEnv = await runBin([...baseArgs(), '--role-arn', ROLE, '--format', 'github'], { env: { ...childEnv(), GITHUB_ENV: '' } });
  assert.equal(noEnv.code, 1);
  assert.match(noEnv.stderr, /needs \$GITHUB_ENV/);
});

void test('STS refusals print the STS error and what it usually means; exit 1, nothing on stdout', async () => {
  const [denied, wrongAud] = await Promise.all([
    runBin([...baseArgs(), '--role-arn', DENIED_ROLE], { env: childEnv() }),
    runBin([...baseArgs(), '--role-arn', ROLE, '--audience', 'api://ci'], { env: childEnv() }),
  ]);
  if (process.env.SHOW_STDERR === '1') process.stderr.write(denied.stderr + wrongAud.stderr);
  assert.equal(denied.code, 1);
  assert.equal(denied.stdout, '');
  assert.match(denied.stderr, /AccessDenied: Not authorized to perform sts:AssumeRoleWithWebIdentity/);
  assert.match(denied.stderr, /lint-policy/);

  // a token for another audience: STS says "Incorrect token audience" (the precheck lets a
  // correctly requested audience through; here the user asked for api://ci on purpose)
  assert.equal(wrongAud.code, 1);
  assert.match(wrongAud.stderr, /InvalidIdentityToken.*Incorrect token audience/);
  assert.match(wrongAud.stderr, /client ID list/);
});

void test('bridge refusals and bad flags stop before STS', async () => {
  const before = calls.length;
  const [badRoot, badArn] = await Promise.all([
    runBin([...baseArgs().map((a) => (a === rootHex ? '00'.repeat(32) : a)), '--role-arn', ROLE], { env: childEnv() }),
    runBin([...baseArgs(), '--role-arn', 'ci-deploy'], { env: childEnv() }),
  ]);
  if (process.env.SHOW_STDERR === '1') process.stderr.write(badRoot.stderr + badArn.stderr);
  assert.equal(badRoot.code, 1);
  assert.match(badRoot.stderr, /answered 40[13] \w+/);
  assert.match(badArn.stderr, /--role-arn must be/);
  assert.equal(calls.length, before);
});

void test('in process: the SDK client against the stand-in (CA given directly), and output rendering', async () => {
  const r = await runBin(['token', '--bridge', bridge.url, '--chain', chainFile, '--root-key', rootHex, '--device-key', deviceKeyFile], {
    env: childEnv(),
  });
  assert.equal(r.code, 0, r.stderr);
  const token = (JSON.parse(r.stdout) as { access_token: string }).access_token;
  const creds = await assumeRoleWithWebIdentity({
    roleArn: ROLE,
    sessionName: 'tb-x1',
    token,
    region: 'us-east-1',
    endpoint: stsUrl,
    ca: readFileSync(pki.selfPem),
  });
  assert.equal(creds.accessKeyId, CREDS.AccessKeyId);
  assert.equal(creds.secretAccessKey, CREDS.SecretAccessKey);
  assert.equal(creds.subjectFromToken, subject);
  assert.equal(creds.expiration?.toISOString(), '2030-01-01T01:00:00.000Z');
  assert.equal(renderEnv(creds).split('\n')[0], `export AWS_ACCESS_KEY_ID='${CREDS.AccessKeyId}'`);
  await assert.rejects(
    assumeRoleWithWebIdentity({
      roleArn: ROLE,
      sessionName: 'x',
      token,
      region: 'us-east-1',
      endpoint: stsUrl,
      ca: readFileSync(pki.selfPem),
    }),
    (e: unknown) => e instanceof FederationError && e.code === 'invalid_session_name',
  );
  await assert.rejects(
    assumeRoleWithWebIdentity({
      roleArn: ROLE,
      sessionName: 'tb-x1',
      token: 'a.b.c',
      region: 'us-east-1',
      endpoint: stsUrl,
      ca: readFileSync(pki.selfPem),
      maxAttempts: 1,
    }),
    (e: unknown) =>
      e instanceof FederationError && e.code === 'sts_failed' && /InvalidIdentityToken/.test(e.message) && /check-token/.test(e.message),
  );
  // a value with a newline would inject lines into $GITHUB_ENV: refused
  assert.throws(
    () => renderGithub({ ...creds, sessionToken: 'a\nNODE_OPTIONS=--require=/tmp/x' }),
    (e: unknown) => e instanceof FederationError && e.code === 'unsafe_credential',
  );
});
