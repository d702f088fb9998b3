/**
 * What build is running: the package version, the source commit and the Node version, for
 * `--version` and the `build_info` gauge of `/metrics` (docs/build.md, "Version and commit").
 *
 * The commit is `git rev-parse HEAD` when the code runs from a git checkout of this package: the
 * package directory (the nearest ancestor of this file with a package.json named
 * `anchor-witness`) must be the work tree's top level, so a package installed under another
 * project's repository is not taken for a checkout. Otherwise, or without git, `unknown`. Looked
 * up once, on first use.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { VERSION } from '../version.ts';

export const UNKNOWN_COMMIT = 'unknown';

export interface BuildInfo {
  version: string;
  /** 40 (or 64) hex digits, or `unknown`. */
  commit: string;
  /** process.version, e.g. v24.21.0 */
  node: string;
}

/** The directory holding this package's package.json, searching up from `start`; undefined when none. */
export function packageDir(start: string): string | undefined {
  for (let dir = start; ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown };
      if (pkg.name === 'anchor-witness') return dir;
    } catch {
      // no (readable) package.json here: look further up
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** HEAD of the git work tree whose top level is `dir`, or `unknown`. */
export function checkoutCommit(dir: string): string {
  try {
    const [top, head] = execFileSync('git', ['rev-parse', '--show-toplevel', 'HEAD'], {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 10_000,
    })
      .trim()
      .split('\n');
    if (top === undefined || head === undefined || realpathSync(top) !== realpathSync(dir)) return UNKNOWN_COMMIT;
    return /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(head) ? head : UNKNOWN_COMMIT;
  } catch {
    return UNKNOWN_COMMIT;
  }
}

let cached: BuildInfo | undefined;

export function buildInfo(): BuildInfo {
  if (cached === undefined) {
    const dir = packageDir(import.meta.dirname);
    cached = { version: VERSION, commit: dir === undefined ? UNKNOWN_COMMIT : checkoutCommit(dir), node: process.version };
  }
  return cached;
}

/** The `--version` line: `anchor-witness 0.1.0 (commit <sha>, Node v24.21.0)`. */
export function formatVersion(program: string, b: BuildInfo = buildInfo()): string {
  return `${program} ${b.version} (commit ${b.commit}, Node ${b.node})`;
}
