// Operations: `anchor-witness healthcheck` (exit 0 healthy, 1 not — for a witness and a bridge;
// refused, timed out, wrong status, wrong body), and the deployment files in deploy/: the example
// configs parse with the product's own parsers and `serve --config` starts from the example; every
// flag the systemd units and the env file pass exists; the units carry the hardening options (and
// `systemd-analyze verify` accepts them where it exists); the Dockerfile and compose file keep the
// container non-root, read-only, with the data on a volume and a health probe on the served port.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import { parseRegistry } from '../../src/anchor/registry.ts';
import { startBridge } from '../../src/bridge/node.ts';
import { parseTrustedRoots } from '../../src/bridge/trusted-roots.ts';
import { parseLogsConfig } from '../../src/cosign/logs.ts';
import { readDocument } from '../../src/config/config-file.ts';
import { figures, httpRequest, REPO } from '../helpers/rel-common.ts';
import { makeDeployment, startServe } from '../helpers/rel-node.ts';
import { tempDir } from '../helpers/tmp.ts';

const DEPLOY = join(REPO, 'deploy');
const AW = join(REPO, 'bin', 'anchor-witness.js');
const TB = join(REPO, 'bin', 'token-bridge.js');

function run(
  bin: string,
  args: readonly string[],
  timeoutMs = 30_000,
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : null, stdout, stderr, ms: performance.now() - t0 });
    });
  });
}

