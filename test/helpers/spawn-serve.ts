/** Run `<entry> serve …` as a child and wait for its `listening on URL` line (rejects with its stderr if it exits first). */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export function spawnServe(entry: string, args: string[], env: Record<string, string> = {}): Promise<{ url: string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [entry, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', (line) => {
      resolve({
        url: line.replace('listening on ', ''),
        stop: () =>
          new Promise((r) => {
            child.once('exit', (code) => {
              r(code);
            });
            child.kill('SIGTERM');
          }),
      });
    });
    child.once('exit', (code) => {
      reject(new Error(`exited ${code}: ${err}`));
    });
  });
}
