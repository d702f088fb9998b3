/**
 * The acceptance rules of SPEC §3.3, checks 2–15 in order, as one pure function of the request,
 * the registry view, the seed's committed state, the party's quota usage and the clock; the first
 * failing check answers. The anchor role (src/anchoring) calls it once per request, in its
 * sequencer against committed state, and executes the decision. Check 1 (schema and canonical
 * forms) is the decoder's; check 5's signature arithmetic is done before and comes in as a verdict,
 * since it may run on worker threads.
 */
import { Buffer } from 'node:buffer';
import { deriveSeedId } from './seed.ts';
import { makeDuplicityProof, samePartyKey } from './duplicity.ts';
import type { Registry, RegistryParty } from './registry.ts';
import type { Anchor, DuplicityProof, PartyClaim, PartySignature } from './types.ts';
import { ANCHOR_REJECTION_STATUS, type AnchorRejectionCode, type AnchorRejectionStatus } from './errors.ts';
import { partyMessage } from './messages.ts';
import { quotaRetryAfter, type PartyUsage, type QuotaDefaults } from './quota-window.ts';

export const MAX_FUTURE_SKEW_SECS = 300;

/** What the rules judge: the decoded request and check 5's verdict on its party signature. */
export interface AnchorSubmission {
  anchor: Anchor;
  claim: PartyClaim;
  /** Whether `anchor.sigParty.signature` verifies over the party message (check 5). */
  signatureValid: boolean;
  /**
   * `partyMessage(anchor)` when the caller already computed it for check 5 (the anchoring service
   * does, once per request); computed here otherwise.
   */
  partyMessage?: Uint8Array;
}

/** The seed's committed state (undefined for a seed this witness never co-signed). */
export interface SeedState {
  /** The latest anchor this witness co-signed for the seed. */
  latest: Anchor;
  /** `did:keri:` id of the agent that created the seed here. */
  owner: string;
  /** Set once the seed is frozen by a stored duplicity proof. */
  duplicity?: DuplicityProof;
}

/** The node's settings the rules read. */
export interface AcceptancePolicy {
  /** `--allow-underived-seeds`: a new seed goes to whoever anchors it first (check 7). */
  allowUnderivedSeeds: boolean;
  /** Quotas of parties without registry `limits` (check 8). */
  quota: QuotaDefaults;
}

