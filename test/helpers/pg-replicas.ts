/** Witness replicas as child processes (`anchor-witness serve --store postgres://…`), for tests and benchmarks. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const root = join(import.meta.dirname, '..', '..');

export interface Replica {
  child: ChildProcess;
  url: string;
  /** SIGKILL, resolved once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM (graceful drain), resolved once the process is gone. */
  stop(): Promise<void>;
}

/** Start `anchor-witness serve` with `args` (plus --listen 127.0.0.1:0); resolves when it listens. */
export function startReplica(args: string[], opts: { stderr?: 'inherit' | 'ignore' } = {}): Promise<Replica> {
  const child = spawn(process.execPath, [join(root, 'bin', 'anchor-witness.js'), 'serve', '--listen', '127.0.0.1:0', ...args], {
    stdio: ['ignore', 'pipe', opts.stderr ?? (process.env.AW_REPLICA_STDERR === '1' ? 'inherit' : 'ignore')],
  });
  const exited = new Promise<void>((r) => {
    child.once('exit', () => {
      r();
    });
  });
  const end = async (signal: NodeJS.Signals): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.once('line', (line) => {
      const m = /^listening on (http:\/\/\S+)$/.exec(line);
      if (m === null) reject(new Error(`unexpected first line: ${line}`));
      else resolve({ child, url: m[1]!, kill: () => end('SIGKILL'), stop: () => end('SIGTERM') });
    });
    child.once('exit', (code) => {
      reject(new Error(`replica exited early with ${code}`));
    });
  });
}
