/**
 * `anchor-witness party …`: keys, witness sets, and a local anchor chain submitted to witnesses.
 *   party keygen --out FILE [--curve ed25519|p256]
 *   party witness-set --witness URL… --threshold N [--out FILE]
 *   party init --state FILE --key FILE --agent DID [--root DID] (--scope SAID | --seed HEX) --witness-set FILE
 *   party anchor next --state FILE (--head HEX | --head-file FILE) [--index N] [--cumulative N | --add N] [--timestamp T]
 *   party submit --state FILE [--witness URL…] [--out FILE] [--strict] [--json]
 *   party status --state FILE [--json]
 *   party bundle --state FILE [--out FILE]
 * (submit: client-party-submit.ts; status and bundle: client-party-report.ts; files: client-party-files.ts)
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { encodeAnchor } from '../anchor/codec.ts';
import { partyClaim } from '../client/chain.ts';
import { writeJsonAtomic } from '../client/files.ts';
import { generatePartyKey, partyKeyToPem } from '../client/keys.ts';
import { initPartyState, signNextAnchor } from '../client/party-state.ts';
import { fetchHealth } from '../client/submit.ts';
import { sha256 } from '../crypto/sha256.ts';
import { parseDecimal } from '../encoding/decimal.ts';
import { encodeHex } from '../encoding/hex.ts';
import { stringifyJson } from '../encoding/json.ts';
import { parseTimestamp } from '../encoding/time.ts';
import { writeNewKeyFile } from '../keys/keyfile.ts';
import { encodeWitnessSet } from '../verify/witness-set.ts';
import { action, addHttpOptions, examples, hexArg, httpOptions, readWitnessSet, type HttpFlags } from './client-io.ts';
import { err, loadKey, saveState, loadState, userWitnessSet } from './client-party-files.ts';
import { addPartyReportCommands } from './client-party-report.ts';
import { addPartySubmitCommand } from './client-party-submit.ts';
import { collectList, intArg } from './options.ts';
import { UsageError } from '../verify/errors.ts';

function parseTime(text: string): number {
  if (/^[0-9]+$/.test(text)) return Number(text);
  return parseTimestamp(text);
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
      if (opts.curve !== 'ed25519' && opts.curve !== 'p256') throw new UsageError('--curve must be ed25519 or p256');
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
      if (urls.length === 0) throw new UsageError('give at least one --witness URL');
      const infos = await Promise.all(urls.map((u) => fetchHealth(u, httpOptions(opts))));
      const set = userWitnessSet(
        opts.threshold,
        infos.map((h, i) => ({ name: h.name, publicKey: h.publicKey, logOrigin: h.logOrigin, url: urls[i]! })),
      );
      const wire = await encodeWitnessSet(set);
      if (opts.out !== undefined) {
        if (existsSync(opts.out)) throw new UsageError(`${opts.out} exists; refusing to overwrite`);
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
        if (existsSync(opts.state)) throw new UsageError(`${opts.state} exists; refusing to overwrite a chain state`);
        if ((opts.scope === undefined) === (opts.seed === undefined))
          throw new UsageError('give --scope (derived seed) or --seed (underived), exactly one');
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
          throw new UsageError('give --head HEX or --head-file FILE, exactly one');
        const head = opts.head !== undefined ? hexArg(32, '--head')(opts.head) : sha256(readFileSync(opts.headFile!));
        const key = loadKey(state.keyFile);
        const decimal = (t: string, what: string): bigint => {
          try {
            return parseDecimal(t);
          } catch {
            throw new UsageError(`${what} must be a canonical decimal below 2^128`);
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

  addPartySubmitCommand(party);
  addPartyReportCommands(party);
}
