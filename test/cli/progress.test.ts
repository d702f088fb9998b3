// Progress of long command-line work (src/cli/progress.ts): a status line on stderr only when it is
// a terminal and the output is not --json; a pipe, a file or CI logs get nothing but the command's
// own output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { progress, type ProgressStream } from '../../src/cli/progress.ts';
import { initKel } from '../../src/cli/kel-author.ts';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem } from '../../src/crypto/ed25519.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { fill } from '../helpers/anchors.ts';
import { spawnServe } from '../helpers/spawn-serve.ts';
import { tempDir } from '../helpers/tmp.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'anchor-witness.js');
const run = promisify(execFile);

function recorder(isTTY: boolean): ProgressStream & { text: string } {
  const s = {
    isTTY,
    text: '',
    write(t: string) {
      s.text += t;
      return true;
    },
  };
  return s;
}

void test('progress: drawn in place on a TTY and cleared when done; nothing without a TTY or with --json', async () => {
  const tty = recorder(true);
  let clock = 1_000_000;
  const p = progress('kel verify', { stream: tty, now: () => clock });
  assert.equal(p.active, true);
  p.update(1, 3, 'read');
  p.update(2, 3, 'read'); // within 200 ms of the last draw: skipped
  p.update(3, 3, 'read'); // the last step: always drawn
  p.line('skipped X: malformed');
  clock += 2500;
  p.update(3, undefined, 'verifying');
  p.done();
  assert.equal(
    tty.text,
    '\r\x1b[Kkel verify: read 1/3' +
      '\r\x1b[Kkel verify: read 3/3' +
      '\r\x1b[K' +
      'skipped X: malformed\n' +
      '\r\x1b[Kkel verify: read 3/3' +
      '\r\x1b[Kkel verify: verifying 3 (2 s)' + // a new stage is drawn at once, with the elapsed time
      '\r\x1b[K',
  );
  assert.equal(await p.during('reading', () => Promise.resolve(7)), 7);

  for (const [stream, json] of [
    [recorder(false), false],
    [recorder(true), true],
  ] as const) {
    const q = progress('kel verify', { stream, json });
    assert.equal(q.active, false);
    q.update(1, 2, 'read');
    q.update(2, 2, 'read');
    await q.during('reading', () => Promise.resolve());
    q.done();
    q.line('a line');
    assert.equal(stream.text, 'a line\n', 'only the whole line, no status');
  }
});

void test('kel verify over many files: stderr not a TTY → no progress output', { timeout: 60_000 }, async () => {
  const { dir, cleanup } = tempDir('aw-progress-');
  try {
    const kels = join(dir, 'kels');
    const keys = join(dir, 'keys');
    mkdirSync(kels);
    mkdirSync(keys, { mode: 0o700 });
    const files = Array.from({ length: 40 }, () => initKel(kels, keys).kel_file);
    const r = await run(process.execPath, [BIN, 'kel', 'verify', ...files]);
    assert.equal(r.stdout.trim().split('\n').length, 40);
    assert.equal(r.stderr, '');
    const d = await run(process.execPath, [BIN, 'kel', 'verify', kels]);
    assert.equal(d.stderr, '');

    // on a terminal (a pty from util-linux `script`), the same command draws its status on stderr
    if (spawnSync('script', ['--version'], { stdio: 'ignore' }).status !== 0) return;
    const out = join(dir, 'out.txt');
    const typescript = join(dir, 'typescript');
    const cmd = [process.execPath, BIN, 'kel', 'verify', ...files].map((a) => `'${a}'`).join(' ');
    const s = spawnSync('script', ['-q', '-e', '-c', `${cmd} > '${out}'`, typescript], { encoding: 'utf8', timeout: 50_000 });
    assert.equal(s.status, 0, s.stderr);
    assert.ok(readFileSync(typescript, 'utf8').includes('\r\x1b[Kkel verify: read 40/40'), 'no status line on the terminal');
    assert.equal(readFileSync(out, 'utf8').trim().split('\n').length, 40, 'stdout unchanged');
  } finally {
    cleanup();
  }
});

void test('serve with a log list: stderr not a TTY → only JSON log lines', { timeout: 60_000 }, async () => {
  const { dir, cleanup } = tempDir('aw-progress-serve-');
  try {
    const key = join(dir, 'w.pem');
    const cosign = join(dir, 'c.pem');
    writeNewKeyFile(key, ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(0x51))));
    writeNewKeyFile(cosign, ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(0x52))));
    const list = join(dir, 'list.txt');
    writeFileSync(list, 'logs/v0\n');
    const w = await spawnServe([
      'serve',
      '--listen',
      '127.0.0.1:0',
      '--data-dir',
      join(dir, 'data'),
      '--name',
      'witness.test/progress',
      '--roles',
      'cosign',
      '--key',
      key,
      '--cosign-key',
      cosign,
      '--logs-list',
      list,
    ]);
    await w.stop();
    const lines = w
      .stderr()
      .split('\n')
      .filter((l) => l !== '');
    assert.ok(lines.length > 0);
    for (const l of lines) assert.doesNotThrow(() => JSON.parse(l), `not a JSON log line: ${JSON.stringify(l)}`);
  } finally {
    cleanup();
  }
});

void test(
  'cosign forget: stderr not a TTY → no progress output; on a terminal the status line is drawn, then cleared before the output',
  { timeout: 60_000 },
  async () => {
    const { dir, cleanup } = tempDir('aw-progress-forget-');
    try {
      const r = await run(process.execPath, [BIN, 'cosign', 'forget', 'example.com/log', '--data-dir', dir]);
      assert.equal(r.stdout, 'nothing stored for example.com/log\n');
      assert.equal(r.stderr, '');

      if (spawnSync('script', ['--version'], { stdio: 'ignore' }).status !== 0) return;
      const out = join(dir, 'out.txt');
      const typescript = join(dir, 'typescript');
      const cmd = [process.execPath, BIN, 'cosign', 'forget', 'example.com/log', '--data-dir', dir].map((a) => `'${a}'`).join(' ');
      const s = spawnSync('script', ['-q', '-e', '-c', `${cmd} > '${out}'`, typescript], { encoding: 'utf8', timeout: 50_000 });
      assert.equal(s.status, 0, s.stderr);
      const screen = readFileSync(typescript, 'utf8');
      assert.ok(screen.includes('\r\x1b[Kcosign forget: '), `no status line on the terminal: ${JSON.stringify(screen)}`);
      // the last status line is cleared before the command ends (before `script`'s own trailer line)
      assert.ok(screen.includes('for example.com/log\r\x1b[K\n'), `the status line is cleared at the end: ${JSON.stringify(screen)}`);
      assert.equal(readFileSync(out, 'utf8'), 'nothing stored for example.com/log\n', 'stdout unchanged');
    } finally {
      cleanup();
    }
  },
);
