// Options declared once (issue 26 item 2): every row of the `serve` option tables is in `serve
// --help` under its group (essentials first), the `--config` file has a key for every flag that
// parses to what the flag gives, and every time flag of both programs takes the SPEC §4.1 duration
// syntax (`90s`, `5m`, `1h`, `7d`; `-ms`/`-seconds` flags keep bare integers in their unit).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { join } from 'node:path';
import type { Command, Option } from 'commander';
import { configFileKeys } from '../../src/config/config-settings.ts';
import { flagName, OPTION_GROUPS, rowKey, type OptionRow, type OptionTable } from '../../src/config/option-table.ts';
import { parseDuration } from '../../src/config/duration.ts';
import { BRIDGE_SERVE_OPTIONS } from '../../src/bridge/options.ts';
import { WITNESS_SERVE_OPTIONS } from '../../src/cli/serve-witness.ts';
import { anchorWitnessProgram } from '../../src/cli/anchor-witness.ts';
import { tokenBridgeProgram } from '../../src/cli/token-bridge.ts';
import { envProgram } from '../../src/cli/options.ts';
import { addOptionTable, applyConfigFile, optionValues, parseOptionText } from '../../src/cli/option-command.ts';
import { tempDir } from '../helpers/tmp.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const PROGRAMS = [
  { name: 'anchor-witness', program: anchorWitnessProgram, table: WITNESS_SERVE_OPTIONS as OptionTable, prefix: 'AW_' },
  {
    name: 'token-bridge',
    program: () => tokenBridgeProgram({ out: () => undefined }),
    table: BRIDGE_SERVE_OPTIONS as OptionTable,
    prefix: 'TB_',
  },
];

const serveOf = (program: Command): Command => program.commands.find((c) => c.name() === 'serve')!;

void test('every row of the serve tables is in `serve --help`, under its group, groups in order (essentials first)', () => {
  for (const p of PROGRAMS) {
    const help = serveOf(p.program()).helpInformation();
    const headings = Object.values(OPTION_GROUPS).filter((h) => help.includes(`\n${h}\n`));
    assert.equal(headings[0], OPTION_GROUPS.essentials, `${p.name}: essentials first`);
    const at = headings.map((h) => help.indexOf(`\n${h}\n`));
    assert.deepEqual(
      at,
      [...at].sort((a, b) => a - b),
      `${p.name}: groups in OPTION_GROUPS order`,
    );
    for (const [key, row] of Object.entries(p.table)) {
      assert.equal(rowKey(row.flags), key, `${p.name}: row ${key} is keyed by its flag`);
      const line = new RegExp(`\\n  ${row.flags.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s`);
      const m = line.exec(help);
      assert.ok(m !== null, `${p.name} serve --help lacks ${row.flags}`);
      const heading = OPTION_GROUPS[row.group];
      const own = help.indexOf(`\n${heading}\n`);
      const next = Math.min(...at.filter((x) => x > own), help.length);
      assert.ok(own >= 0 && m.index > own && m.index < next, `${p.name}: ${row.flags} is not under "${heading}"`);
    }
    // no option of serve outside the table (besides --help)
    const declared = new Set(Object.values(p.table).map((r) => r.flags));
    const extra = serveOf(p.program())
      .options.map((o) => o.flags)
      .filter((f) => !declared.has(f));
    assert.deepEqual(extra, [], `${p.name}: serve options not declared in its table`);
  }
});

/** A text the row accepts that gives another value than its default (the first such candidate). */
function sample(row: OptionRow): string {
  const candidates = row.choices ?? ['7d', '1h', '5m', '90s', '1s', '100', '16', '1', '2:10', '3:7', 'x.example/w'];
  for (const c of candidates)
    try {
      if (!isDeepStrictEqual(row.parse(c), row.default)) return c;
    } catch {
      // next candidate
    }
  throw new Error(`no sample for ${row.flags}`);
}

/** Parse `argv` (and an optional config file) with the table, the way the serve commands do; the typed values. */
async function valuesOf(table: OptionTable, argv: string[], configFile?: string): Promise<Record<string, unknown>> {
  let got: Record<string, unknown> = {};
  const program = envProgram('t', 'TT_').exitOverride();
  addOptionTable(program.command('serve'), table)
    .hook('preAction', (cmd) => {
      if (configFile !== undefined) applyConfigFile(cmd, table, configFile, 'TT_', (m) => new Error(m));
    })
    .action((_o: unknown, cmd: Command) => {
      got = optionValues(cmd, table);
    });
  await program.parseAsync(['node', 't', 'serve', ...argv]);
  return got;
}

