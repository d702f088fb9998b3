/**
 * `anchor-witness party status` and `party bundle`: the local chain read back, its finality
 * verified again, and the finalized-anchor bundle of the latest final anchor.
 */
import type { Command } from 'commander';
import type { Anchor } from '../anchor/types.ts';
import { writeJsonAtomic } from '../client/files.ts';
import { encodeHex } from '../encoding/hex.ts';
import { stringifyJson } from '../encoding/json.ts';
import { encodeFinalizedBundle, verifyFinalized, type FinalityResult } from '../verify/finalize.ts';
import type { Receipt } from '../verify/receipt.ts';
import { encodeWitnessSet } from '../verify/witness-set.ts';
import { action, CliFailure, examples } from './client-io.ts';
import { loadState } from './client-party-files.ts';

/** Adds `status` and `bundle` to the `party` command. */
export function addPartyReportCommands(party: Command): void {
  examples(
    party
      .command('status')
      .description('show the local chain: seed, witness set, latest and pending anchors, receipts, finality')
      .requiredOption('--state <file>', 'chain state file')
      .option('--json', 'machine-readable'),
    ['anchor-witness party status --state chain.json', 'anchor-witness party status --state chain.json --json | jq .latest.final'],
  ).action(
    action(async (opts: { state: string; json?: boolean }) => {
      const state = await loadState(opts.state);
      const check = (x: { anchor: Anchor; receipts: Receipt[] }): Promise<FinalityResult> =>
        verifyFinalized(x.anchor, state.witnessSet, x.receipts, { party: { curve: state.curve, publicKey: state.publicKey } });
      const latest = state.latest === null ? null : await check(state.latest);
      const pending = state.pending === null ? null : await check(state.pending);
      const set = await encodeWitnessSet(state.witnessSet);
      if (opts.json === true) {
        process.stdout.write(
          stringifyJson({
            seed_id: encodeHex(state.seedId),
            party: state.party,
            public_key: encodeHex(state.publicKey),
            curve: state.curve,
            witness_set: { said: set.d, threshold: set.threshold, members: set.members.map((m) => m.name) },
            latest:
              state.latest === null
                ? null
                : { index: state.latest.anchor.index, head: encodeHex(state.latest.anchor.head), final: latest!.final, finality: latest },
            pending:
              state.pending === null
                ? null
                : { index: state.pending.anchor.index, head: encodeHex(state.pending.anchor.head), final: false, finality: pending },
            frozen: state.frozen,
            history: state.history.length,
          }) + '\n',
        );
        return;
      }
      const lines = [
        `seed       ${encodeHex(state.seedId)}`,
        `party      ${state.party.agent}${state.party.root !== undefined ? ` (root ${state.party.root})` : ''}${state.party.scope !== undefined ? ` scope ${state.party.scope}` : ''}`,
        `key        ${state.curve} ${encodeHex(state.publicKey)}`,
        `witnesses  ${set.d}: threshold ${set.threshold} of ${set.members.map((m) => m.name).join(', ')}`,
      ];
      const show = (label: string, a: { anchor: Anchor }, r: FinalityResult): void => {
        lines.push(
          `${label} index ${a.anchor.index} head ${encodeHex(a.anchor.head)} cumulative ${a.anchor.cumulative} — ${r.final ? 'FINAL' : 'not final'} (${r.valid}/${r.threshold})`,
        );
        for (const m of r.members)
          lines.push(
            `             ${m.name}: ${m.status === 'valid' ? `cosigned, leaf ${m.leafIndex} of ${m.treeSize}` : m.status === 'missing' ? 'no receipt' : `INVALID ${m.code}`}`,
          );
      };
      if (state.latest !== null) show('latest    ', state.latest, latest!);
      else lines.push('latest     (none)');
      if (state.pending !== null) show('pending   ', state.pending, pending!);
      if (state.frozen !== null) lines.push(`FROZEN     duplicity proven at index ${state.frozen.index}`);
      process.stdout.write(lines.join('\n') + '\n');
    }),
  );

  examples(
    party
      .command('bundle')
      .description('write the finalized-anchor bundle of the latest final anchor (for verify finalized)')
      .requiredOption('--state <file>', 'chain state file')
      .option('--out <file>', 'write here (else stdout)'),
    [
      'anchor-witness party bundle --state chain.json --out final.json && anchor-witness verify finalized final.json --witness-set set.json --party-key $(anchor-witness party status --state chain.json --json | jq -r .public_key)',
    ],
  ).action(
    action(async (opts: { state: string; out?: string }) => {
      const state = await loadState(opts.state);
      if (state.latest === null) throw new CliFailure('no anchor of this chain is final yet');
      const wire = await encodeFinalizedBundle({
        anchor: state.latest.anchor,
        witnessSet: state.witnessSet,
        receipts: state.latest.receipts,
      });
      if (opts.out !== undefined) writeJsonAtomic(opts.out, wire, 0o644);
      else process.stdout.write(stringifyJson(wire, 2) + '\n');
    }),
  );
}
