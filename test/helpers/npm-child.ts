/**
 * Child processes for the package tests (test/package/*): npm and Node run as a user would, in a
 * temporary project, without the npm settings an enclosing `npm test` passes down.
 */
import { execFile } from 'node:child_process';
import assert from 'node:assert/strict';
import { delimiter } from 'node:path';

// npm sets these for the scripts it runs (`npm test`); a child npm would inherit them and, for
// example, install into this checkout (npm_config_local_prefix). Registry, cache and proxy settings stay.
const NPM_STRIP =
  /^npm_(lifecycle_|package_|command$|execpath$|node_execpath$|config_(local_prefix|prefix|global_prefix|globalconfig|call|nodedir|node_gyp|npm_version|user_agent|init_module)$)/i;

/** The environment for a child: `nodeDir` first on PATH (for `#!/usr/bin/env node` and npm itself), npm's script settings removed. */
export function childEnv(nodeDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!NPM_STRIP.test(k)) env[k] = v;
  env.PATH = [nodeDir, ...(process.env.PATH ?? '').split(delimiter).filter((p) => p !== '' && p !== nodeDir)].join(delimiter);
  env.NO_UPDATE_NOTIFIER = '1';
  return { ...env, ...extra };
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run a program (no shell); resolves with its exit code and output, never rejects (a timeout is code null). */
export function run(
  file: string,
  args: readonly string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd: opts.cwd, env: opts.env, timeout: opts.timeoutMs ?? 60_000, killSignal: 'SIGKILL', maxBuffer: 16 << 20, encoding: 'utf8' },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
        resolve({ code, stdout, stderr: err !== null && code === null ? `${stderr}\n${err.message}` : stderr });
      },
    );
  });
}

/** Assert a run exited 0; returns it. */
export function ok(r: Run, what: string): Run {
  assert.equal(r.code, 0, `${what} failed (exit ${String(r.code)}):\n${r.stdout.slice(-2000)}${r.stderr.slice(-4000)}`);
  return r;
}
