/**
 * The Go reference witness of bench/go-witness (golang.org/x/mod note + tlog, one append + fsync
 * per cosignature, like litewitness): built offline in GOPATH mode against Debian's
 * golang-golang-x-mod-dev, started as a child on a free loopback port.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { processCpuMs } from './_load.ts';

const run = promisify(execFile);
const GOPATH = '/usr/share/gocode';
const SOURCE = join(import.meta.dirname, 'go-witness', 'main.go');

/** Why the Go reference cannot be built here, or null when it can. */
export async function goMissing(): Promise<string | null> {
  try {
    await run('go', ['version'], { timeout: 10_000 });
  } catch {
    return 'go is not installed (apt-get install golang-go golang-golang-x-mod-dev)';
  }
  if (!existsSync(join(GOPATH, 'src/golang.org/x/mod/sumdb/note')))
    return `golang.org/x/mod is not under ${GOPATH} (apt-get install golang-golang-x-mod-dev)`;
  return null;
}

/** `go build` into `dir`; resolves with the binary's path. */
export async function buildGoWitness(dir: string): Promise<string> {
  const env = { ...process.env, GO111MODULE: 'off', GOPATH, GOFLAGS: '', GOCACHE: join(tmpdir(), 'anchor-witness-gocache') };
  const bin = join(dir, 'go-witness');
  await run('go', ['build', '-o', bin, SOURCE], { env, cwd: dir, timeout: 180_000 });
  return bin;
}

export interface GoWitness {
  url: URL;
  pid: number;
  cpuMs: () => number;
  stop: () => Promise<void>;
}

/** Start the binary with the given logs (origin → vkey) and state file; resolves once it listens. */
export function startGoWitness(
  bin: string,
  o: { dir: string; name: string; seedHex: string; logs: readonly { origin: string; vkey: string }[]; state: string },
): Promise<GoWitness> {
  const logsFile = join(o.dir, 'go-logs.txt');
  writeFileSync(logsFile, o.logs.map((l) => `${l.origin} ${l.vkey}\n`).join(''));
  const child = spawn(bin, ['-listen', '127.0.0.1:0', '-name', o.name, '-seed', o.seedHex, '-logs', logsFile, '-state', o.state], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((r) =>
    child.once('exit', () => {
      r();
    }),
  );
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      reject(new Error(`go-witness exited (${String(code)}) before listening`));
    });
    createInterface({ input: child.stdout }).once('line', (line) => {
      const m = /^listening on (\S+)$/.exec(line);
      if (m === null) {
        child.kill('SIGKILL');
        reject(new Error(`go-witness said ${line}`));
        return;
      }
      const pid = child.pid!;
      resolve({
        url: new URL(`http://${m[1]!}`),
        pid,
        cpuMs: () => processCpuMs(pid),
        stop: async () => {
          child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}
