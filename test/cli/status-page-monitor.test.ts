/**
 * The status page's printed monitor command must work as printed against a KEL-registry
 * deployment (issue 27 item 2): `npm start` (src/cli/dev.ts) runs a witness whose registry file has
 * `"delegates": true` and an entry without `keys`, its parties' keys coming from a `dir:` KEL
 * source. The command printed on `GET /` is run through a shell (with `$SEED`, `$REGISTRY` and
 * `$KEL_SOURCE` set, as the page says) and must poll without findings and exit 0 on SIGTERM.
 * Then a monitor that watches through a KEL rotation keeps the anchor the party signed before it.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { spawnServe } from '../helpers/spawn-serve.ts';
import { tempDir } from '../helpers/tmp.ts';
import { get, post } from '../helpers/witness.ts';
import { until } from '../helpers/poll.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);

const unescapeHtml = (s: string): string =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

interface Running {
  lines: string[];
  stderr: () => string;
  stop: () => Promise<number | null>;
}

/** Run one shell command line with `anchor-witness` on PATH (this checkout's bin). */
function shell(line: string, cwd: string, env: Record<string, string>): Running {
  const bin = join(cwd, 'bin');
  mkdirSync(bin, { recursive: true });
  const shim = join(bin, 'anchor-witness');
  writeFileSync(shim, `#!/bin/sh\nexec '${process.execPath}' '${join(ROOT, 'bin', 'anchor-witness.js')}' "$@"\n`);
  chmodSync(shim, 0o755);
  // exec: the signal reaches the monitor itself, not only the shell.
  const child = spawn('/bin/sh', ['-c', `exec ${line}`], {
    cwd,
    env: { ...process.env, ...env, PATH: `${bin}:${process.env.PATH ?? ''}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    out += c;
    const parts = out.split('\n');
    out = parts.pop()!;
    lines.push(...parts);
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    err += c;
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      resolve(code);
    });
  });
  return {
    lines,
    stderr: () => err,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Run the CLI, expecting a non-zero exit: its code and stderr. */
async function failing(args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    await run(process.execPath, args);
  } catch (e: unknown) {
    return e as { code: number; stderr: string };
  }
  return assert.fail(`exit 0: ${args.join(' ')}`);
}

const seedOf = (requestText: string): string => /"seed_id":\s*"([0-9a-f]{64})"/.exec(requestText)![1]!;

void test('status page: the printed monitor command watches a KEL-registry witness and exits 0', async () => {
  const tmp = tempDir('aw-page-monitor-');
  const env = { AW_DEV_DATA_DIR: join(tmp.dir, 'dev'), AW_DEV_PORT: '0', TB_DEV_PORT: '0', AW_LOG_LEVEL: 'warn' };
  const dev = await spawnServe([], { entry: join(ROOT, 'src', 'cli', 'dev.ts'), env, onOtherLine: () => undefined });
  const monitors: Running[] = [];
  try {
    const dataDir = env.AW_DEV_DATA_DIR;
    const kelRequest = join(dataDir, 'demo-kel-anchor-request.json');
    const send = (file: string) => post(`${dev.url}/v1/anchor`, readFileSync(file, 'utf8'), { 'content-type': 'application/json' });
    const first = await send(kelRequest);
    assert.equal(first.status, 200, first.text);
    const seed = seedOf(readFileSync(kelRequest, 'utf8'));
    const firstIndex = (JSON.parse(readFileSync(kelRequest, 'utf8')) as { anchor: { index: number } }).anchor.index;

    const page = await get(`${dev.url}/`);
    assert.equal(page.status, 200);
    const block = /<pre id="cmd-log">([\s\S]*?)<\/pre>/.exec(page.text);
    assert.ok(block, 'the page prints the log commands');
    const line = unescapeHtml(block[1]!)
      .split('\n')
      .find((l) => l.startsWith('anchor-witness monitor '));
    assert.ok(line, 'the page prints a monitor command');
    assert.match(line, /--registry "\$REGISTRY" --kel-source "\$KEL_SOURCE" --seed "\$SEED"/);
    assert.match(page.text, /Set <code>REGISTRY<\/code>/, 'the page says what to set REGISTRY to');

    const vars = { SEED: seed, REGISTRY: join(dataDir, 'registry.json'), KEL_SOURCE: `dir:${join(dataDir, 'kels')}` };
    const printed = shell(line, tmp.dir, vars);
    monitors.push(printed);
    const polled = await until('the first poll of the printed command', () => printed.lines.find((l) => l.includes(' polled ')), 60_000);
    assert.match(polled, /no new findings/, `${printed.lines.join('\n')}\n${printed.stderr()}`);
    assert.equal(await printed.stop(), 0, printed.stderr());

    // Watching through a rotation: the new key's anchor is the party's, and so is the one before.
    const watching = shell(`${line} --interval 1 --json`, tmp.dir, vars);
    monitors.push(watching);
    const polls = (): { findings: unknown[]; witnesses: { anchors: Record<string, number | null> }[] }[] =>
      watching.lines.map((l) => JSON.parse(l) as { findings: unknown[]; witnesses: { anchors: Record<string, number | null> }[] });
    await until('a poll of the watching monitor', () => (polls().length > 0 ? true : undefined), 60_000);
    const rotated = await run(process.execPath, [join(ROOT, 'src', 'cli', 'dev-kel.ts'), 'rotate'], { env: { ...process.env, ...env } });
    assert.match(rotated.stdout, /rotated did:keri:E/);
    await until('the rotated key to be co-signed', async () => ((await send(kelRequest)).status === 200 ? true : undefined), 30_000);
    const newIndex = (JSON.parse(readFileSync(kelRequest, 'utf8')) as { anchor: { index: number } }).anchor.index;
    assert.ok(newIndex > firstIndex);
    await until(
      'a poll that sees the anchor signed with the rotated key',
      () => (polls().some((p) => p.witnesses[0]?.anchors[seed] === newIndex) ? true : undefined),
      60_000,
    );
    assert.deepEqual(
      polls().flatMap((p) => p.findings),
      [],
      'no findings: the rotated key is the party key, derived from the KEL like the witness does',
    );
    assert.equal(await watching.stop(), 0, watching.stderr());
    const state = JSON.parse(readFileSync(join(tmp.dir, 'monitor.json'), 'utf8')) as {
      seeds: Record<string, { observations: { anchor: { index: number } }[] }>;
    };
    const seen = state.seeds[seed]!.observations.map((o) => o.anchor.index);
    assert.ok(seen.includes(firstIndex), `the anchor signed before the rotation is kept (${seen.join(', ')})`);
    assert.ok(seen.includes(newIndex));
  } finally {
    for (const m of monitors) await m.stop();
    assert.equal(await dev.stop(), 0);
    tmp.cleanup();
  }
});

void test('monitor: a KEL-registry file without --kel-source, or --kel-source without --registry, is one usage line (exit 2)', async () => {
  const tmp = tempDir('aw-monitor-kel-usage-');
  try {
    const registry = join(tmp.dir, 'registry.json');
    writeFileSync(registry, JSON.stringify({ parties: [{ id: `did:keri:E${'A'.repeat(43)}`, delegates: true }] }));
    const bin = join(ROOT, 'bin', 'anchor-witness.js');
    const seed = 'ab'.repeat(32);
    const args = ['monitor', '--once', '--witness', 'http://127.0.0.1:9', '--seed', seed];
    const noSource = await failing([bin, ...args, '--registry', registry]);
    assert.equal(noSource.code, 2, noSource.stderr);
    assert.match(noSource.stderr, /--registry .*registry\.json: .*--kel-source dir:PATH\|git:PATH/);
    assert.equal(noSource.stderr.trim().split('\n').length, 1, noSource.stderr);

    const noRegistry = await failing([bin, ...args, '--kel-source', `dir:${tmp.dir}`]);
    assert.equal(noRegistry.code, 2, noRegistry.stderr);
    assert.match(noRegistry.stderr, /--registry/);

    const badSource = await failing([bin, ...args, '--registry', registry, '--kel-source', 'http://x']);
    assert.equal(badSource.code, 2, badSource.stderr);
    assert.match(badSource.stderr, /--kel-source must be dir:PATH or git:PATH/);
  } finally {
    tmp.cleanup();
  }
});
