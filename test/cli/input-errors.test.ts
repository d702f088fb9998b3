// Every input error names its flag and its file, in one line of plain words (no stack, no raw
// OpenSSL or system code), and every missing required flag is named in one message (issue 27,
// item 8). Over the real command lines, as child processes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateEd25519 } from '../../src/crypto/ed25519.ts';
import { generateMlDsa44 } from '../../src/crypto/ml-dsa.ts';
import { signingKeyToPem } from '../../src/crypto/signing-key.ts';
import { selfSignedCertificate } from '../helpers/tls.ts';
import { tempDir } from '../helpers/tmp.ts';

const root = join(import.meta.dirname, '..', '..');
const node = join(root, 'node_modules', '.bin', 'node');

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(cli: 'anchor-witness' | 'token-bridge', args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    // no AW_/TB_ variables of the caller leak in
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(AW|TB)_/.test(k)));
    const child = spawn(node, [join(root, 'bin', `${cli}.js`), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/**
 * The refusal is one plain line `<cli>: <flag> <file>: …`, exit 1 as before, nothing on stdout
 * (start-up warnings logged before it, JSON lines, aside).
 */
function assertNamed(r: Run, cli: string, flag: string, file: string, what: RegExp): void {
  assert.equal(r.status, 1, r.stderr);
  assert.equal(r.stdout, '');
  const stderr = r.stderr.replace(/^\{"level":40,.*\n/gm, '');
  assert.match(stderr, /^[^\n]*\n$/, `one line: ${r.stderr}`);
  assert.ok(stderr.startsWith(`${cli}: ${flag} ${file}: `), r.stderr);
  assert.match(stderr, what);
  assert.doesNotMatch(stderr, /ERR_OSSL|routines::|ENOENT|\bat .*:\d+:\d+/, r.stderr);
}

const { dir, cleanup } = tempDir('input-errors-');
test.after(cleanup);

const f = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
};
const missing = join(dir, 'missing.yaml');
const badJson = f('bad.json', '{"parties": [');
const garbagePem = f('garbage.pem', 'this is not a key\n');
const edKey = f('ed25519.pem', signingKeyToPem({ algorithm: 'ed25519', ...generateEd25519() }));
const mlDsaKey = f('ml-dsa-44.pem', signingKeyToPem({ algorithm: 'ml-dsa-44', ...generateMlDsa44() }));
const tlsKey = join(dir, 'tls-key.pem');
const tlsCert = join(dir, 'tls-cert.pem');
const otherTlsKey = join(dir, 'other-tls-key.pem');
selfSignedCertificate({ keyFile: tlsKey, certFile: tlsCert, host: 'bridge.example' });
selfSignedCertificate({ keyFile: otherTlsKey, certFile: join(dir, 'other-tls-cert.pem'), host: 'bridge.example' });

const witness = ['serve', '--listen', '127.0.0.1:0', '--data-dir', join(dir, 'data'), '--name', 'w.test/a', '--roles', 'anchor'];
const bridge = ['serve', '--listen', '127.0.0.1:0', '--key-dir', join(dir, 'bridge-keys'), '--issuer', 'https://bridge.example'];

void test('anchor-witness serve: --config that does not exist', async () => {
  assertNamed(await run('anchor-witness', ['serve', '--config', missing]), 'anchor-witness', '--config', missing, /no such file/);
});

void test('anchor-witness serve: --config that is not JSON', async () => {
  assertNamed(await run('anchor-witness', ['serve', '--config', badJson]), 'anchor-witness', '--config', badJson, /not valid JSON/);
});

void test('anchor-witness serve: --key that is not a PEM key', async () => {
  assertNamed(await run('anchor-witness', [...witness, '--key', garbagePem]), 'anchor-witness', '--key', garbagePem, /PEM/);
});

void test('anchor-witness serve: --key of the wrong type (ML-DSA-44, not Ed25519)', async () => {
  const r = await run('anchor-witness', [...witness, '--key', mlDsaKey]);
  assertNamed(r, 'anchor-witness', '--key', mlDsaKey, /Ed25519.*ml-dsa-44/);
});

void test('anchor-witness serve: --cosign-key that is not a PEM key', async () => {
  const r = await run('anchor-witness', [...witness, '--roles', 'anchor,cosign', '--key', edKey, '--cosign-key', garbagePem]);
  assertNamed(r, 'anchor-witness', '--cosign-key', garbagePem, /PEM/);
});

void test('anchor-witness serve: --registry that does not exist, --logs and --log-witnesses that are not JSON', async () => {
  const base = [...witness, '--key', edKey];
  assertNamed(await run('anchor-witness', [...base, '--registry', missing]), 'anchor-witness', '--registry', missing, /no such file/);
  const cosign = [...base, '--roles', 'anchor,cosign', '--cosign-key', mlDsaKey];
  assertNamed(await run('anchor-witness', [...cosign, '--logs', badJson]), 'anchor-witness', '--logs', badJson, /not valid JSON/);
  const lw = await run('anchor-witness', [...base, '--log-witnesses', badJson]);
  assertNamed(lw, 'anchor-witness', '--log-witnesses', badJson, /not valid JSON/);
});

void test('anchor-witness serve: every missing required flag in one message', async () => {
  const r = await run('anchor-witness', ['serve']);
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /^anchor-witness: missing required flags: [^\n]*\n$/);
  for (const flag of ['--data-dir', '--name', '--key', '--cosign-key']) assert.ok(r.stderr.includes(flag), `${flag}: ${r.stderr}`);
});

void test('token-bridge serve: --tls-cert that is not PEM (no raw OpenSSL code)', async () => {
  const r = await run('token-bridge', [...bridge, '--tls-cert', garbagePem, '--tls-key', tlsKey]);
  assertNamed(r, 'token-bridge', '--tls-cert', garbagePem, /not PEM/);
});

void test('token-bridge serve: --tls-key that is not a key (no raw OpenSSL code)', async () => {
  const r = await run('token-bridge', [...bridge, '--tls-cert', tlsCert, '--tls-key', garbagePem]);
  assertNamed(r, 'token-bridge', '--tls-key', garbagePem, /private key/);
});

void test('token-bridge serve: --tls-key that does not belong to --tls-cert', async () => {
  const r = await run('token-bridge', [...bridge, '--tls-cert', tlsCert, '--tls-key', otherTlsKey]);
  assertNamed(r, 'token-bridge', '--tls-key', otherTlsKey, new RegExp(`--tls-cert ${tlsCert.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
});

void test('token-bridge serve: --tls-cert that does not exist', async () => {
  const r = await run('token-bridge', [...bridge, '--tls-cert', missing, '--tls-key', tlsKey]);
  assertNamed(r, 'token-bridge', '--tls-cert', missing, /no such file/);
});

void test('token-bridge serve: --trusted-roots that is not JSON, or does not exist', async () => {
  const bad = await run('token-bridge', [...bridge, '--trusted-roots', badJson]);
  assertNamed(bad, 'token-bridge', '--trusted-roots', badJson, /not valid JSON/);
  const gone = await run('token-bridge', [...bridge, '--trusted-roots', missing]);
  assertNamed(gone, 'token-bridge', '--trusted-roots', missing, /no such file/);
});

void test('token-bridge token: --chain that is not JSON', async () => {
  const r = await run('token-bridge', ['token', '--bridge', 'http://127.0.0.1:9', '--chain', badJson, '--root-key', '00'.repeat(32)]);
  assertNamed(r, 'token-bridge', '--chain', badJson, /not valid JSON/);
});

void test('token-bridge credentials: --chain that is not JSON', async () => {
  const r = await run('token-bridge', [
    'credentials',
    '--bridge',
    'http://127.0.0.1:9',
    '--chain',
    badJson,
    '--root-key',
    '00'.repeat(32),
    '--device-key',
    edKey,
    '--role-arn',
    'arn:aws:iam::123456789012:role/ci',
  ]);
  assertNamed(r, 'token-bridge', '--chain', badJson, /not valid JSON/);
});

void test('token-bridge serve and credentials: every missing required flag in one message', async () => {
  const serve = await run('token-bridge', ['serve']);
  assert.equal(serve.status, 1, serve.stderr);
  assert.match(serve.stderr, /^token-bridge: missing required flags: [^\n]*\n$/);
  for (const flag of ['--listen', '--key-dir', '--issuer']) assert.ok(serve.stderr.includes(flag), `${flag}: ${serve.stderr}`);
  const creds = await run('token-bridge', ['credentials', '--bridge', 'http://127.0.0.1:9']);
  assert.equal(creds.status, 1, creds.stderr);
  assert.match(creds.stderr, /^token-bridge: missing required flags: [^\n]*\n$/);
  for (const flag of ['--chain', '--root-key', '--device-key', '--role-arn'])
    assert.ok(creds.stderr.includes(flag), `${flag}: ${creds.stderr}`);
  assert.ok(!creds.stderr.includes('--bridge'), creds.stderr);
});
