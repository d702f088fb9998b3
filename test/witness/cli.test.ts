// `anchor-witness keygen` and `serve` start-up refusals (SPEC §1, §9), over real child processes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnServe } from '../helpers/spawn-serve.ts';
import { tempDir } from '../helpers/tmp.ts';

const bin = join(import.meta.dirname, '..', '..', 'bin', 'anchor-witness.js');
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 20_000 });

const serve = (args: string[], env: Record<string, string> = {}) => spawnServe(['serve', ...args], { env });

void test('keygen writes a 0600 key once and prints its public key', () => {
  const { dir, cleanup } = tempDir();
  try {
    const out = join(dir, 'k.pem');
    const r = run(['keygen', '--out', out]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^[0-9a-f]{64}\n$/);
    assert.equal(statSync(out).mode & 0o777, 0o600);
    const again = run(['keygen', '--out', out]);
    assert.notEqual(again.status, 0);
    assert.match(again.stderr, /refusing to overwrite/);
    // the flag from the environment (SPEC §9)
    const viaEnv = run(['keygen'], { AW_OUT: join(dir, 'env.pem') });
    assert.equal(viaEnv.status, 0, viaEnv.stderr);
  } finally {
    cleanup();
  }
});

void test('serve refuses: missing key, group-readable key, bad name, cosign key = witness key, second process, store of another key', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const key = join(dir, 'w.pem');
    const key2 = join(dir, 'w2.pem');
    assert.equal(run(['keygen', '--out', key]).status, 0);
    assert.equal(run(['keygen', '--out', key2]).status, 0);
    const base = ['--listen', '127.0.0.1:0', '--data-dir', join(dir, 'data'), '--roles', 'anchor'];
    const fails = (args: string[], pattern: RegExp, env: Record<string, string> = {}) => {
      const r = run(['serve', ...base, ...args], env);
      assert.notEqual(r.status, 0);
      assert.match(r.stderr, pattern);
    };
    fails(['--name', 'w.test/a'], /missing required flag: --key <file>/);
    fails(['--name', 'w.test/a', '--key', join(dir, 'missing.pem')], /no such file/);
    fails(['--name', 'no-dot/a', '--key', key], /name/i);
    fails(['--name', 'w.test/a+b', '--key', key], /name/i);
    fails(['--name', 'w.test/a', '--key', key, '--roles', 'anchor,cosign', '--cosign-key', key], /cosign key must differ/);
    fails(['--name', 'w.test/a', '--key', key, '--roles', 'anchor,bogus'], /unknown role/);
    fails(['--name', 'w.test/a', '--key', key, '--roles', 'anchor,kel'], /role kel needs --kel-key/);
    chmodSync(key2, 0o640);
    fails(['--name', 'w.test/a', '--key', key2], /accessible by group or others/);
    chmodSync(key2, 0o600);

    // Flags from the environment and from a config file.
    writeFileSync(join(dir, 'config.yaml'), `name: w.test/a\nroles: [anchor]\nmax-in-flight: 8\n`);
    const first = await serve([...base.filter((a) => a !== '--roles' && a !== 'anchor'), '--config', join(dir, 'config.yaml')], {
      AW_KEY: key,
    });
    try {
      const health = (await (await fetch(`${first.url}/health`)).json()) as { witness_name: string; roles: string[] };
      assert.equal(health.witness_name, 'w.test/a');
      assert.deepEqual(health.roles, ['anchor']);
      // a second process on the same store is refused at once
      fails(['--name', 'w.test/a', '--key', key], /in use by another process/);
    } finally {
      assert.equal(await first.stop(), 0);
    }
    // the store is bound to the first key and name
    fails(['--name', 'w.test/a', '--key', key2], /bound to witness_key/);
    fails(['--name', 'w.test/b', '--key', key], /bound to name/);
  } finally {
    cleanup();
  }
});
