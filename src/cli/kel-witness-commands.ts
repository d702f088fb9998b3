/**
 * Commands of the KERI witness role (SPEC §3.6):
 *   anchor-witness verify kel-duplicity FILE [--kel FILE.kel.json]
 * checks a 409 proof offline: exit 0 and "OK …" when it proves duplicity, 1 and "INVALID …" when
 * not, 2 for unusable input (unreadable file, not JSON).
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { parseStrictJson } from '../encoding/json.ts';
import { checkProof, type ProofEvent } from '../kel-witness/duplicity.ts';
import { attachmentText } from '../keri/attachments.ts';
import { parseKelDocument } from '../keri/document.ts';
import { DEFAULT_KEL_LIMITS } from '../keri/types.ts';

function readJsonFile(path: string): unknown {
  return parseStrictJson(readFileSync(path, 'utf8'));
}

/** A `dir:` KEL file as proof events (its events with their attachments). */
function kelEvents(path: string): ProofEvent[] {
  const raw = parseKelDocument(readFileSync(path, 'utf8'), path, DEFAULT_KEL_LIMITS);
  if (!('events' in raw)) throw new Error(`${path}: ${raw.reason}: ${raw.detail}`);
  return raw.events.map((event, i) => ({
    event: event as Record<string, unknown>,
    attachment: attachmentText(raw.attachments[i] ?? '', i),
  }));
}

export function addKelWitnessCommands(program: Command): void {
  const verify =
    program.commands.find((c) => c.name() === 'verify') ??
    program.command('verify').description('verify what a node signs: exit 0 valid, non-zero with a one-line reason');
  verify
    .command('kel-duplicity')
    .description('check a KERI witness duplicity proof (a 409 of POST /receipts) offline: exit 0 proven, 1 not, 2 unusable input')
    .argument('<file>', 'the proof (anchor-witness/kel-duplicity/v1 JSON)')
    .option('--kel <file>', "the prefix's KEL (a dir: <prefix>.kel.json) when the proof carries none (kel: null)")
    .action((file: string, opts: { kel?: string }) => {
      let doc: unknown;
      let kel: ProofEvent[] | undefined;
      try {
        doc = readJsonFile(file);
        kel = opts.kel === undefined ? undefined : kelEvents(opts.kel);
      } catch (e) {
        process.stderr.write(`anchor-witness verify kel-duplicity: ${(e as Error).message}\n`);
        process.exitCode = 2;
        return;
      }
      const why = checkProof(doc, kel);
      if (why !== null) {
        process.stderr.write(`INVALID kel_duplicity_invalid: ${why}\n`);
        process.exitCode = 1;
        return;
      }
      const p = doc as { prefix: string; sn: number; a: { event: { d: string } }; b: { event: { d: string } } };
      process.stdout.write(`OK duplicity of ${p.prefix} at sn ${p.sn}: ${p.a.event.d} and ${p.b.event.d}\n`);
    });
}
