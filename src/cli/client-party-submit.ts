/**
 * `anchor-witness party submit`: the pending anchor (else the latest) to every witness
 * concurrently, every answer verified, finality reported; a proven duplicity freezes the seed.
 */
import type { Command } from 'commander';
import { partyClaim } from '../client/chain.ts';
import { writeJsonAtomic } from '../client/files.ts';
import { freeze, recordSubmission, submissionTarget } from '../client/party-state.ts';
import { finalityOf, resolveTargets, submitAnchor, type SubmitResult } from '../client/submit.ts';
import { stringifyJson } from '../encoding/json.ts';
import { encodeFinalizedBundle } from '../verify/finalize.ts';
import { action, addHttpOptions, CliFailure, examples, EXIT, httpOptions, type HttpFlags } from './client-io.ts';
import { err, loadState, saveState } from './client-party-files.ts';
import { collectList } from './options.ts';
import { UsageError } from '../verify/errors.ts';

function describe(r: SubmitResult): string {
  const o = r.outcome;
  switch (o.kind) {
    case 'cosigned':
      return `${r.witness}: ${o.replay ? 'already co-signed (replay)' : 'co-signed'}, leaf ${o.leafIndex} of ${o.treeSize}, verified`;
    case 'duplicity':
      return `${r.witness}: DUPLICITY — the witness holds a verified duplicity proof for this seed at index ${o.proof.index}; the seed is frozen`;
    case 'rejected':
      return `${r.witness}: refused ${o.status} ${o.code}: ${o.detail}`;
    case 'invalid_response':
      return `${r.witness}: INVALID RESPONSE ${o.code}: ${o.reason} (the witness misbehaves; it does not count)`;
    case 'unavailable':
      return `${r.witness}: unavailable: ${o.reason}`;
  }
}

/** Adds `submit` to the `party` command. */
export function addPartySubmitCommand(party: Command): void {
  addHttpOptions(
    examples(
      party
        .command('submit')
        .description(
          'submit the pending anchor (else the latest, for more receipts) to every witness concurrently; verify every answer; report finality',
        )
        .requiredOption('--state <file>', 'chain state file')
        .option('--witness <url...>', "witness base URLs (default: the members' urls in the witness set)", collectList)
        .option('--out <file>', 'when final, write the finalized-anchor bundle here')
        .option('--strict', 'any invalid witness response fails finalization')
        .option('--json', 'print the results as JSON'),
      [
        'anchor-witness party submit --state chain.json --witness http://127.0.0.1:8420 --witness http://127.0.0.1:8421 --out final.json',
        'AW_WITNESS=https://w1.example,https://w2.example anchor-witness party submit --state chain.json --json',
      ],
    ),
  ).action(
    action(async (opts: HttpFlags & { state: string; witness?: string[]; out?: string; strict?: boolean; json?: boolean }) => {
      const state = await loadState(opts.state);
      const target = submissionTarget(state);
      if (target === undefined) throw new UsageError('nothing to submit: sign an anchor first (anchor-witness party anchor next)');
      const http = httpOptions(opts);
      const { targets, unreachable } = await resolveTargets(state.witnessSet, opts.witness ?? [], http);
      for (const u of unreachable) err(`${u.url}: unavailable (cannot identify it): ${u.reason}`);
      err(`submitting anchor index ${target.anchor.index} to ${targets.length} witness(es)…`);
      const results = await submitAnchor(target.anchor, partyClaim(state.party), targets, {
        ...http,
        onEvent: (e) => {
          if (e.type === 'retry') err(`${e.witness}: ${e.reason}; retry ${e.attempt} in ${e.delayMs} ms`);
          else if (opts.json !== true) err(describe(e.result));
        },
      });
      const { result, bundle } = await finalityOf(target.anchor, state.witnessSet, results, target.receipts, {
        strict: opts.strict === true,
        party: { curve: state.curve, publicKey: state.publicKey },
      });
      const dup = results.find((r) => r.outcome.kind === 'duplicity');
      if (dup !== undefined && dup.outcome.kind === 'duplicity') await freeze(state, dup.outcome.wire);
      recordSubmission(state, bundle.receipts, result);
      await saveState(opts.state, state);
      if (result.final && opts.out !== undefined) writeJsonAtomic(opts.out, await encodeFinalizedBundle(bundle), 0o644);
      if (opts.json === true) {
        process.stdout.write(
          stringifyJson({
            index: target.anchor.index,
            final: result.final,
            finality: result,
            results: results.map((r) => ({
              witness: r.witness,
              url: r.url,
              attempts: r.attempts,
              outcome: r.outcome.kind === 'duplicity' ? { kind: 'duplicity', proof: r.outcome.wire } : r.outcome,
            })),
          }) + '\n',
        );
      } else {
        process.stdout.write(`${result.final ? 'FINAL' : 'NOT FINAL'} anchor index ${target.anchor.index}: ${result.reason}\n`);
      }
      if (dup !== undefined)
        throw new CliFailure('the seed is frozen: a witness proved duplicity (see the results); this chain cannot continue', EXIT.finding);
      if (!result.final) process.exitCode = EXIT.finding;
    }),
  );
}
