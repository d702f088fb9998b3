/**
 * `token-bridge token` and `token-bridge credentials` when the bridge cannot be reached (issue 27
 * item 4): they used to say only `fetch failed`. Over loopback: a refused connection, a
 * self-signed certificate (then trusted through NODE_EXTRA_CA_CERTS, as the hint says), and
 * `http://` to a TLS port — each names the cause code and what to do about it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ed25519PrivateKeyToPem, generateEd25519 } from '../../src/crypto/ed25519.ts';
import { buildDidKeyChain, hexKey } from '../../src/bridge/client.ts';
import { fetchCause } from '../../src/client/http.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { selfSignedCertificate } from '../helpers/tls.ts';
import { tempDir } from '../helpers/tmp.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'token-bridge.js');
const NO_HINTS = /fetch failed$/m;

function runBin(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code) => {
      resolve({ code, stdout, stderr });
    });
  });
}

let tmp: { dir: string; cleanup: () => void };
let tls: ReturnType<typeof createHttpsServer>;
let tlsPort: number;
let refusedPort: number;
let certFile: string;
let common: string[];

before(async () => {
  tmp = tempDir('tb-fetch-');
  certFile = join(tmp.dir, 'cert.pem');
  const keyFile = join(tmp.dir, 'key.pem');
  selfSignedCertificate({ keyFile, certFile, host: 'localhost', subjectAltName: 'IP:127.0.0.1' });
  tls = createHttpsServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (_req, res) => {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not a bridge\n');
  });
  await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
  tlsPort = (tls.address() as AddressInfo).port;
  // A port that was just free: nothing listens there.
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  refusedPort = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));

  const root = generateEd25519();
  const device = generateEd25519();
  const now = Math.floor(Date.now() / 1000);
  const chain = buildDidKeyChain(root.privateKey, [
    { deviceKey: device.privateKey, capabilities: ['x'], expiresAt: now + 3600, timestamp: now - 60 },
  ]);
  writeFileSync(join(tmp.dir, 'chain.json'), JSON.stringify(chain));
  writeNewKeyFile(join(tmp.dir, 'device.pem'), ed25519PrivateKeyToPem(device.privateKey));
  common = ['--chain', join(tmp.dir, 'chain.json'), '--root-key', hexKey(root.privateKey), '--device-key', join(tmp.dir, 'device.pem')];
});

after(async () => {
  await new Promise((resolve) => tls.close(resolve));
  tmp.cleanup();
});

/** `token` (discovery first) and `credentials` (with --issuer: straight to POST /token) against one URL. */
async function both(bridge: string, env: Record<string, string> = {}) {
  const [token, credentials] = await Promise.all([
    runBin(['token', '--bridge', bridge, ...common], env),
    runBin(
      ['credentials', '--bridge', bridge, '--issuer', 'https://bridge.test', '--role-arn', 'arn:aws:iam::123456789012:role/x', ...common],
      env,
    ),
  ]);
  for (const r of [token, credentials]) {
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout, '');
    assert.doesNotMatch(r.stderr, NO_HINTS, 'more than "fetch failed"');
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, `one line: ${r.stderr}`);
  }
  return { token: token.stderr, credentials: credentials.stderr };
}

void test('a refused connection: the URL, fetch failed (ECONNREFUSED; … nothing listens there)', async () => {
  const url = `http://127.0.0.1:${refusedPort}`;
  const r = await both(url);
  assert.equal(
    r.token,
    `token-bridge: ${url}/.well-known/openid-configuration: fetch failed (ECONNREFUSED; connection refused: nothing listens there)\n`,
  );
  assert.match(
    r.credentials,
    new RegExp(`^token-bridge: ${url}/token: fetch failed \\(ECONNREFUSED; connection refused: nothing listens there\\)\\n$`),
  );
});

void test('a self-signed certificate: the verification code and the NODE_EXTRA_CA_CERTS hint, which works', async () => {
  const url = `https://127.0.0.1:${tlsPort}`;
  const r = await both(url);
  for (const line of [r.token, r.credentials]) {
    assert.match(
      line,
      /fetch failed \(DEPTH_ZERO_SELF_SIGNED_CERT; the server certificate is not signed by a trusted CA: for a private CA, set NODE_EXTRA_CA_CERTS to its certificate file \(PEM\)\)\n$/,
    );
  }
  // As the hint says: with the CA (here the certificate itself) trusted, the request gets through.
  const trusted = await runBin(['token', '--bridge', url, ...common], { NODE_EXTRA_CA_CERTS: certFile });
  assert.equal(trusted.code, 1);
  assert.equal(trusted.stderr, `token-bridge: ${url}/.well-known/openid-configuration: HTTP 404\n`);
});

void test('http:// to a TLS port: the socket code and "use https://"', async () => {
  const url = `http://127.0.0.1:${tlsPort}`;
  const r = await both(url);
  for (const line of [r.token, r.credentials]) {
    assert.match(line, /fetch failed \(UND_ERR_SOCKET; the server closed the connection: if that port serves TLS, use https:\/\/\)\n$/);
  }
});

void test('fetchCause: a cause without a code gives its message; https:// to a plain port says use http://', () => {
  const failed = (cause?: unknown) => Object.assign(new TypeError('fetch failed'), cause === undefined ? {} : { cause });
  assert.equal(fetchCause(failed()), '');
  assert.equal(fetchCause(failed(new Error('bad port'))), ' (bad port)');
  assert.equal(
    fetchCause(failed(Object.assign(new Error('x'), { code: 'ERR_SSL_WRONG_VERSION_NUMBER' })), 'https://h:1/'),
    ' (ERR_SSL_WRONG_VERSION_NUMBER; no TLS handshake: if that port serves plain HTTP, use http://)',
  );
  assert.equal(fetchCause(failed(Object.assign(new Error('x'), { code: 'EAI_AGAIN' }))), ' (EAI_AGAIN)');
});

void test('a server that is not a bridge answering 200 HTML: the URL, what was expected and what came, never a JSON.parse message', async () => {
  // Seen by a user who pointed --bridge at a web server: `token-bridge: Unexpected token '<', "<HTML><BOD"... is not valid JSON`.
  const page = createHttpServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end('<HTML><BODY>hello</BODY></HTML>\n');
  });
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
  try {
    const r = await both(url);
    assert.equal(
      r.token,
      `token-bridge: ${url}/.well-known/openid-configuration: HTTP 200 is not an OpenID discovery document (text/html, starting "<HTML><BODY>hello</BODY></HTML> "): is this URL a token bridge?\n`,
    );
    assert.equal(
      r.credentials,
      `token-bridge: ${url}/token: HTTP 200 is not a token response (text/html, starting "<HTML><BODY>hello</BODY></HTML> "): is this URL a token bridge?\n`,
    );
  } finally {
    await new Promise((resolve) => page.close(resolve));
  }
});