void test('the --config file has a key for every flag, and each key gives what the flag gives', async () => {
  const { dir, cleanup } = tempDir('aw-opt-');
  try {
    for (const p of PROGRAMS) {
      const keys = configFileKeys(p.table);
      const defaults = await valuesOf(p.table, []);
      for (const [key, row] of Object.entries(p.table)) {
        if (row.inConfigFile === false) {
          assert.equal(keys.get(flagName(row.flags)), undefined, `${row.flags} must not be a config-file key`);
          continue;
        }
        assert.equal(keys.get(flagName(row.flags)), key, `${p.name}: no config-file key ${flagName(row.flags)}`);
        assert.equal(keys.get(key), key, `${p.name}: no config-file key ${key}`);
        const isSwitch = row.kind === 'switch' || row.kind === 'negation';
        const text = isSwitch ? undefined : row.kind === 'list' ? 'a,b' : sample(row);
        const argv = text === undefined ? [row.flags] : [row.flags.split(' ')[0]!, text];
        const file = join(dir, `${p.name}-${key}.json`);
        writeFileSync(file, JSON.stringify({ [flagName(row.flags)]: row.kind === 'list' ? ['a', 'b'] : (text ?? true) }));
        const byFlag = await valuesOf(p.table, argv);
        const byFile = await valuesOf(p.table, [], file);
        assert.notDeepEqual(byFlag[key], defaults[key], `${p.name}: ${argv.join(' ')} changes nothing (a test that cannot fail)`);
        assert.deepEqual(byFile, byFlag, `${p.name}: config-file key ${flagName(row.flags)} differs from ${argv.join(' ')}`);
      }
      const unknown = join(dir, `${p.name}-unknown.json`);
      writeFileSync(unknown, JSON.stringify({ 'no-such-flag': 1 }));
      await assert.rejects(valuesOf(p.table, [], unknown), /unknown setting "no-such-flag"/);
    }
  } finally {
    cleanup();
  }
});

/** A flag that holds a time: by its name or placeholder. */
const TIME_NAME = /(-ms|-seconds|-interval|^--interval|-lag|-ttl|^--ttl|-timeout|-after|-grace|^--prepublish)$/;
const isTimeOption = (o: Option): boolean =>
  o.long !== undefined && (TIME_NAME.test(o.long) || /<(ms|s|seconds|duration|d)>/.test(o.flags)) && !o.negate;

function allOptions(cmd: Command, path: string[] = []): { path: string; option: Option }[] {
  return [
    ...cmd.options.map((option) => ({ path: [...path, cmd.name()].join(' '), option })),
    ...cmd.commands.flatMap((c) => allOptions(c, [...path, cmd.name()])),
  ];
}

void test('every time flag of both programs takes the duration syntax; -ms/-seconds flags keep their unit', () => {
  let checked = 0;
  for (const p of PROGRAMS) {
    for (const { path, option } of allOptions(p.program())) {
      if (!isTimeOption(option)) continue;
      checked++;
      const name = `${path} ${option.long!}`;
      assert.ok(option.parseArg !== undefined, `${name}: no parser`);
      const parse = (t: string): number => parseOptionText(option, t) as number;
      const unit = /-ms$/.test(option.long!) || /<ms>/.test(option.flags) ? 'ms' : 's';
      let accepted = 0;
      for (const d of ['90s', '5m', '1h', '7d', '15m', '10s', '1s']) {
        let got: number;
        try {
          got = parse(d);
        } catch (e) {
          assert.match(String(e), /outside/, `${name} ${d}: ${String(e)}`);
          continue;
        }
        assert.equal(got, parseDuration(d, unit), `${name} ${d}`);
        accepted++;
      }
      assert.ok(accepted > 0, `${name}: takes none of 90s, 5m, 1h, 7d, 15m, 10s, 1s`);
      assert.throws(() => parse('5x'), /not a duration/, `${name}: 5x`);
      // a bare integer is in the flag's unit
      const bare = [1000, 900, 600, 100, 60, 30, 1].find((n) => {
        try {
          parse(String(n));
          return true;
        } catch {
          return false;
        }
      });
      assert.ok(bare !== undefined, `${name}: takes no bare integer`);
      assert.equal(parse(String(bare)), bare, `${name}: a bare integer is in ${unit}`);
    }
  }
  assert.ok(checked >= 15, `only ${checked} time flags found`);
});

void test('the serve tables mark their time flags (a time flag declared as a plain integer fails here)', () => {
  for (const p of PROGRAMS)
    for (const row of Object.values(p.table))
      if (TIME_NAME.test(`--${flagName(row.flags)}`)) assert.ok(row.time !== undefined, `${p.name}: ${row.flags} is a time flag`);
});