/** A stub HTTP server answering /health with `status` and `body` (or never, when `hang`). */
async function stub(status: number, body: string, hang = false): Promise<{ url: string; close: () => void }> {
  const server = http.createServer((_req, res) => {
    if (hang) return;
    res.writeHead(status, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

void test(
  'anchor-witness healthcheck: exit 0 for a healthy witness or bridge, 1 for every kind of unhealthy',
  { timeout: 120_000 },
  async (t) => {
    const { dir, cleanup } = tempDir('aw-rel-hc-');
    const d = makeDeployment(dir);
    const w = await startServe([
      'serve',
      '--listen',
      '127.0.0.1:0',
      '--data-dir',
      d.dataDir,
      '--key',
      d.keyFile,
      '--name',
      'witness.rel/hc',
      '--roles',
      'anchor',
      '--registry',
      d.registryFile,
    ]);
    const bridge = await startBridge(
      { host: '127.0.0.1', port: 0, dev: true, keyDir: join(dir, 'bkeys'), alg: 'ES256' },
      pino({ level: 'silent' }),
    );
    const down = await stub(503, '{"status":"ok"}');
    const notJson = await stub(200, '<html>');
    // SPEC §1.1 (rev 4): healthcheck is a liveness check, `degraded` (a store or signer down) is alive.
    const degraded = await stub(200, '{"status":"degraded","store":{"kind":"postgres","state":"down"}}');
    const other = await stub(200, '{"status":"starting"}');
    const hang = await stub(200, '', true);
    const closed = await stub(200, '{}');
    closed.close();
    try {
      const cases: [string, string[], number][] = [
        ['witness base URL', ['--url', w.url], 0],
        ['witness /health URL', ['--url', `${w.url}/health`], 0],
        ['bridge', ['--url', bridge.url], 0],
        ['HTTP 503', ['--url', down.url], 1],
        ['not JSON', ['--url', notJson.url], 1],
        ['status degraded', ['--url', degraded.url], 0],
        ['status neither ok nor degraded', ['--url', other.url], 1],
        ['no answer', ['--url', hang.url, '--timeout-ms', '500'], 1],
        ['refused', ['--url', closed.url], 1],
        ['not http', ['--url', 'ftp://example.org'], 1],
      ];
      const results = await Promise.all(
        cases.map(async ([name, args, want]) => ({ name, want, r: await run(AW, ['healthcheck', ...args]) })),
      );
      for (const { name, want, r } of results) {
        assert.equal(r.code, want, `${name}: exit ${r.code}; ${r.stdout}${r.stderr}`);
        if (want === 0) assert.match(r.stdout, /^healthy http:\/\/127\.0\.0\.1:\d+\/health /);
        else assert.match(r.stderr, /unhealthy|--url/);
      }
      assert.match(results.find((x) => x.name === 'status degraded')!.r.stdout, /, degraded: the postgres store is down\)\n$/);
      const timeout = results.find((x) => x.name === 'no answer')!.r;
      assert.match(timeout.stderr, /no answer within 500 ms/);
      const quiet = await run(AW, ['healthcheck', '--url', down.url, '--quiet']);
      assert.equal(quiet.code, 1);
      assert.equal(quiet.stdout + quiet.stderr, '');
      figures(
        t,
        'operations/healthcheck',
        Object.fromEntries(results.map(({ name, r }) => [name, { exit: r.code, ms: Math.round(r.ms) }])),
      );
    } finally {
      for (const s of [down, notJson, degraded, other, hang]) s.close();
      await bridge.close();
      await w.stop();
      cleanup();
    }
  },
);

void test(
  'deploy/config: the examples parse with the product parsers; serve --config starts from the example',
  { timeout: 60_000 },
  async () => {
    const registry = parseRegistry(readDocument(join(DEPLOY, 'config', 'registry.yaml')));
    assert.equal(registry.parties.size, 1);
    const logs = parseLogsConfig(readDocument(join(DEPLOY, 'config', 'logs.yaml')));
    assert.equal(logs.length, 1);
    parseTrustedRoots(readDocument(join(DEPLOY, 'config', 'trusted-roots.yaml')));

    // witness.yaml, with only the paths that must point into this test's directory overridden by flags
    const { dir, cleanup } = tempDir('aw-rel-conf-');
    try {
      const d = makeDeployment(dir);
      const w = await startServe([
        'serve',
        '--config',
        join(DEPLOY, 'config', 'witness.yaml'),
        '--listen',
        '127.0.0.1:0',
        '--data-dir',
        d.dataDir,
        '--key',
        d.keyFile,
        '--cosign-key',
        d.cosignKeyFile,
        '--registry',
        join(DEPLOY, 'config', 'registry.yaml'),
        '--logs',
        join(DEPLOY, 'config', 'logs.yaml'),
      ]);
      try {
        const h = JSON.parse((await httpRequest(`${w.url}/health`)).text) as { witness_name: string; roles: string[] };
        assert.equal(h.witness_name, 'witness.example.org/w1');
        assert.deepEqual(h.roles, ['anchor', 'cosign']);
      } finally {
        await w.stop();
      }
    } finally {
      cleanup();
    }
  },
);

function flagsOf(text: string): string[] {
  return [...new Set([...text.matchAll(/(?:^|\s)(--[a-z][a-z0-9-]*)/g)].map((m) => m[1]!))];
}

void test(
  'deploy/systemd and env file: every flag exists; hardening options set; systemd-analyze verify passes',
  { timeout: 60_000 },
  async (t) => {
    const [awHelp, tbHelp] = await Promise.all([run(AW, ['serve', '--help']), run(TB, ['serve', '--help'])]);
    const units = { 'anchor-witness.service': awHelp.stdout, 'token-bridge.service': tbHelp.stdout };
    const hardening = [
      'NoNewPrivileges=yes',
      'ProtectSystem=strict',
      'ProtectHome=yes',
      'PrivateTmp=yes',
      'PrivateDevices=yes',
      'ProtectKernelTunables=yes',
      'ProtectKernelModules=yes',
      'ProtectControlGroups=yes',
      'RestrictAddressFamilies=',
      'RestrictNamespaces=yes',
      'LockPersonality=yes',
      'SystemCallFilter=@system-service',
      'CapabilityBoundingSet=',
      'UMask=0077',
      'DynamicUser=yes',
      'StateDirectory=',
      'LoadCredential=',
    ];
    for (const [unit, help] of Object.entries(units)) {
      const text = readFileSync(join(DEPLOY, 'systemd', unit), 'utf8');
      const exec = /^ExecStart=(.*)$/m.exec(text)![1]!;
      for (const flag of flagsOf(exec)) assert.ok(help.includes(flag), `${unit}: ${flag} is not a serve flag`);
      for (const h of hardening)
        assert.match(text, new RegExp(`^${h.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm'), `${unit}: ${h} missing`);
      assert.doesNotMatch(text, /^MemoryDenyWriteExecute=yes/m, `${unit}: V8's JIT needs W+X pages`);
    }
    for (const line of readFileSync(join(DEPLOY, 'config', 'token-bridge.env'), 'utf8').split('\n')) {
      const m = /^TB_([A-Z_]+)=/.exec(line);
      if (m === null) continue;
      const flag = `--${m[1]!.toLowerCase().replaceAll('_', '-')}`;
      assert.ok(tbHelp.stdout.includes(flag), `token-bridge.env: TB_${m[1]!} names no flag (${flag})`);
    }
    // the witness config keys are serve flags too (serve --config refuses unknown ones; checked above by starting it)
    let verified = 'systemd-analyze not available';
    if (spawnSync('systemd-analyze', ['--version'], { stdio: 'ignore' }).status === 0) {
      const { dir, cleanup } = tempDir('aw-rel-units-');
      try {
        mkdirSync(join(dir, 'u'));
        for (const unit of Object.keys(units)) {
          copyFileSync(join(DEPLOY, 'systemd', unit), join(dir, 'u', unit));
          // the node binary of a real host is not here: let verify check everything else
          writeFileSync(join(dir, 'u', unit), readFileSync(join(dir, 'u', unit), 'utf8').replaceAll('/usr/bin/node ', '/bin/true '));
        }
        const r = spawnSync('systemd-analyze', ['verify', ...Object.keys(units).map((u) => join(dir, 'u', u))], { encoding: 'utf8' });
        assert.equal(r.status, 0, r.stderr);
        assert.equal(r.stderr.trim(), '', r.stderr);
        verified = 'systemd-analyze verify: clean';
      } finally {
        cleanup();
      }
    }
    figures(t, 'operations/systemd', { units: Object.keys(units), hardening_options_checked: hardening.length, verify: verified });
  },
);

void test('deploy/Dockerfile and compose: non-root, read-only root FS, data volume, probe on the served port', () => {
  const df = readFileSync(join(DEPLOY, 'Dockerfile'), 'utf8');
  const stages = df.split(/^FROM /m).slice(1);
  assert.equal(stages.length, 2, 'a build stage and a runtime stage');
  assert.match(df, /^ARG NODE_IMAGE=node:24-/m);
  const runtime = stages[1]!;
  assert.match(runtime, /^USER node$/m);
  assert.doesNotMatch(runtime, /^USER (root|0)\b/m);
  assert.doesNotMatch(runtime, /npm (ci|install)/, 'the runtime stage installs nothing');
  assert.match(runtime, /^VOLUME \["\/var\/lib\/anchor-witness"\]$/m);
  assert.match(runtime, /^HEALTHCHECK .*\n?.*healthcheck", "--url", "http:\/\/127\.0\.0\.1:8420"/m);
  assert.match(runtime, /^EXPOSE 8420$/m);
  const config = readDocument(join(DEPLOY, 'config', 'witness.yaml')) as Record<string, unknown>;
  assert.equal(config.listen, '0.0.0.0:8420', 'the probe and EXPOSE name the configured port');
  assert.equal(config['data-dir'], '/var/lib/anchor-witness', 'the data dir is the volume');
  const compose = readDocument(join(DEPLOY, 'docker-compose.yml')) as { services: Record<string, Record<string, unknown>> };
  const svc = compose.services['anchor-witness']!;
  assert.equal(svc.read_only, true);
  assert.deepEqual(svc.cap_drop, ['ALL']);
  assert.ok((svc.security_opt as string[]).includes('no-new-privileges:true'));
  assert.ok((svc.volumes as string[]).some((v) => v.endsWith(':/var/lib/anchor-witness')));
  assert.ok((svc.tmpfs as string[]).some((v) => v.startsWith('/tmp')));
  const ignore = readFileSync(join(DEPLOY, 'Dockerfile.dockerignore'), 'utf8');
  assert.match(ignore, /^\*\*$/m, 'the build context starts from nothing');
});
