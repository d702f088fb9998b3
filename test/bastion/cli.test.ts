// `anchor-witness serve --no-listen --bastion …` (SPEC §5.6, §9): the start-up lines, the
// healthcheck from the state file in --data-dir, the environment variables, and the start-up
// refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem } from '../../src/crypto/ed25519.ts';
import { bastionKeyHash } from '../../src/crypto/bastion-certificate.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { bastionHealth, bastionStatePath } from '../../src/bastion/state-file.ts';
import { BastionConfigError } from '../../src/bastion/errors.ts';
import { NodeKeyError } from '../../src/keys/errors.ts';
import { KeyFileError } from '../../src/keys/errors.ts';
import { ConfigError } from '../../src/witness/errors.ts';
import type { WitnessConfig } from '../../src/witness/node.ts';
import { cosignKeyC } from '../helpers/cosign-harness.ts';
import { startFakeBastion } from '../helpers/fake-bastion.ts';
import { fill } from '../helpers/anchors.ts';
import { startTestWitness } from '../helpers/witness.ts';
import { tempDir } from '../helpers/tmp.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'anchor-witness.js');
const bastionKey = ed25519KeyFromSeed(fill(0x78));
const KH = bastionKeyHash(bastionKey);

function keyFiles(dir: string): { key: string; cosign: string; bastion: string } {
  const files = { key: join(dir, 'witness.pem'), cosign: join(dir, 'cosign.pem'), bastion: join(dir, 'bastion.pem') };
  writeNewKeyFile(files.key, ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(0x01))));
  writeNewKeyFile(files.cosign, ed25519PrivateKeyToPem(cosignKeyC));
  writeNewKeyFile(files.bastion, ed25519PrivateKeyToPem(bastionKey));
  return files;
}

function healthcheck(dataDir: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [BIN, 'healthcheck', '--data-dir', dataDir], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

void test('--no-listen: "bastion key hash", then "serving via bastion HOST:PORT" once connected; healthcheck --data-dir follows the connection', async () => {
  const t = tempDir('aw-bastion-cli-');
  const fake = await startFakeBastion();
  const caFile = join(t.dir, 'ca.pem');
  writeFileSync(caFile, fake.ca);
  const files = keyFiles(t.dir);
  const dataDir = join(t.dir, 'data');
  // --bastion and --no-listen come from the environment (SPEC §9: AW_ + the flag).
  const child = spawn(
    process.execPath,
    [
      BIN,
      'serve',
      '--data-dir',
      dataDir,
      '--key',
      files.key,
      '--cosign-key',
      files.cosign,
      '--name',
      'witness.test/w1',
      '--roles',
      'cosign',
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, AW_BASTION: fake.addr, AW_BASTION_KEY: files.bastion, AW_BASTION_CA: caFile, AW_NO_LISTEN: '1' },
    },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (c: string) => (stderr += c));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      resolve(code);
    }),
  );
  try {
    const lines: string[] = [];
    const rl = createInterface({ input: child.stdout });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`no serving line; stdout ${JSON.stringify(lines)}; stderr ${stderr}`));
      }, 20_000);
      rl.on('line', (l) => {
        lines.push(l);
        if (l.startsWith('serving via')) {
          clearTimeout(timer);
          resolve();
        }
      });
      void exited.then((code) => {
        reject(new Error(`exited ${code}: ${stderr}`));
      });
    });
    assert.deepEqual(lines, [`bastion key hash ${KH}`, `serving via bastion ${fake.addr}`]);
    assert.ok(!lines.some((l) => l.startsWith('listening on')));
    const up = healthcheck(dataDir);
    assert.equal(up.status, 0, up.out);
    assert.match(up.out, new RegExp(`^healthy .*connected: ${fake.addr}`));
    // It serves through the bastion.
    const health = await fake.request(KH, { method: 'GET', path: '/health' });
    assert.equal(health.status, 200);
    assert.deepEqual((JSON.parse(health.body.toString()) as { roles: unknown }).roles, ['cosign']);
    // The bastion goes away: the state file says so at once.
    await fake.close();
    const deadline = Date.now() + 10_000;
    let down = healthcheck(dataDir);
    while (down.status === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      down = healthcheck(dataDir);
    }
    assert.equal(down.status, 1, down.out);
    assert.match(down.out, /unhealthy .*no bastion connected/);
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    // A state file nobody refreshes goes stale: a stopped or stuck node is unhealthy.
    assert.equal(bastionHealth(dataDir, Date.now() + 31_000).healthy, false);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await fake.close().catch(() => undefined);
    t.cleanup();
  }
});

