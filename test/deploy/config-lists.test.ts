// A flag (or AW_* variable) given for a list setting replaces the config file's list whole. The
// reproduction: an ML-DSA-44 cosign key added to witness.yaml's cosign-key list was silently dropped
// because the systemd unit passed --cosign-key. Now the node logs one warning naming what it dropped,
// and the unit passes no flag that replaces a config value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem } from '../../src/crypto/ed25519.ts';
import { generateMlDsa44 } from '../../src/crypto/ml-dsa.ts';
import { signingKeyToPem } from '../../src/crypto/signing-key.ts';
import { readDocument } from '../../src/config/config-file.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { fill } from '../helpers/anchors.ts';
import { spawnServe } from '../helpers/spawn-serve.ts';
import { tempDir } from '../helpers/tmp.ts';

const DEPLOY = join(import.meta.dirname, '..', '..', 'deploy');

interface Setup {
  config: string;
  ed: string;
  mldsa: string;
}

function setup(dir: string): Setup {
  const key = join(dir, 'witness.pem');
  const ed = join(dir, 'cosign.pem');
  const mldsa = join(dir, 'cosign-mldsa.pem');
  writeNewKeyFile(key, ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(0x31))));
  writeNewKeyFile(ed, ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(0x32))));
  writeNewKeyFile(mldsa, signingKeyToPem({ algorithm: 'ml-dsa-44', ...generateMlDsa44() }));
  const config = join(dir, 'witness.yaml');
  writeFileSync(
    config,
    [
      'listen: 127.0.0.1:0',
      'name: witness.test/lists',
      'roles: [cosign]',
      `data-dir: ${join(dir, 'data')}`,
      `key: ${key}`,
      `cosign-key: [${ed}, ${mldsa}]`,
      '',
    ].join('\n'),
  );
  return { config, ed, mldsa };
}

interface LogLine {
  level: number;
  msg: string;
  setting?: string;
  by?: string;
  config_value?: string[];
  value?: string[];
}

const logLines = (stderr: string): LogLine[] =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);

async function run(args: string[], env: Record<string, string> = {}): Promise<{ vkeys: string[]; warnings: LogLine[] }> {
  const w = await spawnServe(['serve', ...args], { env });
  try {
    const health = (await (await fetch(`${w.url}/health`)).json()) as { cosign_vkeys: string[] };
    return { vkeys: health.cosign_vkeys, warnings: logLines(w.stderr()).filter((l) => l.level === 40 && l.setting !== undefined) };
  } finally {
    await w.stop();
  }
}

void test('config file alone: both cosign keys of its list are used, no warning', { timeout: 60_000 }, async () => {
  const { dir, cleanup } = tempDir('aw-lists-');
  try {
    const s = setup(dir);
    const r = await run(['--config', s.config]);
    assert.equal(r.vkeys.length, 2, 'the Ed25519 and the ML-DSA-44 key');
    assert.deepEqual(r.warnings, []);
  } finally {
    cleanup();
  }
});

void test(
  '--cosign-key on the command line replacing the file list: one warning naming the dropped ML-DSA-44 key',
  { timeout: 60_000 },
  async () => {
    const { dir, cleanup } = tempDir('aw-lists-');
    try {
      const s = setup(dir);
      const r = await run(['--config', s.config, '--cosign-key', s.ed]);
      assert.equal(r.vkeys.length, 1, 'the flag wins (documented): only its key is used');
      assert.equal(r.warnings.length, 1, JSON.stringify(r.warnings));
      const w = r.warnings[0]!;
      assert.equal(w.setting, '--cosign-key');
      assert.equal(w.by, '--cosign-key');
      assert.deepEqual(w.config_value, [s.ed, s.mldsa]);
      assert.deepEqual(w.value, [s.ed]);
      assert.ok(w.msg.includes(s.mldsa) && w.msg.includes(s.config), w.msg);
      assert.ok(!w.msg.includes(`${s.ed},`), 'only the dropped entry is named');

      // a flag that keeps every entry of the file drops nothing: no warning
      const same = await run(['--config', s.config, '--cosign-key', `${s.ed},${s.mldsa}`]);
      assert.equal(same.vkeys.length, 2);
      assert.deepEqual(same.warnings, []);
    } finally {
      cleanup();
    }
  },
);

void test('AW_COSIGN_KEY replacing the file list warns too, naming the variable', { timeout: 60_000 }, async () => {
  const { dir, cleanup } = tempDir('aw-lists-');
  try {
    const s = setup(dir);
    const r = await run(['--config', s.config], { AW_COSIGN_KEY: s.mldsa });
    assert.equal(r.vkeys.length, 1);
    assert.equal(r.warnings.length, 1);
    assert.equal(r.warnings[0]!.by, 'AW_COSIGN_KEY');
    assert.ok(r.warnings[0]!.msg.includes(s.ed));
  } finally {
    cleanup();
  }
});

void test('deploy/systemd/anchor-witness.service: every setting, the key lists included, comes from witness.yaml', () => {
  const unit = readFileSync(join(DEPLOY, 'systemd', 'anchor-witness.service'), 'utf8');
  const exec = /^ExecStart=(.*)$/m.exec(unit)![1]!;
  const config = readDocument(join(DEPLOY, 'config', 'witness.yaml')) as Record<string, unknown>;
  // no flag on ExecStart replaces a config-file value (the unit used to pass --cosign-key, --key, --data-dir)
  for (const flag of exec.matchAll(/\s--([a-z][a-z0-9-]*)/g)) {
    if (flag[1] === 'config') continue;
    assert.ok(!(flag[1]! in config), `ExecStart passes --${flag[1]!}, replacing witness.yaml's ${flag[1]!}`);
  }
  assert.match(exec, /serve --config \/etc\/anchor-witness\/witness\.yaml$/);
  // every key path of the file is a credential bound at /run/secrets
  assert.match(unit, /^BindReadOnlyPaths=%d:\/run\/secrets$/m);
  const keyPaths = [config.key, ...(config['cosign-key'] as string[])] as string[];
  for (const p of keyPaths) {
    const m = /^\/run\/secrets\/([^/]+)$/.exec(p);
    assert.ok(m !== null, `${p} is not under /run/secrets`);
    assert.match(unit, new RegExp(`^LoadCredential=${m[1]!.replace('.', '\\.')}:`, 'm'), `no LoadCredential= for ${p}`);
  }
  assert.equal(config['data-dir'], '/var/lib/anchor-witness', 'the StateDirectory (%S/anchor-witness)');
  assert.match(unit, /^StateDirectory=anchor-witness$/m);
});
