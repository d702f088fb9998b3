/**
 * The acceptance rules of SPEC §3.3 as pure functions of (request, registry snapshot, seed state,
 * now). Checks 2–6 need no seed state (`checkSubmission`, run before taking the per-seed lock);
 * checks 7–15 (`decideAgainstSeed`) run under the lock against the committed latest anchor.
 * The first failing check answers. Check 1 (schema and canonical forms) is the decoder's job.
 */
import { Buffer } from 'node:buffer';
import { deriveSeedId } from './seed.ts';
import { makeDuplicityProof, samePartyKey } from './duplicity.ts';
import { verifyPartySignature } from './party-signature.ts';
import { keyFingerprint } from './registry.ts';
import type { Registry, RegistryParty } from './registry.ts';
import type { Anchor, DuplicityProof, PartyClaim } from './types.ts';
import type { AnchorRejectionCode } from './errors.ts';
import { partyMessage } from './messages.ts';

export const MAX_FUTURE_SKEW_SECS = 300;

export interface SeedState {
  /** The latest anchor this witness co-signed for the seed. */
  latest: Anchor;
  /** `did:keri:` id of the agent that created the seed here. */
  owner: string;
  /** Set once the seed is frozen by a stored duplicity proof. */
  duplicity?: DuplicityProof;
}

export interface Rejection {
  outcome: 'reject';
  status: 403 | 409 | 422 | 429;
  code: AnchorRejectionCode;
  detail: string;
  retryAfter?: number;
}

export type Decision =
  | Rejection
  /** 409 with the stored proof: the seed is frozen (check 9). */
  | { outcome: 'frozen'; proof: DuplicityProof }
  /** 409 with a new proof, to be stored, logged and to freeze the seed (check 10). */
  | { outcome: 'duplicity'; proof: DuplicityProof }
  /** 200 replay of the stored latest anchor (check 12). */
  | { outcome: 'replay' }
  /** Co-sign and log (check 15). */
  | { outcome: 'cosign'; newSeed: boolean };

const reject = (status: Rejection['status'], code: AnchorRejectionCode, detail: string, retryAfter?: number): Rejection =>
  retryAfter === undefined ? { outcome: 'reject', status, code, detail } : { outcome: 'reject', status, code, detail, retryAfter };

/** Checks 2–4: the party, its delegation claim, and that the key is one of its current keys. */
export function checkParty(anchor: Anchor, claim: PartyClaim, registry: Registry): { party: RegistryParty } | Rejection {
  const party = registry.parties.get(claim.agent);
  if (party === undefined) return reject(403, 'unknown_party', `${claim.agent} is not in this witness's party registry`);
  if (claim.root !== undefined && claim.root !== claim.agent && claim.root !== party.delegator) {
    return reject(403, 'delegation_mismatch', `${claim.root} is not the delegator of ${claim.agent}`);
  }
  const fp = keyFingerprint(anchor.sigParty.curve, anchor.sigParty.publicKey);
  if (!party.keys.some((k) => keyFingerprint(k.curve, k.publicKey) === fp)) {
    return reject(403, 'key_not_current', `sig_party is not a current key of ${claim.agent}`);
  }
  return { party };
}

/** Check 5's outcome when the signature was verified (true) or not (false). */
export function signatureRejection(valid: boolean): Rejection | null {
  return valid ? null : reject(422, 'bad_signature', 'the party signature does not verify over the party message');
}

/** Check 6: at most MAX_FUTURE_SKEW_SECS ahead of the witness clock. */
export function checkTimestamp(anchor: Anchor, now: number): Rejection | null {
  const ahead = anchor.timestamp - now;
  if (ahead > MAX_FUTURE_SKEW_SECS) {
    return reject(422, 'timestamp_in_future', `anchor timestamp is ${ahead} s ahead of the witness clock (max ${MAX_FUTURE_SKEW_SECS} s)`);
  }
  return null;
}

/** Checks 2–6 in order, verifying the party signature on this thread. Returns the registry party on success. */
export function checkSubmission(anchor: Anchor, claim: PartyClaim, registry: Registry, now: number): { party: RegistryParty } | Rejection {
  const party = checkParty(anchor, claim, registry);
  if ('outcome' in party) return party;
  return signatureRejection(verifyPartySignature(anchor)) ?? checkTimestamp(anchor, now) ?? party;
}

export interface SeedContext {
  seed: SeedState | undefined;
  allowUnderivedSeeds: boolean;
  /** Seconds until the party may co-sign again (new seed or not), or null when within quota. */
  quotaRetryAfter: (party: RegistryParty, newSeed: boolean) => number | null;
}

const eq = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(a, b) === 0;

/** Checks 7–15, against the committed seed state. */
export function decideAgainstSeed(anchor: Anchor, claim: PartyClaim, party: RegistryParty, ctx: SeedContext): Decision {
  const { seed } = ctx;
  // 7. seed ownership
  if (seed !== undefined) {
    if (seed.owner !== party.id) return reject(403, 'seed_owned_by_other_party', 'this seed belongs to another party');
  } else if (!ctx.allowUnderivedSeeds) {
    if (claim.root === undefined || claim.scope === undefined) {
      return reject(403, 'seed_not_derived', 'a new seed needs party.root and party.scope to show it derives from the party');
    }
    if (!eq(deriveSeedId(claim.root, claim.agent, claim.scope), anchor.seedId)) {
      return reject(403, 'seed_not_derived', 'seed_id does not derive from (party.root, party.agent, party.scope)');
    }
  }
  // 8. party quota
  const retry = ctx.quotaRetryAfter(party, seed === undefined);
  if (retry !== null) return reject(429, 'party_quota_exceeded', 'this party is over its anchoring quota', retry);
  if (seed === undefined) return { outcome: 'cosign', newSeed: true };
  // 9. frozen
  if (seed.duplicity !== undefined) return { outcome: 'frozen', proof: seed.duplicity };
  const prior = seed.latest;
  if (anchor.index === prior.index) {
    if (!eq(anchor.head, prior.head)) {
      // 10 / 11
      if (samePartyKey(anchor, prior)) return { outcome: 'duplicity', proof: makeDuplicityProof(prior, anchor) };
      return reject(422, 'index_taken', `index ${anchor.index} already carries another head, signed by another key`);
    }
    // 12 / 13
    if (eq(partyMessage(anchor), partyMessage(prior))) return { outcome: 'replay' };
    return reject(422, 'conflicting_replay', `index ${anchor.index} was co-signed with the same head but different content`);
  }
  // 14. monotone growth
  if (anchor.index < prior.index) return reject(422, 'non_monotone', `index ${anchor.index} is below the latest co-signed index ${prior.index}`);
  if (anchor.cumulative < prior.cumulative) return reject(422, 'non_monotone', `cumulative ${anchor.cumulative} is below the latest co-signed ${prior.cumulative}`);
  if (anchor.timestamp < prior.timestamp) return reject(422, 'non_monotone', 'timestamp is earlier than the latest co-signed anchor');
  // 15.
  return { outcome: 'cosign', newSeed: false };
}
