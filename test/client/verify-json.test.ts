// Issue 26 item 2: `--json` on every `anchor-witness verify …` subcommand. The reproduction: before,
// only `verify finalized` had it (`verify cosignature … --json` was "unknown option", exit 1 from
// commander). Now a valid input prints one JSON verdict `{"valid": true, "command", …}` instead of
// the OK line; an invalid one prints `{"valid": false, "command", "code", "reason"}` on stdout and
// still the one INVALID line on stderr; exit codes do not change. Offline inputs only (the
// ML-DSA-44 / cosignature vectors), so no witness runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { addClientCommands } from '../../src/cli/client-commands.ts';
import { tempDir } from '../helpers/tmp.ts';
import * as V from '../helpers/mldsa-vectors.ts';

const CLI = join(import.meta.dirname, '..', 'helpers', 'client-cli.ts');
const LOG_ED_VKEY = 'example.com/log+01882cac+ASVDuS/xCVURR2rcg2nbbdyTNmWhGXjdoUBO4QZsqVWd';
const COSIGNED =
  `${V.WITNESS_CHECKPOINT_TEXT}\n— example.com/log AYgsrCZHRR9ejRCutsbrb373wd1mjNijdtXMfz6iMkcrOjk8vIHLKqS6eNYD9XEEsICUKK9wcl+C14poiq5oOG8BeQY=\n` +
  `${V.WITNESS_ED25519_LINE}\n${V.WITNESS_LINE}\n`;

const run = (args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr });
    });
  });

void test('every client verify subcommand has --json', () => {
  const program = new Command('anchor-witness');
  addClientCommands(program);
  const verify = program.commands.find((c) => c.name() === 'verify')!;
  assert.ok(verify.commands.length >= 8);
  const missing = verify.commands.filter((c) => !c.options.some((o) => o.long === '--json')).map((c) => c.name());
  assert.deepEqual(missing, []);
});

void test('verify cosignature|checkpoint --json: one JSON verdict on stdout, the same exit codes and stderr line', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const f = join(dir, 'cosigned.txt');
    writeFileSync(f, COSIGNED);
    const args = ['verify', 'cosignature', f, '--vkey', V.WITNESS_VKEY, '--vkey', V.WITNESS_ED25519_VKEY, '--log-vkey', LOG_ED_VKEY];
    const good = await run([...args, '--json']);
    assert.equal(good.code, 0, good.stderr);
    const ok = JSON.parse(good.stdout) as Record<string, unknown>;
    assert.equal(ok.valid, true);
    assert.equal(ok.command, 'cosignature');
    assert.equal(ok.log_verified, true);
    assert.deepEqual(ok.cosigners, [{ name: V.WITNESS_NAME, timestamp: Number(V.WITNESS_T) }]);

    const tampered = join(dir, 'tampered.txt');
    writeFileSync(tampered, COSIGNED.replace(V.WITNESS_LINE, V.WITNESS_LINE.replace('3Mz57AAAAABlU/EADTdJ', '3Mz57AAAAABlU/EADTdK')));
    const plain = await run(args.map((a) => (a === f ? tampered : a)));
    const bad = await run([...args.map((a) => (a === f ? tampered : a)), '--json']);
    assert.equal(plain.code, 1);
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr, plain.stderr, 'the INVALID line is the same with --json');
    assert.match(bad.stderr, /^INVALID cosignature_invalid: /);
    const verdict = JSON.parse(bad.stdout) as Record<string, unknown>;
    assert.deepEqual(Object.keys(verdict), ['valid', 'command', 'code', 'reason']);
    assert.equal(verdict.valid, false);
    assert.equal(verdict.code, 'cosignature_invalid');
    assert.equal(plain.stdout, '');

    const cp = join(dir, 'torchwood.txt');
    writeFileSync(cp, V.TORCHWOOD_CHECKPOINT_NOTE);
    const tw = await run(['verify', 'checkpoint', cp, '--vkey', V.TORCHWOOD_LOG_VKEY, '--json']);
    assert.equal(tw.code, 0, tw.stderr);
    assert.deepEqual(JSON.parse(tw.stdout), {
      valid: true,
      command: 'checkpoint',
      checkpoint: (JSON.parse(tw.stdout) as { checkpoint: unknown }).checkpoint,
    });
    assert.equal((JSON.parse(tw.stdout) as { checkpoint: { origin: string } }).checkpoint.origin, 'example.com/mldsa-log');
    // Unusable input stays exit 2 with no JSON.
    const usage = await run(['verify', 'checkpoint', join(dir, 'missing.txt'), '--vkey', V.TORCHWOOD_LOG_VKEY, '--json']);
    assert.equal(usage.code, 2);
    assert.equal(usage.stdout, '');
  } finally {
    cleanup();
  }
});
