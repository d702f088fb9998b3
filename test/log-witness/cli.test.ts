// `anchor-witness serve --log-witnesses FILE [--log-witness-interval D] [--log-witness-alert-lag D]`
// (SPEC §4.1, §9) over real child processes: a bad file or duration refuses start-up; the flags
// (and their AW_ variables) reach the node: a witness that never answers shows in /health with a
// warning once it is further behind than the alert lag, status still ok.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519PublicKeyBytes, generateEd25519 } from '../../src/crypto/ed25519.ts';
import { SIG_TYPE_COSIGNATURE_V1 } from '../../src/note/signed-note.ts';
import { formatVkey } from '../../src/note/vkey.ts';
import { spawnServe } from '../helpers/spawn-serve.ts';
import { tempDir } from '../helpers/tmp.ts';
import { freePort } from '../helpers/log-witness-peers.ts';
import { until } from '../helpers/poll.ts';

const bin = join(import.meta.dirname, '..', '..', 'bin', 'anchor-witness.js');
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 20_000 });

void test('serve --log-witnesses: load errors and bad durations refuse start-up; the flags and AW_ variables reach /health', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const key = join(dir, 'w.pem');
    assert.equal(run(['keygen', '--out', key]).status, 0);
    const cosignKey = ed25519PublicKeyBytes(generateEd25519().privateKey);
    const vkey = formatVkey('peer.test', SIG_TYPE_COSIGNATURE_V1, cosignKey);
    // A peer URL where nothing listens: every submission is `unreachable`.
    const peer = `http://127.0.0.1:${await freePort()}/`;
    const file = join(dir, 'log-witnesses.yaml');
    const base = ['--listen', '127.0.0.1:0', '--data-dir', join(dir, 'data'), '--roles', 'anchor', '--name', 'w.test/a', '--key', key];

    writeFileSync(file, `quorum: 2\nwitnesses:\n  - url: ${peer}\n    vkeys: ["${vkey}"]\n`);
    const r = run(['serve', ...base, '--log-witnesses', file]);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /quorum/);
    // Issue 25 item 5: one key listed for two witnesses under two names refuses start-up.
    const alias = formatVkey('alias.test', SIG_TYPE_COSIGNATURE_V1, cosignKey);
    writeFileSync(file, `quorum: 2\nwitnesses:\n  - url: ${peer}\n    vkeys: ["${vkey}"]\n  - url: ${peer}b/\n    vkeys: ["${alias}"]\n`);
    const dup = run(['serve', ...base, '--log-witnesses', file]);
    assert.notEqual(dup.status, 0);
    assert.match(dup.stderr, /log_witness_key_duplicate/);
    writeFileSync(file, `quorum: 1\nwitnesses:\n  - url: ${peer}\n    vkeys: ["${vkey}"]\n`);
    for (const bad of ['0s', '1.5s'])
      assert.notEqual(run(['serve', ...base, '--log-witnesses', file, '--log-witness-interval', bad]).status, 0, bad);

    const child = await spawnServe(['serve', ...base, '--log-witness-interval', '1s'], {
      env: { AW_LOG_WITNESSES: file, AW_LOG_WITNESS_ALERT_LAG: '1' },
    });
    try {
      const h = await until('a lag warning', async () => {
        const body = (await (await fetch(`${child.url}/health`)).json()) as {
          status: string;
          log_witnesses: { url: string; cosigned_size: number; last_success: string | null }[];
          warnings: string[];
        };
        return body.warnings.length > 0 ? body : undefined;
      });
      assert.equal(h.status, 'ok');
      assert.deepEqual(
        h.log_witnesses.map((w) => [w.url, w.cosigned_size, w.last_success]),
        [[peer, 0, null]],
      );
      assert.match(h.warnings[0]!, /peer_unreachable/);
      // Until the first quorum: the size-0 checkpoint.
      const cp = await (await fetch(`${child.url}/log/checkpoint`)).text();
      assert.match(cp, /^w\.test\/a\/anchors\n0\n47DEQpj8HBSa\+\/TImW\+5JCeuQeRkm5NMpJWZG3hSuFU=\n\n/);
      const metrics = await (await fetch(`${child.url}/metrics`)).text();
      assert.match(
        metrics,
        new RegExp(`log_witness_requests_total\\{witness="${peer.replace(/[/.]/g, '\\$&')}",outcome="unreachable"\\} [1-9]`),
      );
    } finally {
      await child.stop();
    }
  } finally {
    cleanup();
  }
});
