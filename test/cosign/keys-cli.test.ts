// Cosign keys from the command line (SPEC §5.1), over real child processes: keygen --type/--name,
// serve with repeatable --cosign-key (Ed25519 and ML-DSA-44, type from the PKCS#8 OID), /health's
// cosign_vkeys and cosign_vkey, the status page, and the start-up refusals (the cosign key = the
// witness key refusal: test/witness/cli.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { signingKeyFromPem } from '../../src/crypto/signing-key.ts';
import { parseVkey } from '../../src/note/vkey.ts';
import { spawnServe } from '../helpers/spawn-serve.ts';
import { tempDir } from '../helpers/tmp.ts';

const bin = join(import.meta.dirname, '..', '..', 'bin', 'anchor-witness.js');
const run = (args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 20_000 });

void test('keygen --type ml-dsa-44: the 2626-byte both form, 0600, public key hex or with --name the 0x06 vkey', () => {
  const { dir, cleanup } = tempDir();
  try {
    const a = join(dir, 'a.pem');
    const r = run(['keygen', '--type', 'ml-dsa-44', '--out', a]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^[0-9a-f]{2624}\n$/);
    assert.equal(statSync(a).mode & 0o777, 0o600);
    const k = signingKeyFromPem(readFileSync(a, 'utf8'));
    assert.equal(k.algorithm, 'ml-dsa-44');
    assert.equal(k.privateKey.export({ format: 'der', type: 'pkcs8' }).length, 2626);
    assert.equal(Buffer.from(k.publicKey).toString('hex'), r.stdout.trim());
    const b = run(['keygen', '--type', 'ml-dsa-44', '--name', 'w.test/a', '--out', join(dir, 'b.pem')]);
    assert.equal(b.status, 0, b.stderr);
    const v = parseVkey(b.stdout.trim());
    assert.equal(v.type, 0x06);
    assert.equal(v.name, 'w.test/a');
    assert.notEqual(run(['keygen', '--type', 'ml-dsa-44', '--name', 'bad name', '--out', join(dir, 'x.pem')]).status, 0);
  } finally {
    cleanup();
  }
});

void test('serve with --cosign-key ml-dsa, ed25519: /health cosign_vkeys in order, cosign_vkey the Ed25519 one; refusals', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const w = join(dir, 'w.pem');
    const ed = join(dir, 'ed.pem');
    const ml = join(dir, 'ml.pem');
    run(['keygen', '--out', w]);
    const edVkey = run(['keygen', '--type', 'ed25519', '--name', 'w.test/a', '--out', ed]).stdout.trim();
    assert.equal(parseVkey(edVkey).type, 0x04);
    const mlVkey = run(['keygen', '--type', 'ml-dsa-44', '--name', 'w.test/a', '--out', ml]).stdout.trim();
    writeFileSync(join(dir, 'logs.json'), JSON.stringify({ logs: [] }));
    const base = [
      'serve',
      '--listen',
      '127.0.0.1:0',
      '--data-dir',
      join(dir, 'data'),
      '--name',
      'w.test/a',
      '--key',
      w,
      '--roles',
      'cosign',
    ];
    const fails = (args: string[], pattern: RegExp) => {
      const r = spawnSync(process.execPath, [bin, ...base, ...args], { encoding: 'utf8', timeout: 20_000 });
      assert.notEqual(r.status, 0);
      assert.match(r.stderr, pattern);
    };
    fails(['--cosign-key', ml, '--cosign-key', ml], /same key/);
    const p256 = join(dir, 'p256.pem');
    writeFileSync(p256, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }), {
      mode: 0o600,
    });
    fails(['--cosign-key', p256], /unsupported key type/);
    const s = await spawnServe([...base, '--cosign-key', ml, '--cosign-key', ed, '--logs', join(dir, 'logs.json')]);
    try {
      const health = (await (await fetch(`${s.url}/health`)).json()) as { keys: { cosign_vkey: string | null }; cosign_vkeys: string[] };
      assert.deepEqual(health.cosign_vkeys, [mlVkey, edVkey]);
      assert.equal(health.keys.cosign_vkey, edVkey);
      const page = await (await fetch(`${s.url}/`)).text();
      assert.ok(page.includes(edVkey.slice(0, 40)) && page.includes(mlVkey.slice(0, 40)), 'the status page lists every cosign key');
    } finally {
      await s.stop();
    }
  } finally {
    cleanup();
  }
});
