// The bundle and the signed build statement end to end (SPEC §6, issue "Signed build statement"):
// the test builds dist/…/anchor-witness.mjs itself (esbuild, as `npm run build:bundle` does), checks the
// build is reproducible, then runs the bundled witness as a child process:
//   good attestation served at /build and verified by `verify build`; a tampered envelope rejected
//   by the verifier; an attestation of another file refused at start-up; no attestation → 404.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundle, EXTERNAL, ROOT, type BundleResult } from '../../src/release/bundle.ts';
import { sha256Hex } from '../../src/crypto/sha256.ts';
import { VERSION } from '../../src/version.ts';
import { buildInfo } from '../../src/release/build-info.ts';
import { tempDir } from '../helpers/tmp.ts';
import { spawnServe } from '../helpers/spawn-serve.ts';
import { worstCase } from '../kel-witness/offload-events.ts';

// Inside the repository, so the bundle finds better-sqlite3 in node_modules as dist/ does.
const outDir = join(ROOT, 'dist', `.test-${process.pid}-${randomBytes(4).toString('hex')}`);
const bundleFile = join(outDir, 'anchor-witness.mjs');
const srcBin = join(ROOT, 'bin', 'anchor-witness.js');
const COMMIT = 'ab'.repeat(20);
let digest = '';
let built: BundleResult;
let work: { dir: string; cleanup: () => void };
let releasePub = '';

const run = (file: string, args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [file, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 20_000 });
const aw = (args: string[], env: Record<string, string> = {}) => run(bundleFile, args, env);

const serve = (args: string[]) =>
  spawnServe(['serve', '--listen', '127.0.0.1:0', '--name', 'w.test/b', '--roles', 'anchor', '--dev', ...args], { entry: bundleFile });

before(async () => {
  built = await bundle({ outFile: bundleFile });
  digest = built.digest;
  work = tempDir('aw-build-');
  const k = aw(['keygen', '--out', join(work.dir, 'release.pem')]);
  assert.equal(k.status, 0, k.stderr);
  releasePub = k.stdout.trim();
});

after(() => {
  rmSync(outDir, { recursive: true, force: true });
  work.cleanup();
});

void test('reproducible bundle: same bytes from another build, another output path, another cwd and locale; no machine paths inside', () => {
  const bytes = readFileSync(bundleFile);
  assert.equal(sha256Hex(bytes), digest);
  assert.equal(statSync(bundleFile).mode & 0o111, 0o111, 'executable');
  // `npm run build:bundle`'s script, in a child with another cwd, time zone and locale, to another path
  const other = join(outDir, 'again', 'aw.mjs');
  // a fresh directory as cwd: never an ancestor of the clone (CI may clone under the temp dir)
  const cwd = mkdtempSync(join(tmpdir(), 'aw-bundle-cwd-'));
  const r = spawnSync(process.execPath, [join(ROOT, 'src', 'release', 'bundle.ts'), '--out', other], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, TZ: 'Pacific/Kiritimati', LANG: 'de_DE.UTF-8', LC_ALL: 'de_DE.UTF-8' },
    timeout: 60_000,
  });
  rmSync(cwd, { recursive: true, force: true });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, `${digest}  ${other}\n`);
  assert.deepEqual(readFileSync(other), bytes);
  // nothing that depends on where the clone lives or who built it
  const text = bytes.toString('utf8');
  for (const p of [ROOT + '/', homedir() + '/', tmpdir() + '/']) assert.equal(text.includes(p), false, `bundle contains ${p}`);
  // the application code is in the bundle; only better-sqlite3 (and the optional requires of
  // dependencies, not installed: debug's supports-color, pg's pg-native) is left to node_modules
  assert.match(text, /\/\/ src\/witness\/node\.ts\n/);
  assert.match(text, /\/\/ node_modules\/fastify\/fastify\.js\n/);
  assert.deepEqual(EXTERNAL, ['better-sqlite3']);
});

void test('the externals left to run time are Node built-ins, better-sqlite3 and nothing unexpected', () => {
  assert.equal(built.file, bundleFile);
  for (const x of built.externals) assert.ok(['better-sqlite3', 'supports-color', 'pg-native'].includes(x), `unexpected external ${x}`);
  assert.ok(built.inputs.includes('src/cli/bundle-entry.ts') && built.inputs.includes('src/witness/node.ts'));
  assert.ok(!built.inputs.includes('src/release/bundle.ts'), 'the bundler is not part of the bundle');
});

