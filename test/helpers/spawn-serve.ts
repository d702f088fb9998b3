/**
 * The one launcher for `anchor-witness` server child processes, shared by the tests and the
 * benchmarks: spawn, wait for the `listening on URL` line, and hand back the URL with ways to stop
 * (SIGTERM, graceful drain) or kill (SIGKILL) the child. It rejects if the child exits first,
 * with the tail of its stderr when that is captured.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'anchor-witness.js');

export interface ServeChild {
  child: ChildProcess;
  url: string;
  port: number;
  /** Everything the child wrote on stderr so far ('' unless stderr is 'pipe'). */
  stderr(): string;
  /** SIGTERM, resolved with the exit code once the process is gone. */
  stop(): Promise<number | null>;
  /** SIGKILL, resolved once the process is gone. */
  kill(): Promise<void>;
  exited: Promise<number | null>;
}

export interface ServeOptions {
  /** The program to run (default bin/anchor-witness.js; a bundle, say). */
  entry?: string;
  env?: Record<string, string>;
  /** Node flags before the entry (--cpu-prof, V8 flags). */
  nodeArgs?: readonly string[];
  /** 'pipe' (default) captures it for stderr() and the error message. */
  stderr?: 'pipe' | 'inherit' | 'ignore';
  /**
   * Every other stdout line, before and after `listening on` (V8 tracing flags print there), goes
   * here. Without it the first line must be `listening on URL`, and anything else is an error.
   */
  onOtherLine?: (line: string) => void;
}

/** Run `<entry> <args>` (args start with the subcommand, e.g. 'serve') and resolve once it listens. */
export function spawnServe(args: readonly string[], opts: ServeOptions = {}): Promise<ServeChild> {
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), opts.entry ?? BIN, ...args], {
    stdio: ['ignore', 'pipe', opts.stderr ?? 'pipe'],
    env: { ...process.env, ...opts.env },
  });
  let err = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (c: string) => {
    err += c;
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      resolve(code);
    }),
  );
  const alive = () => child.exitCode === null && child.signalCode === null;
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    let listening = false;
    rl.on('line', (line) => {
      const m = listening ? null : /^listening on (http:\/\/\S+)$/.exec(line);
      if (m === null) {
        if (opts.onOtherLine !== undefined) opts.onOtherLine(line);
        else if (!listening) {
          child.kill('SIGKILL');
          reject(new Error(`unexpected first line: ${line}`));
        }
        return;
      }
      listening = true;
      const url = m[1]!;
      resolve({
        child,
        url,
        port: Number(new URL(url).port),
        stderr: () => err,
        stop: async () => {
          if (alive()) child.kill('SIGTERM');
          return exited;
        },
        kill: async () => {
          if (alive()) child.kill('SIGKILL');
          await exited;
        },
        exited,
      });
    });
    void exited.then((code) => {
      reject(new Error(`anchor-witness exited with ${code} before listening${err === '' ? '' : `: ${err.slice(-2000)}`}`));
    });
  });
}
