// `token-bridge` as operators run it (SPEC §9): `serve` prints exactly one `listening on …` line on
// stdout and JSON logs on stderr, refuses bad configurations at once, reads TB_* variables; `keys
// rotate|list|prune`; `token` gets a token with a proof of possession.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519PrivateKeyToPem } from '../../src/crypto/ed25519.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import type { Command } from 'commander';
import { tokenBridgeProgram } from '../../src/cli/token-bridge.ts';
import { tempDir } from '../helpers/tmp.ts';
import { chain, DEV1, DEV2, ROOT } from './_helpers.ts';

const BIN = join(import.meta.dirname, '../../bin/token-bridge.js');
let tmp: { dir: string; cleanup: () => void };

before(() => {
  tmp = tempDir('tb-cli-');
});
after(() => {
  tmp.cleanup();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code) => {
      resolve({ code, stdout, stderr });
    });
  });
}

void test('serve: one stdout line once listening, JSON logs on stderr, tokens via `token`, clean exit on SIGTERM', async () => {
  const keyDir = join(tmp.dir, 'serve-keys');
  const p = spawn(process.execPath, [BIN, 'serve', '--listen', '127.0.0.1:0', '--key-dir', keyDir, '--alg', 'ES256', '--rate-limit', '0'], {
    env: { ...process.env, TB_ISSUER: 'https://bridge.example', TB_AUDIENCE: 'sts.amazonaws.com,api://ci' },
  });
  let stdout = '';
  let stderr = '';
  p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    p.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /^listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(stdout);
      if (m !== null) resolve(m[1]!);
    });
    p.on('close', () => {
      reject(new Error(`serve exited: ${stderr}`));
    });
  });
  try {
    const health = (await (await fetch(`${url}/health`)).json()) as { issuer: string; audiences: string[] };
    assert.equal(health.issuer, 'https://bridge.example'); // from TB_ISSUER
    assert.deepEqual(health.audiences, ['sts.amazonaws.com', 'api://ci']); // comma list from TB_AUDIENCE
    const now = Math.floor(Date.now() / 1000);
    const chainFile = join(tmp.dir, 'chain.json');
    writeFileSync(
      chainFile,
      JSON.stringify(
        chain(ROOT, [
          { device: DEV1, capabilities: ['deploy:staging'], expiresAt: now + 600, timestamp: now },
          { device: DEV2, capabilities: ['deploy:staging'], expiresAt: now + 600, timestamp: now },
        ]),
      ),
    );
    const deviceKeyFile = join(tmp.dir, 'device.pem');
    writeNewKeyFile(deviceKeyFile, ed25519PrivateKeyToPem(DEV2.key));
    const r = await run([
      'token',
      '--bridge',
      url,
      '--chain',
      chainFile,
      '--root-key',
      ROOT.hex,
      '--device-key',
      deviceKeyFile,
      '--audience',
      'api://ci',
      '--ttl',
      '120',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const body = JSON.parse(r.stdout) as { access_token: string; expires_in: number; subject: string };
    assert.equal(body.subject, ROOT.did);
    assert.equal(body.expires_in, 120);
    const claims = JSON.parse(Buffer.from(body.access_token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    assert.equal(claims.aud, 'api://ci');
    assert.equal(claims.iss, 'https://bridge.example');
    // without a proof (this bridge requires one) the CLI reports the problem and exits 1
    const noPop = await run(['token', '--bridge', url, '--chain', chainFile, '--root-key', ROOT.hex]);
    assert.equal(noPop.code, 1);
    assert.match(noPop.stderr, /401: .*"code":"pop_required"/);
  } finally {
    p.kill('SIGTERM');
  }
  const code = await new Promise<number | null>((resolve) => p.on('close', resolve));
  assert.equal(code, 0);
  assert.match(stdout, /^listening on http:\/\/127\.0\.0\.1:\d+\n$/); // exactly one line
  for (const line of stderr.trim().split('\n')) assert.doesNotThrow(() => JSON.parse(line), line);
  assert.match(stderr, /"msg":"token bridge started"/);
});

/** Run the CLI in-process (no child process: fast), collecting its output. */
async function cli(args: string[], env: Record<string, string> = {}): Promise<{ out: string; error: Error | undefined }> {
  let out = '';
  const program = tokenBridgeProgram({ out: (t) => (out += t) });
  const quiet = (c: Command): void => {
    c.exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
    c.commands.forEach(quiet);
  };
  quiet(program);
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    await program.parseAsync(args, { from: 'user' });
    return { out, error: undefined };
  } catch (e) {
    return { out, error: e as Error };
  } finally {
    for (const k of Object.keys(env)) if (saved[k] === undefined) Reflect.deleteProperty(process.env, k);
    Object.assign(process.env, saved);
  }
}

void test('serve refuses bad configurations at once (exit 1, a clear message)', async () => {
  const keyDir = join(tmp.dir, 'refuse-keys');
  const badKeyDir = join(tmp.dir, 'bad-keys');
  const keys = await cli(['keys', 'rotate', '--key-dir', badKeyDir, '--alg', 'ES256']);
  assert.equal(keys.error, undefined);
  const pem = readdirSync(badKeyDir).find((f) => f.endsWith('.pem'))!;
  chmodSync(join(badKeyDir, pem), 0o644);
  const base = ['serve', '--listen', '127.0.0.1:0', '--key-dir', keyDir];
  // as a process: exit status 1, the reason on stderr, nothing on stdout
  const procs: [string[], RegExp][] = [
    [
      [...base, '--issuer', 'https://bridge.example', '--no-proof-of-possession'],
      /^token-bridge: --no-proof-of-possession requires --trusted-roots\n$/,
    ],
    [
      ['serve', '--listen', '127.0.0.1:0', '--key-dir', badKeyDir, '--issuer', 'https://bridge.example'],
      /accessible by group or others.*chmod 600/,
    ],
  ];
  const results = await Promise.all(procs.map(([args]) => run(args)));
  results.forEach((r, i) => {
    assert.equal(r.code, 1, `${procs[i]![0].join(' ')}: ${r.stdout}`);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, procs[i]![1]);
  });
  const cases: [string[], RegExp][] = [
    [[...base, '--issuer', 'http://bridge.example'], /must be https:\/\//],
    [[...base, '--issuer', 'https://bridge.example:8443'], /must not contain a port/],
    [[...base, '--issuer', 'https://bridge.example/'], /must not end with a slash/],
    [[...base, '--issuer', 'http://127.0.0.1:9000'], /only with --dev/],
    [['serve', '--listen', '127.0.0.1:0', '--issuer', 'https://bridge.example'], /missing required flag: --key-dir <dir>/],
    [['serve', '--listen', '127.0.0.1:0', '--key-dir', keyDir], /missing required flag: --issuer <url>/],
    [['serve', '--listen', 'localhost', '--key-dir', keyDir, '--issuer', 'https://bridge.example'], /--listen must be HOST:PORT/],
    [[...base, '--issuer', 'https://bridge.example', '--max-ttl', '7200'], /outside 1\.\.3600/],
    [[...base, '--issuer', 'https://bridge.example', '--default-ttl', '1000', '--max-ttl', '900'], /--default-ttl must be 1\.\.--max-ttl/],
    [[...base, '--issuer', 'https://bridge.example', '--tls-cert', join(tmp.dir, 'x.pem')], /--tls-cert and --tls-key go together/],
    [[...base, '--issuer', 'https://bridge.example', '--rate-limit', 'fast'], /rate limit must be RPS/],
    [[...base, '--issuer', 'https://bridge.example', '--alg', 'HS256'], /Allowed choices are RS256, ES256/],
    [
      [...base, '--issuer', 'https://bridge.example', '--trusted-roots', join(tmp.dir, 'missing.json')],
      /--trusted-roots \S+missing\.json: no such file/,
    ],
  ];
  for (const [args, re] of cases) {
    const r = await cli(args);
    assert.match(String(r.error?.message), re, args.join(' '));
    assert.equal(r.out, '');
  }
  // the environment: TB_NO_PROOF_OF_POSSESSION (the flag's name) is read as a boolean; TB_PROOF_OF_POSSESSION is not a switch
  const httpIssuer = [...base, '--issuer', 'http://bridge.example'];
  assert.match(String((await cli(httpIssuer, { TB_NO_PROOF_OF_POSSESSION: 'true' })).error?.message), /requires --trusted-roots/);
  assert.match(String((await cli(httpIssuer, { TB_NO_PROOF_OF_POSSESSION: '0' })).error?.message), /must be https/);
  assert.match(String((await cli(httpIssuer, { TB_PROOF_OF_POSSESSION: '0' })).error?.message), /must be https/);
  assert.match(String((await cli(httpIssuer, { TB_NO_PROOF_OF_POSSESSION: 'maybe' })).error?.message), /TB_NO_PROOF_OF_POSSESSION must be/);
  // nothing was created for the refused configurations
  assert.deepEqual(
    readdirSync(tmp.dir).filter((f) => f === 'refuse-keys'),
    [],
  );
});

void test('keys rotate | list | prune (and TB_KEY_DIR)', async () => {
  const keyDir = join(tmp.dir, 'cli-keys');
  const first = await cli(['keys', 'rotate', '--key-dir', keyDir, '--alg', 'ES256']);
  assert.equal(first.error, undefined);
  const a = JSON.parse(first.out) as { kid: string; state: string };
  assert.equal(a.state, 'active'); // the first key of an empty directory signs at once
  const second = await cli(['keys', 'rotate', '--prepublish', '600', '--alg', 'ES256'], { TB_KEY_DIR: keyDir });
  const b = JSON.parse(second.out) as { kid: string; state: string; not_before: string };
  assert.equal(b.state, 'next');
  assert.ok(Date.parse(b.not_before) - Date.now() > 590_000);
  const third = await cli(['keys', 'rotate', '--key-dir', keyDir, '--alg', 'ES256']);
  assert.match(String(third.error?.message), /already waiting to become active/);
  const list = JSON.parse((await cli(['keys', 'list', '--key-dir', keyDir])).out) as {
    keys: { kid: string; state: string; retire_after: null }[];
  };
  assert.deepEqual(
    list.keys.map((k) => [k.kid, k.state]),
    [
      [a.kid, 'active'],
      [b.kid, 'next'],
    ],
  );
  assert.deepEqual(JSON.parse((await cli(['keys', 'prune', '--key-dir', keyDir])).out), { pruned: [] });
  assert.match(String((await cli(['keys', 'list'])).error?.message), /missing required flag: --key-dir <dir>/);
});
