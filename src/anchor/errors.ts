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
