/**
 * Test helpers for keys outside the process (SPEC §1.3): a Debian `ssh-agent -D -a SOCK` started by
 * the test and stopped by its PID, SoftHSM2 tokens made with `softhsm2-util` and opensc
 * `pkcs11-tool`, and Go x/mod builds. A missing tool skips the test (saying so) outside CI and
 * fails it under CI=true.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestContext } from 'node:test';
import type { KeyObject } from 'node:crypto';
import { writeOpensshKey } from '../../src/cli/key-commands.ts';
import { pkcs11Available } from '../../src/keys/pkcs11-module.ts';
import { waitFor } from './poll.ts';

export const run = promisify(execFile);
export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so';
const GOPATH = '/usr/share/gocode';

/** True when the test may go on; otherwise skipped outside CI, failed under CI=true. */
export function requireTool(t: TestContext, missing: string | null): boolean {
  if (missing === null) return true;
  if (process.env.CI === 'true') throw new Error(`required under CI=true: ${missing}`);
  t.diagnostic(`skipped: ${missing}`);
  t.skip(missing);
  return false;
}

async function has(cmd: string, args: string[]): Promise<boolean> {
  try {
    await run(cmd, args, { timeout: 10_000 });
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

export async function opensshMissing(): Promise<string | null> {
  for (const c of ['ssh-agent', 'ssh-add', 'ssh-keygen']) {
    if (!(await has(c, ['-h']))) return `${c} is not installed (apt-get install openssh-client)`;
  }
  return null;
}

export async function softhsmMissing(): Promise<string | null> {
  if (!existsSync(SOFTHSM_MODULE)) return `${SOFTHSM_MODULE} is missing (apt-get install softhsm2)`;
  if (!(await has('softhsm2-util', ['--version']))) return 'softhsm2-util is not installed (apt-get install softhsm2)';
  if (!(await has('pkcs11-tool', ['--help']))) return 'pkcs11-tool is not installed (apt-get install opensc)';
  return null;
}

/** SoftHSM2 and opensc missing, or the optional npm pkcs11js not built: why PKCS#11 tests cannot run. */
export async function pkcs11Missing(): Promise<string | null> {
  return (await softhsmMissing()) ?? (pkcs11Available() ? null : 'the optional npm package pkcs11js did not build');
}

export async function goMissing(): Promise<string | null> {
  if (!(await has('go', ['version']))) return 'go is not installed (apt-get install golang-go golang-golang-x-mod-dev)';
  if (!existsSync(join(GOPATH, 'src/golang.org/x/mod/sumdb/note')))
    return `golang.org/x/mod is not under ${GOPATH} (apt-get install golang-golang-x-mod-dev)`;
  return null;
}

/** Build a Go program from test/…/main.go in GOPATH mode (no network); returns the binary. */
export async function buildGo(source: string, dir: string): Promise<string> {
  const env = { ...process.env, GO111MODULE: 'off', GOPATH, GOFLAGS: '', GOCACHE: join(tmpdir(), 'anchor-witness-gocache') };
  const bin = join(dir, 'go-bin');
  await run('go', ['build', '-o', bin, source], { env, cwd: dir, timeout: 180_000 });
  return bin;
}

/** A dedicated agent (`ssh-agent -D -a SOCK`), stopped by PID. */
export class TestAgent {
  readonly socket: string;
  private child: ChildProcess | undefined;

  constructor(socket: string) {
    this.socket = socket;
  }

  async start(): Promise<void> {
    const child = spawn('ssh-agent', ['-D', '-a', this.socket], { stdio: 'ignore' });
    this.child = child;
    await waitFor('the ssh-agent socket', () => existsSync(this.socket), 10_000);
  }

  get env(): NodeJS.ProcessEnv {
    return { ...process.env, SSH_AUTH_SOCK: this.socket };
  }

  /** `key to-openssh` the key into `dir`, then `ssh-add` it; returns the fingerprint. */
  async add(key: KeyObject, dir: string, name: string): Promise<string> {
    const file = join(dir, `${name}.openssh`);
    let fp: string;
    if (existsSync(file)) fp = (await run('ssh-keygen', ['-l', '-E', 'sha256', '-f', file])).stdout.split(' ')[1]!;
    else fp = writeOpensshKey(file, key, name);
    await run('ssh-add', [file], { env: this.env });
    return fp;
  }

  async list(): Promise<string> {
    return (await run('ssh-add', ['-l', '-E', 'sha256'], { env: this.env })).stdout;
  }

  async removeAll(): Promise<void> {
    await run('ssh-add', ['-D'], { env: this.env });
  }

  /** SIGTERM by PID; the agent removes its socket. */
  async stop(): Promise<void> {
    const c = this.child;
    this.child = undefined;
    if (c === undefined || c.exitCode !== null) return;
    const exited = new Promise<void>((r) =>
      c.once('exit', () => {
        r();
      }),
    );
    c.kill('SIGTERM');
    await exited;
  }
}

export function agentRef(fingerprint: string, socket: string): string {
  return `ssh-agent:${fingerprint}?socket=${encodeURIComponent(socket)}`;
}

/** A SoftHSM2 token directory with one initialised token (user PIN in a 0600 file). */
export interface TestToken {
  conf: string;
  tokenDir: string;
  pinFile: string;
  label: string;
  env: NodeJS.ProcessEnv;
}

export async function softhsmToken(dir: string, label: string): Promise<TestToken> {
  const tokenDir = join(dir, 'tokens');
  mkdirSync(tokenDir, { recursive: true });
  const conf = join(dir, 'softhsm2.conf');
  writeFileSync(conf, `directories.tokendir = ${tokenDir}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  const env = { ...process.env, SOFTHSM2_CONF: conf };
  await run('softhsm2-util', ['--init-token', '--free', '--label', label, '--pin', '1234', '--so-pin', '5678'], { env });
  const pinFile = join(dir, 'pin');
  writeFileSync(pinFile, '1234\n', { mode: 0o600 });
  return { conf, tokenDir, pinFile, label, env };
}

/** `pkcs11-tool --keypairgen` on the token: EC:edwards25519 or EC:prime256v1. */
export async function tokenKey(tok: TestToken, keyType: 'EC:edwards25519' | 'EC:prime256v1', label: string, id: string): Promise<void> {
  await run(
    'pkcs11-tool',
    [
      '--module',
      SOFTHSM_MODULE,
      '--token-label',
      tok.label,
      '--login',
      '--pin',
      '1234',
      '--keypairgen',
      '--key-type',
      keyType,
      '--label',
      label,
      '--id',
      id,
    ],
    { env: tok.env },
  );
}

export function pkcs11Ref(tok: TestToken, object: string): string {
  return `pkcs11:token=${tok.label};object=${object};type=private?module-path=${SOFTHSM_MODULE}&pin-source=file:${tok.pinFile}`;
}
