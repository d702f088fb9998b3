/**
 * Codes of the anchor module: the errors its decoders throw (AnchorError) and the refusals the
 * acceptance rules of SPEC §3.3 decide (a Rejection is returned, not thrown; the anchor role
 * answers it as a problem with the rule's status).
 */
import { CodedError } from '../errors.ts';

export type AnchorErrorCode = 'malformed_anchor' | 'invalid_identifier' | 'not_duplicity' | 'invalid_registry';

/** An anchor, request, identifier, registry or duplicity proof that is malformed or does not verify. */
export class AnchorError extends CodedError<AnchorErrorCode> {}

/** The refusals of the acceptance rules (src/anchor/accept.ts), in check order. */
export type AnchorRejectionCode =
  | 'unknown_party'
  | 'registry_behind'
  | 'delegation_revoked'
  | 'delegation_mismatch'
  | 'key_not_current'
  | 'bad_signature'
  | 'timestamp_in_future'
  | 'seed_owned_by_other_party'
  | 'seed_not_derived'
  | 'party_quota_exceeded'
  | 'index_taken'
  | 'conflicting_replay'
  | 'non_monotone';

/** The HTTP status of each refusal (SPEC §3.3): data, so the rules only choose the code. */
export const ANCHOR_REJECTION_STATUS = {
  unknown_party: 403,
  registry_behind: 503,
  delegation_revoked: 403,
  delegation_mismatch: 403,
  key_not_current: 403,
  bad_signature: 422,
  timestamp_in_future: 422,
  seed_owned_by_other_party: 403,
  seed_not_derived: 403,
  party_quota_exceeded: 429,
  index_taken: 422,
  conflicting_replay: 422,
  non_monotone: 422,
} as const satisfies Record<AnchorRejectionCode, 403 | 409 | 422 | 429 | 503>;

export type AnchorRejectionStatus = (typeof ANCHOR_REJECTION_STATUS)[AnchorRejectionCode];
