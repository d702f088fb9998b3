/**
 * Building the next anchor of a party's chain (SPEC §3.1, §3.3 checks 10–15), pure: the clock is
 * a parameter. A witness refuses an index, cumulative or timestamp lower than the latest anchor's
 * (`non_monotone`) and treats a second head at the latest index as duplicity, so the next anchor
 * must have a higher index, and a cumulative and timestamp at least the previous ones.
 */
import { normalizeKeriId } from '../anchor/did.ts';
import { deriveSeedId } from '../anchor/seed.ts';
import type { Anchor } from '../anchor/types.ts';
import { U128_LIMIT } from '../encoding/decimal.ts';
import { ClientError } from './errors.ts';
import type { UnsignedAnchor } from './party.ts';

export interface PartyIdentity {
  /** The agent that signs anchors (`did:keri:` optional). */
  agent: string;
  /** The root that delegated the agent; defaults to the agent itself. */
  root?: string;
  /** The scope SAID the seed is derived for. */
  scope?: string;
}

/** The seed id a witness derives for (root, agent, scope) — SPEC §3.1; root defaults to the agent. */
export function partySeedId(party: PartyIdentity): Uint8Array {
  if (party.scope === undefined || party.scope === '') throw new ClientError('chain_invalid', 'a derived seed needs a scope');
  const agent = normalizeKeriId(party.agent);
  const root = normalizeKeriId(party.root ?? party.agent);
  return deriveSeedId(root, agent, party.scope);
}

/** The `party` member of POST /v1/anchor for an identity (ids normalised). */
export function partyClaim(party: PartyIdentity): { agent: string; root?: string; scope?: string } {
  const claim: { agent: string; root?: string; scope?: string } = { agent: normalizeKeriId(party.agent) };
  if (party.root !== undefined) claim.root = normalizeKeriId(party.root);
  else if (party.scope !== undefined) claim.root = claim.agent;
  if (party.scope !== undefined) claim.scope = party.scope;
  return claim;
}

export interface NextAnchorInput {
  head: Uint8Array;
  /** Default: previous index + 1, or 0 for the first anchor. */
  index?: number;
  /** Absolute cumulative value; default: the previous one (0 for the first). */
  cumulative?: bigint;
  /** Added to the previous cumulative (exclusive with `cumulative`). */
  addCumulative?: bigint;
  /** Unix seconds (the caller's clock). */
  timestamp: number;
}

function invalid(message: string): never {
  throw new ClientError('chain_invalid', message);
}

/** The fields of the next anchor after `prev` (undefined for a new chain), checked for monotonicity. */
export function nextAnchorFields(
  prev: Anchor | undefined,
  chain: { seedId: Uint8Array; witnessSet: { said: string; threshold: number } },
  input: NextAnchorInput,
): UnsignedAnchor {
  if (input.head.length !== 32) invalid('head must be 32 bytes');
  if (chain.seedId.length !== 32) invalid('seed id must be 32 bytes');
  const index = input.index ?? (prev === undefined ? 0 : prev.index + 1);
  if (!Number.isSafeInteger(index) || index < 0) invalid('index must be an integer 0..2^53−1');
  if (prev !== undefined && index <= prev.index)
    invalid(`index ${index} must be above the previous anchor's ${prev.index} (a second head at one index is duplicity)`);
  if (input.cumulative !== undefined && input.addCumulative !== undefined) invalid('give cumulative or addCumulative, not both');
  const base = prev?.cumulative ?? 0n;
  const cumulative = input.cumulative ?? base + (input.addCumulative ?? 0n);
  if (cumulative < 0n || cumulative >= U128_LIMIT) invalid('cumulative must be an unsigned integer below 2^128');
  if (cumulative < base) invalid(`cumulative ${cumulative} is below the previous anchor's ${base}`);
  if (!Number.isSafeInteger(input.timestamp) || input.timestamp < 0) invalid('timestamp must be whole unix seconds');
  if (prev !== undefined && input.timestamp < prev.timestamp)
    invalid(`timestamp ${input.timestamp} is before the previous anchor's ${prev.timestamp}`);
  return { seedId: chain.seedId, index, head: input.head, cumulative, timestamp: input.timestamp, witnessSet: { ...chain.witnessSet } };
}