void test('bastion state file: healthy when fresh with one bastion connected, else unhealthy with the reason', () => {
  const t = tempDir('aw-bastion-state-');
  try {
    const now = Date.UTC(2026, 10, 25, 21, 0, 0);
    assert.match(bastionHealth(t.dir, now).line, /no bastion state/);
    const doc = (updated: string, bastions: unknown): void => {
      writeFileSync(
        bastionStatePath(t.dir),
        JSON.stringify({ v: 'anchor-witness/bastion-state/v1', pid: 1, updated_at: updated, key_hash: KH, bastions }),
      );
    };
    doc('2026-11-25T20:59:50Z', [
      { addr: 'a.example:443', connected: true },
      { addr: 'b.example:443', connected: false },
    ]);
    const ok = bastionHealth(t.dir, now);
    assert.equal(ok.healthy, true);
    assert.match(ok.line, /connected: a\.example:443; down: b\.example:443/);
    doc('2026-11-25T20:59:20Z', [{ addr: 'a.example:443', connected: true }]);
    assert.match(bastionHealth(t.dir, now).line, /unhealthy .*last updated 40 s ago/);
    doc('2026-11-25T20:59:50Z', [{ addr: 'a.example:443', connected: false }]);
    assert.equal(bastionHealth(t.dir, now).healthy, false);
    writeFileSync(bastionStatePath(t.dir), '{"v":"other"}');
    assert.match(bastionHealth(t.dir, now).line, /not a anchor-witness\/bastion-state\/v1 document/);
  } finally {
    t.cleanup();
  }
});

void test('start-up refusals: --no-listen rules, --bastion-key required, distinct and 0600, addresses, --bastion-ca', async () => {
  const t = tempDir('aw-bastion-refuse-');
  try {
    const files = keyFiles(t.dir);
    const base: Partial<WitnessConfig> = {
      roles: ['cosign'],
      cosignKeyFiles: [files.cosign],
      bastions: ['localhost:1'],
      bastionKeyFile: files.bastion,
    };
    const refused = async (over: Partial<WitnessConfig>, check: (e: unknown) => boolean): Promise<void> => {
      await assert.rejects(startTestWitness(t.dir, { parties: [] }, { ...base, ...over }), check);
    };
    const config = (code: string) => (e: unknown) => e instanceof ConfigError && e.code === code;
    const bastion = (code: string) => (e: unknown) => e instanceof BastionConfigError && e.code === code;
    const keys = (code: string) => (e: unknown) => e instanceof NodeKeyError && e.code === code;
    await refused({ noListen: true, bastions: [] }, config('invalid_no_listen'));
    await refused({ noListen: true, roles: ['anchor', 'cosign'] }, config('invalid_no_listen'));
    await refused({ bastionKeyFile: undefined }, keys('key_required'));
    await refused({ bastionKeyFile: files.cosign }, keys('bastion_key_reused'));
    await refused({ bastionKeyFile: files.key }, keys('bastion_key_reused'));
    await refused({ bastions: ['localhost'] }, bastion('invalid_bastion'));
    await refused({ bastions: ['localhost:0'] }, bastion('invalid_bastion'));
    await refused({ bastions: ['::1:443'] }, bastion('invalid_bastion'));
    await refused({ bastions: ['localhost:443', 'LOCALHOST:443'] }, bastion('invalid_bastion'));
    const garbage = join(t.dir, 'garbage.pem');
    writeFileSync(garbage, 'not a certificate');
    await refused({ bastionCaFile: garbage }, bastion('invalid_bastion_ca'));
    const open = join(t.dir, 'open.pem');
    writeNewKeyFile(open, ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(0x79))));
    chmodSync(open, 0o644);
    await refused({ bastionKeyFile: open }, (e) => e instanceof KeyFileError && e.code === 'key_permissions');
  } finally {
    t.cleanup();
  }
});

void test('--no-listen as a flag and as a config-file setting reaches the same start-up rule', () => {
  const t = tempDir('aw-bastion-flags-');
  try {
    const files = keyFiles(t.dir);
    const common = [
      'serve',
      '--data-dir',
      join(t.dir, 'data'),
      '--key',
      files.key,
      '--cosign-key',
      files.cosign,
      '--name',
      'witness.test/w1',
    ];
    const flag = spawnSync(process.execPath, [BIN, ...common, '--no-listen'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(flag.status, 1);
    assert.match(flag.stderr, /--no-listen needs at least one --bastion and --roles cosign alone/);
    const config = join(t.dir, 'config.json');
    writeFileSync(config, JSON.stringify({ 'no-listen': true, bastion: ['localhost:1'] })); // roles: anchor,cosign
    const fromFile = spawnSync(process.execPath, [BIN, ...common, '--config', config], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(fromFile.status, 1);
    assert.match(fromFile.stderr, /--no-listen needs at least one --bastion and --roles cosign alone/);
  } finally {
    t.cleanup();
  }
});