export interface Rejection {
  outcome: 'reject';
  status: AnchorRejectionStatus;
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
  /** Co-sign and log (check 15): a new seed, or the next anchor of a known one. */
  | { outcome: 'cosign'; newSeed: boolean };

/** A refusal; its status comes from ANCHOR_REJECTION_STATUS (src/anchor/errors.ts), never from the rule. */
function reject(code: AnchorRejectionCode, detail: string, retryAfter?: number): Rejection {
  const status = ANCHOR_REJECTION_STATUS[code];
  return retryAfter === undefined ? { outcome: 'reject', status, code, detail } : { outcome: 'reject', status, code, detail, retryAfter };
}

const eq = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(a, b) === 0;

/** The registry party the claim names (check 2), whose quota usage the caller reads. */
export function claimedParty(registry: Registry, claim: PartyClaim): RegistryParty | undefined {
  return registry.parties.get(claim.agent);
}

/** Whether `sig` is one of the party's current keys (check 4); an abandoned KEL has none (SPEC §3.5). */
export function isCurrentKey(party: RegistryParty, sig: Pick<PartySignature, 'curve' | 'publicKey'>): boolean {
  if (party.kel?.abandoned === true) return false;
  return party.keys.some((k) => k.curve === sig.curve && eq(k.publicKey, sig.publicKey));
}

/** How long a client waits before retrying a party whose KEL state is behind the store's tip (SPEC §3.5). */
export const REGISTRY_BEHIND_RETRY_SECS = 30;

/**
 * Checks 2–15 in order. `usage` is the claimed party's (ignored when check 2 refuses); `now` is the
 * witness clock when the request arrived.
 */
export function accept(
  submission: AnchorSubmission,
  registry: Registry,
  seed: SeedState | undefined,
  usage: PartyUsage,
  now: number,
  policy: AcceptancePolicy,
): Decision {
  const { anchor, claim } = submission;
  // 2. a registered party (with a KEL source: with a usable accepted KEL state)
  const party = claimedParty(registry, claim);
  if (party === undefined) {
    const withheld = registry.withheld?.get(claim.agent);
    if (withheld?.reason === 'behind') return reject('registry_behind', withheld.detail, REGISTRY_BEHIND_RETRY_SECS);
    return reject('unknown_party', withheld?.detail ?? `${claim.agent} is not in this witness's party registry`);
  }
  // 3. not revoked by its delegator (KEL source), then the claimed delegator
  if (party.kel?.revoked === true) return reject('delegation_revoked', `${claim.agent} is revoked by its delegator ${party.delegator}`);
  if (claim.root !== undefined && claim.root !== claim.agent && claim.root !== party.delegator) {
    const detail =
      party.kel === undefined
        ? `${claim.root} is not the delegator of ${claim.agent}`
        : party.delegator === undefined
          ? `the KEL of ${claim.agent} begins with icp, not a dip delegated by ${claim.root}`
          : `the dip of ${claim.agent} names ${party.delegator}, not ${claim.root}`;
    return reject('delegation_mismatch', detail);
  }
  // 4. a current key of the party (KEL source: not abandoned)
  if (!isCurrentKey(party, anchor.sigParty)) {
    const detail =
      party.kel?.abandoned === true
        ? `${claim.agent} abandoned its keys (a rotation to no next keys): it has no current key`
        : `sig_party is not a current key of ${claim.agent}`;
    return reject('key_not_current', detail);
  }
  // 5. the party signature
  if (!submission.signatureValid) return reject('bad_signature', 'the party signature does not verify over the party message');
  // 6. not from the future
  const ahead = anchor.timestamp - now;
  if (ahead > MAX_FUTURE_SKEW_SECS) {
    return reject('timestamp_in_future', `anchor timestamp is ${ahead} s ahead of the witness clock (max ${MAX_FUTURE_SKEW_SECS} s)`);
  }
  // 7. seed ownership
  if (seed !== undefined) {
    if (seed.owner !== party.id) return reject('seed_owned_by_other_party', 'this seed belongs to another party');
  } else if (!policy.allowUnderivedSeeds) {
    if (claim.root === undefined || claim.scope === undefined) {
      return reject('seed_not_derived', 'a new seed needs party.root and party.scope to show it derives from the party');
    }
    if (!eq(deriveSeedId(claim.root, claim.agent, claim.scope), anchor.seedId)) {
      return reject('seed_not_derived', 'seed_id does not derive from (party.root, party.agent, party.scope)');
    }
  }
  // 8. party quota
  const retry = quotaRetryAfter(party.limits, usage, seed === undefined, now, policy.quota);
  if (retry !== null) return reject('party_quota_exceeded', 'this party is over its anchoring quota', retry);
  if (seed === undefined) return { outcome: 'cosign', newSeed: true };
  // 9. frozen
  if (seed.duplicity !== undefined) return { outcome: 'frozen', proof: seed.duplicity };
  const prior = seed.latest;
  if (anchor.index === prior.index) {
    if (!eq(anchor.head, prior.head)) {
      // 10 / 11
      if (samePartyKey(anchor, prior)) return { outcome: 'duplicity', proof: makeDuplicityProof(prior, anchor) };
      return reject('index_taken', `index ${anchor.index} already carries another head, signed by another key`);
    }
    // 12 / 13
    if (eq(submission.partyMessage ?? partyMessage(anchor), partyMessage(prior))) return { outcome: 'replay' };
    return reject('conflicting_replay', `index ${anchor.index} was co-signed with the same head but different content`);
  }
  // 14. monotone growth
  if (anchor.index < prior.index) return reject('non_monotone', `index ${anchor.index} is below the latest co-signed index ${prior.index}`);
  if (anchor.cumulative < prior.cumulative)
    return reject('non_monotone', `cumulative ${anchor.cumulative} is below the latest co-signed ${prior.cumulative}`);
  if (anchor.timestamp < prior.timestamp) return reject('non_monotone', 'timestamp is earlier than the latest co-signed anchor');
  // 15.
  return { outcome: 'cosign', newSeed: false };
}
