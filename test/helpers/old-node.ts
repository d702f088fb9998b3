/**
 * A Node older than the package supports (< 22), for the version-gate tests of the entry files:
 * the first `node` on PATH (or /usr/local/bin/node, /usr/bin/node) whose `--version` is below
 * v22, or undefined when the machine has none (the tests then skip, saying so).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export interface OldNode {
  bin: string;
  version: string;
}

let found: OldNode | null | undefined;

export function oldNode(): OldNode | undefined {
  if (found !== undefined) return found ?? undefined;
  const candidates = [
    ...(process.env.PATH ?? '')
      .split(delimiter)
      .filter((d) => d !== '')
      .map((d) => join(d, 'node')),
    '/usr/local/bin/node',
    '/usr/bin/node',
  ];
  found = null;
  for (const bin of new Set(candidates)) {
    if (!existsSync(bin)) continue;
    let version: string;
    try {
      version = execFileSync(bin, ['--version'], { encoding: 'utf8', timeout: 10_000 }).trim();
    } catch {
      continue;
    }
    const major = Number(/^v(\d+)\./.exec(version)?.[1]);
    if (major > 0 && major < 22) {
      found = { bin, version };
      break;
    }
  }
  return found ?? undefined;
}
