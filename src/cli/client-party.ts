/**
 * `anchor-witness party …`: keys, witness sets, and a local anchor chain submitted to witnesses.
 *   party keygen --out FILE [--curve ed25519|p256]
 *   party witness-set --witness URL… --threshold N [--out FILE]
 *   party init --state FILE --key FILE --agent DID [--root DID] (--scope SAID | --seed HEX) --witness-set FILE
 *   party anchor next --state FILE (--head HEX | --head-file FILE) [--index N] [--cumulative N | --add N] [--timestamp T]
 *   party submit --state FILE [--witness URL…] [--out FILE] [--strict] [--json]
 *   party status --state FILE [--json]
 *   party bundle --state FILE [--out FILE]
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { Anchor } from '../anchor/types.ts';
import { sha256 } from '../crypto/sha256.ts';
import { parseDecimal } from '../encoding/decimal.ts';
import { encodeHex } from '../encoding/hex.ts';
import { stringifyJson } from '../encoding/json.ts';
import { parseTimestamp } from '../encoding/time.ts';
import { encodeAnchor } from '../anchor/codec.ts';
import { readKeyFile, writeNewKeyFile } from '../keys/keyfile.ts';
import { partyClaim } from '../client/chain.ts';
import { ClientError } from '../client/errors.ts';
import { encodeFinalizedBundle, verifyFinalized, type FinalityResult } from '../verify/finalize.ts';
import { VerificationError } from '../verify/errors.ts';
import type { Receipt } from '../verify/receipt.ts';
import { readJsonFile, writeJsonAtomic } from '../client/files.ts';
import { generatePartyKey, partyKeyFromPem, partyKeyToPem, type PartyKey } from '../client/keys.ts';
import {
  encodePartyState,
  freeze,
  initPartyState,
  parsePartyState,
  recordSubmission,
  signNextAnchor,
  submissionTarget,
  type PartyState,
} from '../client/party-state.ts';
import { fetchHealth, finalityOf, resolveTargets, submitAnchor, type SubmitResult } from '../client/submit.ts';
import { encodeWitnessSet, makeWitnessSet, type WitnessSet } from '../verify/witness-set.ts';
import {
  action,
  addHttpOptions,
  CliFailure,
  examples,
  EXIT,
  hexArg,
  httpOptions,
  readWitnessSet,
  usageFailure,
  type HttpFlags,
} from './client-io.ts';
import { collectList, intArg } from './options.ts';

async function loadState(path: string): Promise<PartyState> {
  const doc = readJsonFile(path);
  if (doc === undefined)
    throw new ClientError('usage', `no chain state at ${path} (create it with: anchor-witness party init --state ${path} …)`);
  return parsePartyState(doc).catch((e: unknown) => {
    throw e instanceof VerificationError && e.code === 'witness_set_invalid' ? usageFailure(e) : e;
  });
}

async function saveState(path: string, s: PartyState): Promise<void> {
  writeJsonAtomic(path, await encodePartyState(s));
}

/** A set built from the user's flags: an invalid one is unusable input (exit 2). */
function userWitnessSet(...args: Parameters<typeof makeWitnessSet>): WitnessSet {
  try {
    return makeWitnessSet(...args);
  } catch (e) {
    throw e instanceof VerificationError && e.code === 'witness_set_invalid' ? usageFailure(e) : e;
  }
}

function loadKey(path: string): PartyKey {
  return partyKeyFromPem(readKeyFile(path));
}

function parseTime(text: string): number {
  if (/^[0-9]+$/.test(text)) return Number(text);
  return parseTimestamp(text);
}

const err = (line: string): void => {
  process.stderr.write(line + '\n');
};

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

