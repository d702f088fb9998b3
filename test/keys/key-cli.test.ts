// Key tools and readiness (SPEC §1.1): `keygen --format openssh` and `key to-openssh` write a 0600
// openssh-key-v1 file whose fingerprint `ssh-keygen -l -E sha256` agrees with, never overwriting;
// `key fingerprint` prints the key hex, the fingerprint and the B… prefix; `/live` and `/ready`
// answer, and `healthcheck --ready` reads `/ready`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { checkReady, readyUrl } from '../../src/cli/readiness-check.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { ed25519Fingerprint } from '../../src/keys/openssh.ts';
import { fill } from '../helpers/anchors.ts';
import { opensshMissing, requireTool } from '../helpers/external-keys.ts';
import { tempDir } from '../helpers/tmp.ts';
import { startTestWitness } from '../helpers/witness.ts';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '..', '..', 'src', 'cli', 'anchor-witness.ts');
const aw = (...args: string[]) => run(process.execPath, [CLI, ...args], { timeout: 60_000 });

void test('keygen --format openssh, key to-openssh, key fingerprint', { timeout: 120_000 }, async (t) => {
  if (!requireTool(t, await opensshMissing())) return;
  const { dir, cleanup } = tempDir('aw-keycli-');
  try {
    const out = join(dir, 'new.openssh');
    const printed = (await aw('keygen', '--format', 'openssh', '--out', out)).stdout.trim();
    assert.equal(statSync(out).mode & 0o777, 0o600);
    assert.equal((await run('ssh-keygen', ['-l', '-E', 'sha256', '-f', out])).stdout.split(' ')[1], printed);
    await assert.rejects(aw('keygen', '--format', 'openssh', '--out', out), /already exists/);

    const key = ed25519KeyFromSeed(fill(0x21));
    const pub = ed25519PublicKeyBytes(key);
    const pem = join(dir, 'k.pem');
    writeNewKeyFile(pem, ed25519PrivateKeyToPem(key));
    const ssh = join(dir, 'k.openssh');
    assert.equal((await aw('key', 'to-openssh', '--in', pem, '--out', ssh)).stdout.trim(), ed25519Fingerprint(pub));
    // ssh-keygen reads the private key file and derives the same public key.
    assert.match((await run('ssh-keygen', ['-y', '-f', ssh])).stdout, /^ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI/);
    assert.equal((await run('ssh-keygen', ['-l', '-E', 'sha256', '-f', ssh])).stdout.split(' ')[1], ed25519Fingerprint(pub));

    const lines = (await aw('key', 'fingerprint', pem)).stdout.trim().split('\n');
    assert.equal(lines[0], `key ${encodeHex(pub)}`);
    assert.equal(lines[1], `fingerprint ${ed25519Fingerprint(pub)}`);
    assert.match(lines[2]!, /^prefix B[A-Za-z0-9_-]{43}$/);
    await assert.rejects(aw('key', 'fingerprint', 'pkcs11:object=x?module-path=/m.so&pin-value=1'), /pin-value is refused/);
  } finally {
    cleanup();
  }
});

void test('/live, /ready and healthcheck --ready', { timeout: 60_000 }, async () => {
  assert.equal(readyUrl('http://h:1/health').toString(), 'http://h:1/ready');
  assert.equal(readyUrl('http://h:1/base/').toString(), 'http://h:1/base/ready');
  const { dir, cleanup } = tempDir('aw-ready-');
  try {
    const w = await startTestWitness(dir, { parties: [] });
    try {
      const live = await fetch(`${w.url}/live`);
      assert.equal(live.status, 200);
      assert.deepEqual(await live.json(), { live: true });
      const ready = await fetch(`${w.url}/ready`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { ready: true });
      assert.deepEqual(await checkReady(w.url, 5_000), { healthy: true, line: `ready ${w.url}/ready` });
      const doc = (await (await fetch(`${w.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
      assert.ok('/live' in doc.paths && '/ready' in doc.paths, 'both routes are in /openapi.json');
    } finally {
      await w.close();
    }
    const down = await checkReady('http://127.0.0.1:9/', 2_000);
    assert.equal(down.healthy, false);
  } finally {
    cleanup();
  }
});

void test(
  'serve --signer-start-timeout: an agent key that never appears fails start-up after that long (exit 1), not the 30 s default, and never exits 0 while it waits',
  { timeout: 120_000 },
  async () => {
    const { dir, cleanup } = tempDir('aw-signer-flags-');
    try {
      const fingerprint = ed25519Fingerprint(ed25519PublicKeyBytes(ed25519KeyFromSeed(fill(0x31))));
      const started = Date.now();
      const r = await run(
        process.execPath,
        [
          CLI,
          'serve',
          '--data-dir',
          join(dir, 'data'),
          '--name',
          'w.example/flags',
          '--roles',
          'anchor',
          '--listen',
          '127.0.0.1:0',
          '--key',
          `ssh-agent:${fingerprint}`,
          '--signer-start-timeout',
          '2s',
          '--signer-timeout',
          '1s',
          '--signer-max-pending',
          '8',
        ],
        { timeout: 60_000, env: { ...process.env, SSH_AUTH_SOCK: join(dir, 'no-agent.sock') } },
      ).then(
        () => ({ code: 0, stderr: '' }),
        (e: unknown) => {
          const f = e as { code?: number; stderr?: string };
          return { code: f.code ?? -1, stderr: f.stderr ?? '' };
        },
      );
      const elapsed = Date.now() - started;
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /unavailable at start/);
      assert.ok(elapsed < 25_000, `start-up gave up after ${elapsed} ms: --signer-start-timeout 2s was not applied`);
      // a bad value is refused by the flag's own parser
      await assert.rejects(
        aw('serve', '--signer-max-pending', '0', '--dev', '--data-dir', join(dir, 'd2'), '--name', 'w.example/x'),
        /signer-max-pending/,
      );
    } finally {
      cleanup();
    }
  },
);
