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