void test('build digest: of the running bundle, and of a file', () => {
  const self = aw(['build', 'digest']);
  assert.equal(self.status, 0, self.stderr);
  assert.equal(self.stdout, digest + '\n');
  assert.equal(aw(['build', 'digest', bundleFile]).stdout, digest + '\n');
  const fromSources = run(srcBin, ['build', 'digest']);
  assert.notEqual(fromSources.status, 0);
  assert.match(fromSources.stderr, /not running from the bundle/);
  // --version: the version, the commit (the bundle sits in this checkout's dist/) and the Node version.
  assert.equal(aw(['--version']).stdout, `anchor-witness ${VERSION} (commit ${buildInfo().commit}, Node ${process.version})\n`);
});

void test('good attestation: served at /build and verified; wrong release key → exit 1', async () => {
  const att = join(work.dir, 'good.json');
  const a = aw([
    'build',
    'attest',
    '--key',
    join(work.dir, 'release.pem'),
    '--source-commit',
    COMMIT,
    '--builder',
    'urn:test:ci',
    '--out',
    att,
  ]);
  assert.equal(a.status, 0, a.stderr);
  assert.match(a.stderr, new RegExp(`attested anchor-witness\\.mjs sha256:${digest}`));
  // the release key is never taken from AW_KEY (the witness key's variable)
  const viaEnv = aw(['build', 'attest', '--source-commit', COMMIT], { AW_KEY: join(work.dir, 'release.pem') });
  assert.notEqual(viaEnv.status, 0);
  assert.match(viaEnv.stderr, /--key/);

  const node = await serve(['--data-dir', join(work.dir, 'good'), '--build-attestation', att]);
  try {
    const res = await fetch(`${node.url}/build`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    const body = (await res.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ['version', 'running_digest', 'attestation', 'node_version']);
    assert.equal(body.version, VERSION);
    assert.equal(body.running_digest, digest);
    assert.equal(body.node_version, process.version);
    assert.deepEqual(body.attestation, JSON.parse(readFileSync(att, 'utf8')));

    const ok = aw(['verify', 'build', '--url', node.url, '--release-key', releasePub]);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, new RegExp(`^valid: .* sha256:${digest} .*source commit ${COMMIT}\\n$`));
    // from the sources, against a bundle the checker built itself (the reproducible-build check)
    const repro = run(srcBin, ['verify', 'build', '--url', node.url, '--release-key', releasePub, '--bundle', bundleFile]);
    assert.equal(repro.status, 0, repro.stderr);
    assert.match(repro.stdout, /matching the expected digest/);
    const otherBuild = aw([
      'verify',
      'build',
      '--url',
      node.url,
      '--release-key',
      releasePub,
      '--expect-digest',
      sha256Hex('another build'),
    ]);
    assert.equal(otherBuild.status, 1);
    assert.match(otherBuild.stderr, /^anchor-witness verify build: invalid: unexpected_digest: [^\n]*\n$/);

    const wrongKey = aw([
      'verify',
      'build',
      '--url',
      node.url,
      '--release-key',
      'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    ]);
    assert.equal(wrongKey.status, 1);
    assert.match(wrongKey.stderr, /^anchor-witness verify build: invalid: bad_signature: [^\n]*\n$/);
  } finally {
    assert.equal(await node.stop(), 0);
  }
  const unreachable = aw(['verify', 'build', '--url', node.url, '--release-key', releasePub, '--timeout-ms', '2000']);
  assert.equal(unreachable.status, 2);
  assert.match(unreachable.stderr, /could not check: unreachable/);
});

void test('tampered envelope: the node serves it (the digest still matches) but the verifier rejects it', async () => {
  const att = join(work.dir, 'tampered.json');
  assert.equal(aw(['build', 'attest', '--key', join(work.dir, 'release.pem'), '--source-commit', COMMIT, '--out', att]).status, 0);
  const env = JSON.parse(readFileSync(att, 'utf8')) as { payload: string };
  const statement = Buffer.from(env.payload, 'base64').toString('utf8');
  assert.ok(statement.includes('urn:anchor-witness:builder:local'));
  env.payload = Buffer.from(statement.replace('urn:anchor-witness:builder:local', 'urn:anchor-witness:builder:trusted-ci')).toString(
    'base64',
  );
  writeFileSync(att, JSON.stringify(env));

  const node = await serve(['--data-dir', join(work.dir, 'tampered'), '--build-attestation', att]);
  try {
    assert.equal((await fetch(`${node.url}/build`)).status, 200);
    const r = aw(['verify', 'build', '--url', node.url, '--release-key', releasePub]);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^anchor-witness verify build: invalid: bad_signature: [^\n]*\n$/);
  } finally {
    assert.equal(await node.stop(), 0);
  }
});

void test('mismatched digest: an attestation of another file is refused at start-up with a clear message', () => {
  const att = join(work.dir, 'other.json');
  const a = aw([
    'build',
    'attest',
    '--key',
    join(work.dir, 'release.pem'),
    '--file',
    join(ROOT, 'package.json'),
    '--source-commit',
    COMMIT,
    '--out',
    att,
  ]);
  assert.equal(a.status, 0, a.stderr);
  const dataDir = join(work.dir, 'mismatch');
  mkdirSync(dataDir);
  const r = aw([
    'serve',
    '--listen',
    '127.0.0.1:0',
    '--name',
    'w.test/b',
    '--roles',
    'anchor',
    '--dev',
    '--data-dir',
    dataDir,
    '--build-attestation',
    att,
  ]);
  assert.equal(r.status, 1);
  assert.doesNotMatch(r.stdout, /listening/);
  assert.match(
    r.stderr,
    new RegExp(
      `does not match the running bundle: it names package\\.json sha256:[0-9a-f]{64}, but this process runs anchor-witness\\.mjs with sha256:${digest} .*refusing to start`,
    ),
  );
  // from the TypeScript sources there is no running bundle to bind to
  const src = run(srcBin, [
    'serve',
    '--listen',
    '127.0.0.1:0',
    '--name',
    'w.test/b',
    '--roles',
    'anchor',
    '--dev',
    '--data-dir',
    dataDir,
    '--build-attestation',
    att,
  ]);
  assert.equal(src.status, 1);
  assert.match(src.stderr, /--build-attestation needs the bundled build/);
});

void test('no attestation: /build is 404 no_build_attestation, and the verifier says so', async () => {
  const node = await serve(['--data-dir', join(work.dir, 'none')]);
  try {
    const res = await fetch(`${node.url}/build`);
    assert.equal(res.status, 404);
    assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.equal(((await res.json()) as { code: string }).code, 'no_build_attestation');
    const r = aw(['verify', 'build', '--url', node.url, '--release-key', releasePub]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /invalid: no_build_attestation/);
    // the rest of the bundled node works
    const health = (await (await fetch(`${node.url}/health`)).json()) as { status: string; witness_name: string };
    assert.deepEqual([health.status, health.witness_name], ['ok', 'w.test/b']);
  } finally {
    assert.equal(await node.stop(), 0);
  }
});

void test("the bundle runs the KERI witness role's verification worker from its own file (a large event is receipted through it)", async () => {
  const dir = join(work.dir, 'kel');
  mkdirSync(dir);
  assert.equal(aw(['keygen', '--out', join(dir, 'kel.pem')]).status, 0);
  const node = await spawnServe(
    ['serve', '--listen', '127.0.0.1:0', '--name', 'w.test/k', '--roles', 'kel', '--dev', '--data-dir', join(dir, 'data')].concat([
      '--kel-key',
      join(dir, 'kel.pem'),
      '--verify-threads',
      '1',
    ]),
    { entry: bundleFile },
  );
  try {
    const health = (await (await fetch(`${node.url}/health`)).json()) as { keys: { kel_prefix: string } };
    const w = health.keys.kel_prefix;
    const big = worstCase(w);
    const res = await fetch(`${node.url}/receipts`, {
      method: 'POST',
      headers: { 'content-type': 'application/cesr+json', 'cesr-attachment': big.icp.att },
      body: big.icp.raw,
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.match(await res.text(), /^\{"v":"KERI10JSON[0-9a-f]{6}_","t":"rct"/);
    const metrics = await (await fetch(`${node.url}/metrics`)).text();
    assert.match(metrics, /^kel_offloaded_total\{job="submission"\} 1$/m, 'checked on a worker thread running the bundle');
  } finally {
    assert.equal(await node.stop(), 0);
  }
});
