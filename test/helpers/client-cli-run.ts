/**
 * Run the client subcommands (test/helpers/client-cli.ts: `anchor-witness` without the witness
 * node) in a child process: its exit code (-1 when it was killed or never ran), stdout and stderr.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';

export const CLIENT_CLI = join(import.meta.dirname, 'client-cli.ts');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function runClientCli(args: readonly string[], opts: { timeoutMs?: number } = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLIENT_CLI, ...args], { timeout: opts.timeoutMs ?? 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr });
    });
  });
}