/** Run a program's entry point (bin/*.js); its exit status and output. */
function run(bin: string, args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', `${bin}.js`), ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, ...env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

void test('token-bridge serve takes --config and --log-level like anchor-witness serve', () => {
  const { dir, cleanup } = tempDir('tb-opt-');
  try {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'listen: 127.0.0.1:0\nno-such-flag: 1\n');
    const r1 = run('token-bridge', ['serve', '--config', bad]);
    assert.equal(r1.code, 1);
    assert.match(r1.stderr, /--config .*bad\.yaml: unknown setting "no-such-flag"/);
    // a config file without the required settings: named, with the file as a third way to give them
    const partial = join(dir, 'partial.yaml');
    writeFileSync(partial, 'listen: 127.0.0.1:0\nlog-level: warn\n');
    const r2 = run('token-bridge', ['serve', '--config', partial]);
    assert.equal(r2.code, 1);
    assert.match(
      r2.stderr,
      /missing required flags: --key-dir <dir>, --issuer <url> \(or set TB_KEY_DIR, TB_ISSUER, or give them in --config/,
    );
    // a value of the file is parsed by the flag's parser
    const ttl = join(dir, 'ttl.yaml');
    writeFileSync(ttl, 'listen: 127.0.0.1:0\ndev: true\nmax-ttl: 5x\n');
    const r3 = run('token-bridge', ['serve', '--config', ttl]);
    assert.equal(r3.code, 1);
    assert.match(r3.stderr, /--config .*ttl\.yaml: max-ttl: not a duration: "5x"/);
    const level = run('token-bridge', ['serve', '--listen', '127.0.0.1:0', '--dev', '--log-level', 'loud']);
    assert.equal(level.code, 1);
    assert.match(level.stderr, /--log-level/);
  } finally {
    cleanup();
  }
});

void test('healthcheck --json: one JSON object on stdout, healthy or not, and the exit status', async () => {
  const server = http.createServer((req, res) => {
    res.writeHead(req.url === '/down/health' ? 503 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 'ok', version: '9.9.9' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const spawnAsync = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string }>((resolve) => {
        // async: the stub server answers on this event loop
        void import('node:child_process').then(({ execFile }) => {
          execFile(process.execPath, [join(ROOT, 'bin', 'anchor-witness.js'), ...args], { timeout: 60_000 }, (err, stdout) => {
            resolve({ code: err === null ? 0 : ((err as { code?: number }).code ?? null), stdout });
          });
        });
      });
    const ok = await spawnAsync(['healthcheck', '--url', base, '--json', '--timeout-ms', '30s']);
    assert.equal(ok.code, 0);
    const doc = JSON.parse(ok.stdout) as Record<string, unknown>;
    assert.equal(doc.healthy, true);
    assert.equal(doc.checked, `${base}/health`);
    assert.equal(doc.http_status, 200);
    assert.deepEqual(doc.health, { status: 'ok', version: '9.9.9' });
    const down = await spawnAsync(['healthcheck', '--url', `${base}/down`, '--json']);
    assert.equal(down.code, 1);
    const d = JSON.parse(down.stdout) as Record<string, unknown>;
    assert.equal(d.healthy, false);
    assert.equal(d.http_status, 503);
    assert.match(String(d.line), /HTTP 503/);
  } finally {
    server.close();
  }
});

void test('a parser may return null: --rate-limit 0 (off) is null from a flag, a variable and a config file', async () => {
  // commander turns a parser's null into '' (the bridge then refused to start: "rps must be > 0")
  assert.equal((await valuesOf(BRIDGE_SERVE_OPTIONS, ['--rate-limit', '0'])).rateLimit, null);
  assert.deepEqual((await valuesOf(BRIDGE_SERVE_OPTIONS, [])).rateLimit, { rps: 10, burst: 20 });
  process.env.TT_SIGN_SUBTREE_RATE = '0';
  try {
    assert.equal((await valuesOf(WITNESS_SERVE_OPTIONS, [])).signSubtreeRate, null);
  } finally {
    delete process.env.TT_SIGN_SUBTREE_RATE;
  }
  const { dir, cleanup } = tempDir('aw-opt-');
  try {
    const file = join(dir, 'c.yaml');
    writeFileSync(file, 'rate-limit: 0\n');
    assert.equal((await valuesOf(WITNESS_SERVE_OPTIONS, [], file)).rateLimit, null);
  } finally {
    cleanup();
  }
});
