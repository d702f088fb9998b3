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
import { collectList } from './options.ts';

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
