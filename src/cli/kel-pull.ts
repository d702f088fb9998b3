/**
 * `anchor-witness kel pull --from URL… --prefix P… --out DIR [--kel-max-bytes N]` (SPEC §3.6.8):
 * one line per prefix; exit 0 when every prefix was written or already current, 1 when one
 * diverged or no witness answered usably (nothing written for it), 2 for usage errors.
 */
import { mkdirSync } from 'node:fs';
import type { Command } from 'commander';
import { checkPullUrl, pullKel } from '../client/kel-pull.ts';
import { PREFIX_PATTERN } from '../keri/document.ts';
import { DEFAULT_KEL_LIMITS } from '../keri/types.ts';
import { intArg } from './options.ts';
import { UsageError } from '../verify/errors.ts';

const collect = (v: string, prev: string[]): string[] => [...prev, v];

export function addKelPullCommand(kel: Command): void {
  kel
    .command('pull')
    .description("fetch KELs from KERI witnesses (GET /query?typ=kel) into a dir: source; exit 1 when the witnesses' KELs diverge")
    .requiredOption('--from <url>', 'a KERI witness base URL (repeatable; https://, or http:// on loopback)', collect, [])
    .requiredOption('--prefix <prefix>', 'an identifier prefix to fetch (repeatable)', collect, [])
    .requiredOption('--out <dir>', 'the dir: source to write <prefix>.kel.json into (created when missing)')
    .option(
      '--kel-max-bytes <n>',
      'most bytes one KEL may have (an answer is read up to twice this)',
      intArg(1),
      DEFAULT_KEL_LIMITS.maxBytes,
    )
    .option('--kel-max-events <n>', 'most events one KEL may have', intArg(1), DEFAULT_KEL_LIMITS.maxEvents)
    .action(async (o: { from: string[]; prefix: string[]; out: string; kelMaxBytes: number; kelMaxEvents: number }) => {
      try {
        for (const url of o.from) checkPullUrl(url);
        for (const p of o.prefix) if (!PREFIX_PATTERN.test(p)) throw new UsageError(`not a 44-character qb64 prefix: ${p}`);
      } catch (e) {
        process.stderr.write(`anchor-witness kel pull: ${(e as Error).message}\n`);
        process.exitCode = 2;
        return;
      }
      mkdirSync(o.out, { recursive: true });
      let failed = false;
      for (const prefix of o.prefix) {
        const r = await pullKel(prefix, o.from, o.out, { kelMaxBytes: o.kelMaxBytes, maxEvents: o.kelMaxEvents }, (line) => {
          process.stderr.write(`${line}\n`);
        });
        switch (r.status) {
          case 'written':
            process.stdout.write(`wrote ${r.path}: tip sn ${r.sn} ${r.said} (from ${r.from})\n`);
            break;
          case 'unchanged':
            process.stdout.write(`unchanged ${r.path}: tip sn ${r.sn} ${r.said}\n`);
            break;
          case 'divergent':
          case 'unavailable':
            failed = true;
            process.stderr.write(`${r.status} ${prefix}: ${r.detail} (nothing written)\n`);
            break;
        }
      }
      process.exitCode = failed ? 1 : 0;
    });
}
