// `anchor-witness serve` and POST /sign-subtree (SPEC §5.4, §9) over a real child process: served
// with an ML-DSA-44 --cosign-key, absent with --no-sign-subtree, its own rate from
// AW_SIGN_SUBTREE_RATE, a bad --sign-subtree-rate refused at start-up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnServe } from '../helpers/spawn-serve.ts';
import { tempDir } from '../helpers/tmp.ts';
import { ed25519NoteSigner } from '../../src/note/vkey.ts';
import { logKeyC } from '../helpers/cosign-harness.ts';

const bin = join(import.meta.dirname, '..', '..', 'bin', 'anchor-witness.js');
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 20_000 });

async function statuses(url: string, n: number): Promise<{ status: number; type: string | null; retryAfter: string | null }[]> {
  const out = [];
  for (let i = 0; i < n; i++) {
    const r = await fetch(`${url}/sign-subtree`, { method: 'POST', body: 'subtree 3 5\n' });
    await r.text();
    out.push({ status: r.status, type: r.headers.get('content-type'), retryAfter: r.headers.get('retry-after') });
  }
  return out;
}

void test('serve: /sign-subtree with an ML-DSA-44 cosign key and its own rate; --no-sign-subtree removes it; a bad rate refuses start-up', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const key = join(dir, 'w.pem');
    const pq = join(dir, 'pq.pem');
    assert.equal(run(['keygen', '--out', key]).status, 0);
    const g = run(['keygen', '--type', 'ml-dsa-44', '--out', pq]);
    assert.equal(g.status, 0, g.stderr);
    const logs = join(dir, 'logs.json');
    writeFileSync(
      logs,
      JSON.stringify({
        logs: [{ origin: 'example.com/mtc-log', keys: [ed25519NoteSigner('example.com/mtc-log', logKeyC).verifier.vkey] }],
      }),
    );
    const base = ['serve', '--listen', '127.0.0.1:0', '--data-dir', join(dir, 'data'), '--name', 'w.test/a', '--key', key];
    const cosign = [...base, '--roles', 'cosign', '--cosign-key', pq, '--logs', logs];

    // Served, with the bucket from the variable (flags and variables map alike, test/cli/options.test.ts):
    // burst 2, then 429 with Retry-After.
    let s = await spawnServe(cosign, { env: { AW_SIGN_SUBTREE_RATE: '0.5:2' } });
    try {
      const r = await statuses(s.url, 3);
      assert.deepEqual(
        r.map((x) => x.status),
        [400, 400, 429],
      );
      assert.equal(r[0]!.type, 'text/plain; charset=utf-8');
      assert.equal(r[2]!.retryAfter, '2');
    } finally {
      assert.equal(await s.stop(), 0);
    }

    s = await spawnServe([...cosign, '--no-sign-subtree']);
    try {
      const [r] = await statuses(s.url, 1);
      assert.equal(r!.status, 404);
      assert.match(r!.type ?? '', /^application\/problem\+json/);
    } finally {
      assert.equal(await s.stop(), 0);
    }

    const bad = run([...cosign, '--sign-subtree-rate', 'fast']);
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /rate limit must be RPS\[:BURST\]/);
  } finally {
    cleanup();
  }
});
