/**
 * `token-bridge` options and tools of SPEC §7.1–§7.2 (rev 4), kept in one module so the command
 * declarations in token-bridge.ts and federation-commands.ts only gain one call each:
 *  - `serve`: `--kel-source`, `--kel-poll-seconds`, `--kel-max-*`, `--require-finalized-anchor`,
 *    `--anchor-witness-set` (once or twice), `--anchor-freshness`, `--anchor-scope`,
 *    `--anchor-floor-max-seeds`, `--anchor-floor-rate`;
 *  - `chain-state build --chain FILE… [--out FILE]`: the tree over the party's live chains;
 *  - `credentials --finalized-anchor FILE --chain-state FILE`: the request member.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { decodeAttestation } from '../bridge/attestation.ts';
import { attestationChainDigest, buildChainState, type ChainStateDocument } from '../bridge/chain-state.ts';
import { BridgeConfigError } from '../bridge/errors.ts';
import type { BridgeConfig } from '../bridge/node.ts';
import { DEFAULT_KEL_LIMITS } from '../keri/index.ts';
import { DEFAULT_KEL_AGGREGATE } from '../registry/kel-evaluator.ts';
import { collectList, durationArg, intArg } from './options.ts';

export interface KelGateFlags {
  kelSource?: string[];
  kelPollSeconds?: number;
  kelMaxEvents?: number;
  kelMaxBytes?: number;
  kelMaxIdentifiers?: number;
  kelMaxTotalBytes?: number;
  kelMaxHeap?: number;
  requireFinalizedAnchor?: boolean;
  anchorWitnessSet?: string[];
  anchorFreshness?: number;
  anchorScope?: string;
  anchorFloorMaxSeeds?: number;
  anchorFloorRate?: string;
}

const repeat = (v: string, prev: string[] | undefined): string[] => [...(prev ?? []), v];

/** The serve options (SPEC §7.1, §7.2). */
export function addKelGateOptions(cmd: Command): Command {
  return cmd
    .option(
      '--kel-source <dir:PATH|git:PATH>',
      'trusted roots without "keys" take their current keys from this KEL source (SPEC §7.1)',
      repeat,
    )
    .option('--kel-poll-seconds <s>', 'how often the KEL source is re-read (0 = only on SIGHUP and renames; default 30)', intArg(0))
    .option('--kel-max-events <n>', `most events one KEL may have (default ${DEFAULT_KEL_LIMITS.maxEvents})`, intArg(1))
    .option('--kel-max-bytes <n>', `most bytes one KEL may have (default ${DEFAULT_KEL_LIMITS.maxBytes})`, intArg(1))
    .option('--kel-max-identifiers <n>', `most identifiers one reload reads (default ${DEFAULT_KEL_AGGREGATE.maxIdentifiers})`, intArg(1))
    .option('--kel-max-total-bytes <n>', `most bytes one reload reads (default ${DEFAULT_KEL_AGGREGATE.maxTotalBytes})`, intArg(1))
    .option('--kel-max-heap <mib>', `heap limit of the KEL worker thread (default ${DEFAULT_KEL_AGGREGATE.maxHeapMb})`, intArg(16))
    .option('--require-finalized-anchor', 'mint only with a fresh k-of-n finalized anchor committing to the presented chain (SPEC §7.2)')
    .option('--anchor-witness-set <file>', 'the pinned anchor-witness/witness-set/v1 (twice during a witness-key rotation)', repeat)
    .option('--anchor-freshness <duration>', 'oldest finalized anchor accepted (1m..24h; default 10m)', durationArg(60, 86_400))
    .option('--anchor-scope <s>', 'the seed scope of the chain-state anchors (default auths-bridge/chain-state/v1)')
    .option('--anchor-floor-max-seeds <n>', 'most seeds with an anchor floor (beyond: 503 anchor_floor_full; default 1000000)', intArg(1))
    .option('--anchor-floor-rate <rps[:burst]>', 'per-client-IP limit on POST /anchor-floor (default 1:10)');
}