export function addPartyCommands(program: Command): void {
  const party = examples(
    program.command('party').description('party side: keys, witness sets, a local anchor chain, submission and finalization'),
    [
      'anchor-witness party keygen --out party.pem',
      'anchor-witness party witness-set --witness https://w1.example --witness https://w2.example --witness https://w3.example --threshold 2 --out set.json',
      'anchor-witness party init --state chain.json --key party.pem --agent did:keri:EAgent --root did:keri:ERoot --scope EScope --witness-set set.json',
      'anchor-witness party anchor next --state chain.json --head $(sha256sum kel.json | cut -c1-64)',
      'anchor-witness party submit --state chain.json --out final.json',
      'anchor-witness party status --state chain.json',
    ],
  );

  examples(
    party
      .command('keygen')
      .description('write a new party key (PKCS#8 PEM, mode 0600; never overwrites) and print its public key hex')
      .requiredOption('--out <file>', 'where to write the key')
      .option('--curve <curve>', 'ed25519 or p256', 'ed25519'),
    ['anchor-witness party keygen --out party.pem', 'anchor-witness party keygen --curve p256 --out party-p256.pem'],
  ).action(
    action((opts: { out: string; curve: string }) => {
      if (opts.curve !== 'ed25519' && opts.curve !== 'p256') throw new ClientError('usage', '--curve must be ed25519 or p256');
      const key = generatePartyKey(opts.curve);
      writeNewKeyFile(opts.out, partyKeyToPem(key));
      process.stdout.write(encodeHex(key.publicKey) + '\n');
      err(`registry key entry: {"curve": "${key.curve}", "public_key": "${encodeHex(key.publicKey)}"}`);
    }),
  );

  addHttpOptions(
    examples(
      party
        .command('witness-set')
        .description("build a witness set from the witnesses' /health (check the keys out of band!) and print it with its SAID")
        .option('--witness <url...>', 'witness base URL (repeatable, or comma-separated)', collectList)
        .requiredOption('--threshold <n>', 'cosignatures needed for finality', intArg(1, 64))
        .option('--out <file>', 'write the set here (else stdout)'),
      [
        'anchor-witness party witness-set --witness http://127.0.0.1:8420,http://127.0.0.1:8421,http://127.0.0.1:8422 --threshold 2 --out set.json',
      ],
    ),
  ).action(
    action(async (opts: HttpFlags & { witness?: string[]; threshold: number; out?: string }) => {
      const urls = opts.witness ?? [];
      if (urls.length === 0) throw new ClientError('usage', 'give at least one --witness URL');
      const infos = await Promise.all(urls.map((u) => fetchHealth(u, httpOptions(opts))));
      const set = userWitnessSet(
        opts.threshold,
        infos.map((h, i) => ({ name: h.name, publicKey: h.publicKey, logOrigin: h.logOrigin, url: urls[i]! })),
      );
      const wire = await encodeWitnessSet(set);
      if (opts.out !== undefined) {
        if (existsSync(opts.out)) throw new ClientError('usage', `${opts.out} exists; refusing to overwrite`);
        writeJsonAtomic(opts.out, wire, 0o644);
        process.stdout.write(wire.d + '\n');
      } else {
        process.stdout.write(stringifyJson(wire, 2) + '\n');
      }
      for (const m of set.members) err(`${m.name}: key ${encodeHex(m.publicKey)} (from its /health — confirm it with the operator)`);
    }),
  );

  examples(
    party
      .command('init')
      .description('create the local chain state for one seed')
      .requiredOption('--state <file>', 'chain state file to create (refuses to overwrite)')
      .requiredOption('--key <file>', 'party key file (from party keygen)')
      .requiredOption('--agent <did>', 'the agent identifier (did:keri:…) registered at the witnesses')
      .option('--root <did>', 'the root that delegated the agent (default: the agent)')
      .option('--scope <said>', 'scope SAID: the seed id derives from root, agent and scope')
      .option('--seed <hex>', 'an underived seed id (witnesses must run with --allow-underived-seeds)')
      .requiredOption('--witness-set <file>', 'the witness set (from party witness-set)'),
    [
      'anchor-witness party init --state chain.json --key party.pem --agent did:keri:EAgent --root did:keri:ERoot --scope EScope --witness-set set.json',
    ],
  ).action(
    action(
      async (opts: { state: string; key: string; agent: string; root?: string; scope?: string; seed?: string; witnessSet: string }) => {
        if (existsSync(opts.state)) throw new ClientError('usage', `${opts.state} exists; refusing to overwrite a chain state`);
        if ((opts.scope === undefined) === (opts.seed === undefined))
          throw new ClientError('usage', 'give --scope (derived seed) or --seed (underived), exactly one');
        const key = loadKey(opts.key);
        const identity = {
          agent: opts.agent,
          ...(opts.root !== undefined ? { root: opts.root } : {}),
          ...(opts.scope !== undefined ? { scope: opts.scope } : {}),
        };
        partyClaim(identity); // validates the identifiers
        const state = initPartyState({
          keyFile: resolve(opts.key),
          key,
          party: identity,
          witnessSet: await readWitnessSet(opts.witnessSet),
          ...(opts.seed !== undefined ? { seedId: hexArg(32, '--seed')(opts.seed) } : {}),
        });
        await saveState(opts.state, state);
        process.stdout.write(encodeHex(state.seedId) + '\n');
        err(
          `chain state ${opts.state}: seed ${encodeHex(state.seedId)}, witness set ${(await encodeWitnessSet(state.witnessSet)).d} (threshold ${state.witnessSet.threshold})`,
        );
      },
    ),
  );

  const anchor = examples(party.command('anchor').description('anchors of the local chain'), [
    'anchor-witness party anchor next --state chain.json --head-file kel-event.json',
  ]);
  examples(
    anchor
      .command('next')
      .description('sign the next anchor of the chain (index, head, cumulative, timestamp) and keep it pending until final')
      .requiredOption('--state <file>', 'chain state file')
      .option('--head <hex>', 'the 32-byte head to anchor (hex)')
      .option('--head-file <file>', 'anchor the SHA-256 of this file')
      .option('--index <n>', 'index (default: previous + 1, or 0)', intArg(0))
      .option('--cumulative <n>', 'absolute cumulative value (default: the previous one)')
      .option('--add <n>', 'add to the previous cumulative value')
      .option('--timestamp <t>', 'unix seconds or YYYY-MM-DDTHH:MM:SSZ (default: now)'),
    [
      'anchor-witness party anchor next --state chain.json --head 0101010101010101010101010101010101010101010101010101010101010101',
      'anchor-witness party anchor next --state chain.json --head-file kel-event.json --add 1',
    ],
  ).action(
    action(
      async (opts: {
        state: string;
        head?: string;
        headFile?: string;
        index?: number;
        cumulative?: string;
        add?: string;
        timestamp?: string;
      }) => {
        const state = await loadState(opts.state);
        if ((opts.head === undefined) === (opts.headFile === undefined))
          throw new ClientError('usage', 'give --head HEX or --head-file FILE, exactly one');
        const head = opts.head !== undefined ? hexArg(32, '--head')(opts.head) : sha256(readFileSync(opts.headFile!));
        const key = loadKey(state.keyFile);
        const decimal = (t: string, what: string): bigint => {
          try {
            return parseDecimal(t);
          } catch {
            throw new ClientError('usage', `${what} must be a canonical decimal below 2^128`);
          }
        };
        const { anchor: signed, superseded } = await signNextAnchor(state, key, {
          head,
          timestamp: opts.timestamp !== undefined ? parseTime(opts.timestamp) : Math.floor(Date.now() / 1000),
          ...(opts.index !== undefined ? { index: opts.index } : {}),
          ...(opts.cumulative !== undefined ? { cumulative: decimal(opts.cumulative, '--cumulative') } : {}),
          ...(opts.add !== undefined ? { addCumulative: decimal(opts.add, '--add') } : {}),
        });
        await saveState(opts.state, state);
        process.stdout.write(stringifyJson(encodeAnchor(signed), 2) + '\n');
        if (superseded !== undefined) err(`note: pending anchor ${superseded.index} was never final; index ${signed.index} supersedes it`);
        err(`signed anchor index ${signed.index} (pending: run anchor-witness party submit --state ${opts.state})`);
      },
    ),
  );

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
      if (target === undefined)
        throw new ClientError('usage', 'nothing to submit: sign an anchor first (anchor-witness party anchor next)');
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
