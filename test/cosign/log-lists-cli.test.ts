// `serve --logs-list …` (SPEC §5.5, §9): durations, the list flags and their AW_ variables, over a
// real child process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDurationSeconds, durationArg } from '../../src/config/duration.ts';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import { SyntheticLog, seq } from '../helpers/cosign-harness.ts';
import { spawnServe } from '../helpers/spawn-serve.ts';
import { tempDir } from '../helpers/tmp.ts';

const bin = join(import.meta.dirname, '..', '..', 'bin', 'anchor-witness.js');
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 20_000 });

void test('durations (SPEC §4.1): an integer with s, m, h or d; bare = seconds', () => {
  assert.deepEqual(['90s', '5m', '1h', '7d', '30', '0'].map(parseDurationSeconds), [90, 300, 3600, 604800, 30, 0]);
  for (const bad of ['', '1.5h', '-1s', '1w', '01m', 'h', '1 h', '1H', '9007199254740993'])
    assert.throws(() => parseDurationSeconds(bad), /not a duration/, bad);
  const interval = durationArg(300, 604800);
  assert.equal(interval('5m'), 300);
  assert.throws(() => interval('299s'), /outside/);
  assert.throws(() => interval('8d'), /outside/);
});

void test('serve: --logs-list FILE imports at start; AW_LOGS_LIST* variables; bad values refuse start-up', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = new SyntheticLog('cli-list.example/log', ed25519KeyFromSeed(seq(0x70)));
    const list = join(dir, 'log-list');
    writeFileSync(list, `logs/v0\nvkey ${log.vkey}\nqpd 1000000\n`);
    const base = ['serve', '--listen', '127.0.0.1:0', '--data-dir', join(dir, 'data'), '--name', 'w.test/a', '--roles', 'cosign', '--dev'];
    const fails = (args: string[], pattern: RegExp, env: Record<string, string> = {}) => {
      const r = run([...base, ...args], env);
      assert.notEqual(r.status, 0);
      assert.match(r.stderr, pattern);
    };
    fails(['--logs-list', list, '--logs-list-interval', '1m'], /outside 300s\.\.604800s/);
    fails(['--logs-list', list], /outside/, { AW_LOGS_LIST_INTERVAL: '8d' });
    fails(['--logs-list', list, '--logs-list-max-new', '0'], /outside/);
    fails(['--logs-list', join(dir, 'missing')], /invalid_log_list|no such file/i);
    fails(['--logs-list', 'http://example.com/list'], /https/);

    const child = await spawnServe(base, {
      env: { AW_LOGS_LIST: list, AW_LOGS_LIST_INTERVAL: '5m', AW_LOGS_LIST_MAX_QPD: '10' },
    });
    try {
      const res = await fetch(`${child.url}/add-checkpoint`, { method: 'POST', body: log.request(0, 1) });
      assert.equal(res.status, 200, await res.text());
      const metrics = await (await fetch(`${child.url}/metrics`)).text();
      assert.match(metrics, new RegExp(`logs_list_fetches_total\\{source="${list.replace(/[.]/g, '\\.')}",outcome="ok"\\} 1`));
    } finally {
      assert.equal(await child.stop(), 0);
    }
  } finally {
    cleanup();
  }
});
