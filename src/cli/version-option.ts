/**
 * `-V, --version` for both programs: the version, the source commit and the Node version on one
 * line, or with `--json` one JSON object `{"name","version","commit","node"}` (docs/build.md,
 * "Version and commit"). Commander's own `.version()` prints only the version string.
 */
import type { Command } from 'commander';
import { buildInfo, formatVersion } from '../release/build-info.ts';

export function addVersionOption(program: Command, out: (text: string) => void = (t) => process.stdout.write(t)): Command {
  program.option('-V, --version', 'print the version, the source commit and the Node version (with --json: as one JSON object)');
  program.on('option:version', () => {
    const name = program.name();
    const json = rawArgs(program).includes('--json');
    out(json ? JSON.stringify({ name, ...buildInfo() }) + '\n' : formatVersion(name) + '\n');
    process.exit(0);
  });
  return program;
}

/** The argument list of the parse in progress (commander keeps it as `rawArgs`). */
function rawArgs(program: Command): readonly string[] {
  const raw = (program as unknown as { rawArgs?: unknown }).rawArgs;
  return Array.isArray(raw) ? (raw as string[]) : [];
}
