/**
 * `anchor-witness kel forget PREFIX… --data-dir DIR [--store …]` (SPEC §3.6.7 rev 4): delete the
 * KERI witness role's stored events, receipts and duplicity proofs of each prefix and refuse the
 * prefix afterwards (`kel_prefix_not_allowed`). Its own-log entries stay: the log is append-only,
 * and they keep showing what this witness once receipted.
 *
 * With SQLite the witness must be stopped (the store is locked by the running process); with
 * PostgreSQL replicas may keep running: each request reads whether its prefix was forgotten.
 */
import type { Command } from 'commander';
import { decodeQb64, IDENTIFIER_CODES } from '../keri/qb64.ts';
import type { KelLedgerStorage } from '../store/kel-ledger.ts';
import { ConfigError } from '../witness/errors.ts';
import { openStore } from '../witness/node.ts';
import { progress } from './progress.ts';

const PREFIX = /^[A-Za-z0-9_-]{44}([A-Za-z0-9_-]{4})?$/;

/** Forget each prefix in `ledger`; the lines to print. */
export async function forgetKelPrefixes(ledger: KelLedgerStorage, prefixes: readonly string[]): Promise<string[]> {
  const lines: string[] = [];
  for (const p of prefixes) {
    const n = await ledger.forget(p);
    lines.push(`forgot ${p}: deleted ${n} stored event(s) with their receipts and proofs; its log entries stay; it is refused from now on`);
  }
  return lines;
}

export function addKelForgetCommand(kel: Command): void {
  kel
    .command('forget')
    .description(
      "delete prefixes' stored KERI events, receipts and proofs (role kel); their log entries stay; the prefixes are refused afterwards",
    )
    .argument('<prefixes...>', 'KERI identifier prefixes (qb64)')
    .option('--data-dir <dir>', 'the witness data directory (the SQLite store <data-dir>/witness.db)')
    .option('--store <spec>', 'sqlite:PATH or postgres://… (as given to serve)')
    .action(async (prefixes: string[], o: { dataDir?: string; store?: string }) => {
      for (const p of prefixes)
        if (!PREFIX.test(p) || decodeQb64(p, IDENTIFIER_CODES) === null)
          throw new ConfigError('invalid_config', `${JSON.stringify(p)}: not a KERI identifier prefix`);
      if (o.dataDir === undefined && o.store === undefined) throw new ConfigError('missing_option', '--data-dir (or --store) is required');
      const shown = progress('kel forget');
      let lines: string[];
      try {
        const store = await shown.during('opening the store', () => openStore(o.store, o.dataDir ?? '.'));
        try {
          lines = await shown.during('deleting what is stored', () => forgetKelPrefixes(store.kelLedger, prefixes));
        } finally {
          await store.close();
        }
      } finally {
        shown.done();
      }
      for (const l of lines) process.stdout.write(l + '\n');
    });
}
