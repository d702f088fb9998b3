/**
 * The files of `anchor-witness party …`: the chain state (`--state`), the party key, a witness set
 * built from flags, and the commands' stderr lines.
 */
import type { PartyKey } from '../client/keys.ts';
import { readJsonFile, writeJsonAtomic } from '../client/files.ts';
import { partyKeyFromPem } from '../client/keys.ts';
import { encodePartyState, parsePartyState, type PartyState } from '../client/party-state.ts';
import { readKeyFile } from '../keys/keyfile.ts';
import { VerificationError, UsageError } from '../verify/errors.ts';
import { makeWitnessSet, type WitnessSet } from '../verify/witness-set.ts';
import { usageFailure } from './client-io.ts';

export async function loadState(path: string): Promise<PartyState> {
  const doc = readJsonFile(path);
  if (doc === undefined) throw new UsageError(`no chain state at ${path} (create it with: anchor-witness party init --state ${path} …)`);
  return parsePartyState(doc).catch((e: unknown) => {
    throw e instanceof VerificationError && e.code === 'witness_set_invalid' ? usageFailure(e) : e;
  });
}

export async function saveState(path: string, s: PartyState): Promise<void> {
  writeJsonAtomic(path, await encodePartyState(s));
}

/** A set built from the user's flags: an invalid one is unusable input (exit 2). */
export function userWitnessSet(...args: Parameters<typeof makeWitnessSet>): WitnessSet {
  try {
    return makeWitnessSet(...args);
  } catch (e) {
    throw e instanceof VerificationError && e.code === 'witness_set_invalid' ? usageFailure(e) : e;
  }
}

export function loadKey(path: string): PartyKey {
  return partyKeyFromPem(readKeyFile(path));
}

/** A line on stderr (progress and notes; stdout carries the result). */
export const err = (line: string): void => {
  process.stderr.write(line + '\n');
};