/** Copy the flags into the bridge configuration. */
export function applyKelGateFlags(flags: KelGateFlags, config: BridgeConfig): void {
  if (flags.kelSource !== undefined) config.kelSources = flags.kelSource;
  if (flags.kelPollSeconds !== undefined) config.kelPollSeconds = flags.kelPollSeconds;
  if (flags.kelMaxEvents !== undefined || flags.kelMaxBytes !== undefined)
    config.kelLimits = {
      maxEvents: flags.kelMaxEvents ?? DEFAULT_KEL_LIMITS.maxEvents,
      maxBytes: flags.kelMaxBytes ?? DEFAULT_KEL_LIMITS.maxBytes,
    };
  if (flags.kelMaxIdentifiers !== undefined || flags.kelMaxTotalBytes !== undefined || flags.kelMaxHeap !== undefined)
    config.kelAggregate = {
      maxIdentifiers: flags.kelMaxIdentifiers ?? DEFAULT_KEL_AGGREGATE.maxIdentifiers,
      maxTotalBytes: flags.kelMaxTotalBytes ?? DEFAULT_KEL_AGGREGATE.maxTotalBytes,
      maxHeapMb: flags.kelMaxHeap ?? DEFAULT_KEL_AGGREGATE.maxHeapMb,
    };
  if (flags.requireFinalizedAnchor === true) config.requireFinalizedAnchor = true;
  if (flags.anchorWitnessSet !== undefined) config.anchorWitnessSetFiles = flags.anchorWitnessSet;
  if (flags.anchorFreshness !== undefined) config.anchorFreshnessSeconds = flags.anchorFreshness;
  if (flags.anchorScope !== undefined) config.anchorScope = flags.anchorScope;
  if (flags.anchorFloorMaxSeeds !== undefined) config.anchorFloorMaxSeeds = flags.anchorFloorMaxSeeds;
  if (flags.anchorFloorRate !== undefined) {
    const m = /^(\d+(?:\.\d+)?)(?::(\d+))?$/.exec(flags.anchorFloorRate);
    if (m === null || Number(m[1]) <= 0) throw new BridgeConfigError('invalid_option', '--anchor-floor-rate must be rps[:burst], rps > 0');
    config.anchorFloorRate = { rps: Number(m[1]), burst: m[2] === undefined ? Math.max(1, Math.ceil(Number(m[1]))) : Number(m[2]) };
  }
}

function readJson(flag: string, file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new BridgeConfigError('invalid_option', `${flag} ${file}: ${(e as Error).message}`);
  }
}

/** `token-bridge chain-state build --chain FILE… [--out FILE]`: each FILE one attestation chain (JSON array, root → leaf). */
export function addChainStateCommand(program: Command, out: (text: string) => void): void {
  program
    .command('chain-state')
    .description("the tree over a party's live chains whose head its chain-state anchor carries (docs/bridge.md)")
    .command('build')
    .description(
      'write {"v":"auths-bridge/chain-state/v1","head","tree_size","chains":[{digest, leaf_index, hashes}]}, chains in the order given',
    )
    .requiredOption('--chain <file>', 'one live attestation chain (JSON array, root → leaf); repeatable, in the tree order', collectList)
    .option('--out <file>', 'write here (renamed into place) instead of stdout')
    .action((flags: { chain: string[]; out?: string }) => {
      const digests = flags.chain.map((file) => {
        const doc = readJson('--chain', file);
        if (!Array.isArray(doc) || doc.length < 1 || doc.length > 8)
          throw new BridgeConfigError('invalid_option', `--chain ${file}: must be a JSON array of 1..8 attestations`);
        return attestationChainDigest(doc.map((a: unknown, i) => decodeAttestation(a, `/${i}`)));
      });
      const text = JSON.stringify(buildChainState(digests)) + '\n';
      if (flags.out === undefined) out(text);
      else {
        writeFileSync(`${flags.out}.tmp`, text, { mode: 0o644 });
        renameSync(`${flags.out}.tmp`, flags.out);
      }
    });
}

/**
 * `credentials --finalized-anchor FILE --chain-state FILE`: the `/token` member for the presented
 * chain (its digest looked up in the chain state), or undefined without the flags.
 */
export function finalizedAnchorMember(
  flags: { finalizedAnchor?: string; chainState?: string; anchorAgent?: string },
  chain: readonly unknown[],
): Record<string, unknown> | undefined {
  if (flags.finalizedAnchor === undefined && flags.chainState === undefined) return undefined;
  if (flags.finalizedAnchor === undefined || flags.chainState === undefined)
    throw new BridgeConfigError('invalid_option', '--finalized-anchor and --chain-state go together');
  const bundle = readJson('--finalized-anchor', flags.finalizedAnchor);
  const state = readJson('--chain-state', flags.chainState) as ChainStateDocument;
  const digest = Buffer.from(attestationChainDigest(chain.map((a, i) => decodeAttestation(a, `/${i}`)))).toString('hex');
  const entry = Array.isArray(state.chains) ? state.chains.find((c) => c.digest === digest) : undefined;
  if (entry === undefined)
    throw new BridgeConfigError(
      'invalid_option',
      `--chain-state ${flags.chainState}: the chain (digest ${digest}) is not in this chain state`,
    );
  return {
    bundle,
    ...(flags.anchorAgent === undefined ? {} : { agent: flags.anchorAgent }),
    proof: { leaf_index: entry.leaf_index, tree_size: entry.tree_size, hashes: entry.hashes },
  };
}
