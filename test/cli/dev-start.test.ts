/**
 * `npm start` (src/cli/dev.ts) is one of the README's two command lines: it must run the witness
 * and the bridge on a fresh data dir and its printed demo must work as printed — the file party's
 * anchor, and the KEL party's anchor before and after `node src/cli/dev-kel.ts rotate` (the
 * witness follows the rotation without a registry edit: the new key is co-signed, the old one is
 * key_not_current).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { spawnServe } from '../helpers/spawn-serve.ts';
import { tempDir } from '../helpers/tmp.ts';
import { get, post } from '../helpers/witness.ts';
import { until } from '../helpers/poll.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);

void test('npm start: the demo anchors are co-signed, and a KEL rotation is followed without a registry edit', async () => {
  const tmp = tempDir('aw-dev-start-');
  const env = { AW_DEV_DATA_DIR: tmp.dir, AW_DEV_PORT: '0', TB_DEV_PORT: '0', AW_LOG_LEVEL: 'warn' };
  const printed: string[] = [];
  const dev = await spawnServe([], { entry: join(ROOT, 'src', 'cli', 'dev.ts'), env, onOtherLine: (l) => printed.push(l) });
  try {
    const send = (file: string) =>
      post(`${dev.url}/v1/anchor`, readFileSync(join(tmp.dir, file), 'utf8'), { 'content-type': 'application/json' });

    const file = await send('demo-anchor-request.json');
    assert.equal(file.status, 200, file.text);
    const kel = await send('demo-kel-anchor-request.json');
    assert.equal(kel.status, 200, kel.text);

    copyFileSync(join(tmp.dir, 'demo-kel-anchor-request.json'), join(tmp.dir, 'old-kel-request.json'));
    const rotated = await run(process.execPath, [join(ROOT, 'src', 'cli', 'dev-kel.ts'), 'rotate'], { env: { ...process.env, ...env } });
    assert.match(rotated.stdout, /rotated did:keri:E/);

    // The witness reloads the renamed KEL files within about a second (debounced).
    const fresh = await until('the rotated key to be co-signed', async () => {
      const r = await send('demo-kel-anchor-request.json');
      return r.status === 200 ? r : undefined;
    });
    assert.equal(fresh.status, 200);
    const old = await send('old-kel-request.json');
    assert.equal(old.status, 403, old.text);
    assert.equal((old.body as { code: string }).code, 'key_not_current');

    const health = await get(`${dev.url}/health`);
    assert.equal((health.body as { status: string }).status, 'ok');
    // The printed walkthrough names the rotation command it was checked with here.
    assert.ok(
      printed.some((l) => l.includes('src/cli/dev-kel.ts rotate')),
      'the printed commands show the KEL rotation',
    );
  } finally {
    assert.equal(await dev.stop(), 0);
    tmp.cleanup();
  }
});

/**
 * Issue 27 item 3, as a user starting a second `npm start`: its port is taken, so it says which
 * port it took instead; the banner on stdout is one block and the start's JSON log lines follow
 * on stderr under a heading; a second `npm start` on the same data dir says, in one line and
 * without a stack trace, that another one is running (it used to print StoreOpenError's stack).
 */
void test('npm start: a busy port is named with the one taken instead; a second npm start on the same dir says so in one line', async () => {
  const tmp = tempDir('aw-dev-twice-');
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  const busyPort = (busy.address() as AddressInfo).port;
  const env = { AW_DEV_DATA_DIR: tmp.dir, AW_DEV_PORT: String(busyPort), TB_DEV_PORT: '0', AW_LOG_LEVEL: 'warn' };
  const printed: string[] = [];
  const dev = await spawnServe([], { entry: join(ROOT, 'src', 'cli', 'dev.ts'), env, onOtherLine: (l) => printed.push(l) });
  try {
    assert.notEqual(dev.port, busyPort);
    await until('the banner', () => (printed.some((l) => l.startsWith('Ctrl-C to stop')) ? true : undefined));
    assert.ok(
      printed.includes(`  port ${busyPort} is in use: the witness listens on port ${dev.port} instead (AW_DEV_PORT=PORT to choose one)`),
      printed.join('\n'),
    );
    assert.deepEqual(
      printed.filter((l) => l.startsWith('{')),
      [],
      'no JSON log line on stdout',
    );
    // stderr: the start's log lines come after the heading that follows the banner, none before it.
    const stderr = await until('the log heading', () => (dev.stderr().includes('-- log: JSON lines') ? dev.stderr() : undefined));
    const heading = stderr.indexOf('\n-- log: JSON lines (level warn and above');
    assert.ok(heading >= 0, stderr);
    assert.equal(stderr.slice(0, heading), '', 'nothing on stderr before the heading');
    assert.match(stderr.slice(heading), /^\n-- log: [^\n]*--\n\{"level":40/);

    const second = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [join(ROOT, 'src', 'cli', 'dev.ts')],
        { cwd: ROOT, env: { ...process.env, ...env, AW_DEV_PORT: '0' }, timeout: 60_000 },
        (err, stdout, stderr) => {
          resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : null, stdout, stderr });
        },
      );
    });
    assert.equal(second.code, 1, second.stderr);
    assert.equal(second.stdout, '');
    assert.equal(
      second.stderr,
      `npm start: another npm start is running on ${tmp.dir} (stop it, or run a second one on another data dir: AW_DEV_DATA_DIR=${tmp.dir}-2 npm start)\n`,
    );
    // The first one is untouched and still serving.
    const health = await get(`${dev.url}/health`);
    assert.equal(health.status, 200);
  } finally {
    assert.equal(await dev.stop(), 0);
    await new Promise((resolve) => busy.close(resolve));
    tmp.cleanup();
  }
});
