/**
 * `anchor-witness cosign forget ORIGIN --data-dir DIR [--store …]` (SPEC §5 rev 4, §9): delete one
 * origin's cosign state, its evidence and its list import record, and print what was deleted. The
 * way out of a key conflict: a state is bound to the log key set it was cosigned under, and only
 * after it is forgotten may the origin start again under a disjoint set (from size 0).
 *
 * With SQLite the witness must be stopped (the store is locked by the running process); with
 * PostgreSQL replicas may keep running: each request reads the origin's state afresh.
 */
import type { Command } from 'commander';
import { isValidOrigin } from '../cosign/log-keys.ts';
import type { CosignStateStorage, ForgottenOrigin } from '../store/types.ts';
import { ConfigError } from '../witness/errors.ts';
import { openStore } from '../witness/node.ts';
import { progress } from './progress.ts';

/** Forget `origin` in `store`; the lines to print. */
export async function forgetCosignOrigin(
  store: CosignStateStorage,
  origin: string,
): Promise<{ forgotten: ForgottenOrigin; lines: string[] }> {
  const forgotten = await store.forgetOrigin(origin);
  const lines: string[] = [];
  if (forgotten.state) {
    lines.push(
      forgotten.cosignedSize === undefined
        ? `deleted the empty state of ${origin} (nothing was cosigned)`
        : `deleted the state of ${origin}: cosigned up to size ${forgotten.cosignedSize}`,
    );
  }
  if (forgotten.evidence > 0) lines.push(`deleted ${forgotten.evidence} evidence row(s) of ${origin}`);
  if (forgotten.imported) lines.push(`deleted the list import record of ${origin} (a list may import it again)`);
  if (lines.length === 0) lines.push(`nothing stored for ${origin}`);
  return { forgotten, lines };
}

export function addCosignCommands(program: Command): void {
  const cosign = program.command('cosign').description('the cosign role’s stored state (docs/protocol.md §5)');
  cosign
    .command('forget')
    .description(
      "delete an origin's cosign state, evidence and list import record (after a key conflict: the origin starts again from size 0)",
    )
    .argument('<origin>', 'the log origin, exactly as in its checkpoints')
    .option('--data-dir <dir>', 'the witness data directory (the SQLite store <data-dir>/witness.db)')
    .option('--store <spec>', 'sqlite:PATH or postgres://… (as given to serve)')
    .action(async (origin: string, o: { dataDir?: string; store?: string }) => {
      if (!isValidOrigin(origin)) throw new ConfigError('invalid_config', `origin ${JSON.stringify(origin)}: not a valid origin line`);
      if (o.dataDir === undefined && o.store === undefined) throw new ConfigError('missing_option', '--data-dir (or --store) is required');
      const shown = progress('cosign forget');
      let lines: string[];
      try {
        const store = await shown.during('opening the store', () => openStore(o.store, o.dataDir ?? '.'));
        try {
          ({ lines } = await shown.during(`deleting what is stored for ${origin}`, () => forgetCosignOrigin(store.cosign, origin)));
        } finally {
          await store.close();
        }
      } finally {
        shown.done(); // the status line is cleared before any output or error message
      }
      for (const l of lines) process.stdout.write(l + '\n');
    });
}
