/**
 * Codes of the cosign role (SPEC §5): the errors it throws, one class and one closed union per
 * kind, and the refusals add-checkpoint answers (returned as an outcome, not thrown).
 */
import { CodedError } from '../errors.ts';

/** The known-logs file or a logs/v0 list is refused: start-up fails, a reload keeps the previous copy. */
export type LogsConfigErrorCode = 'invalid_logs_config' | 'invalid_log_list';

/**
 * Why one entry of a logs/v0 list is skipped (SPEC §5.5): logged as a warning, the rest of the list
 * applies. Not thrown.
 */
export type LogListSkipCode =
  | 'invalid_vkey'
  | 'unsupported_key_type'
  | 'mldsa_unsupported'
  | 'ambiguous_key'
  | 'missing_qpd'
  | 'invalid_qpd'
  | 'invalid_origin'
  | 'duplicate_field'
  | 'own_origin'
  | 'witness_name'
  | 'origin_too_long';

/** Reading a list source (a file or an https URL) failed; the previous state stays (SPEC §5.5). */
export type ListFetchErrorCode =
  | 'invalid_list_url'
  | 'address_refused'
  | 'redirect_refused'
  | 'too_many_redirects'
  | 'http_status'
  | 'list_too_large'
  | 'fetch_timeout'
  | 'fetch_failed'
  | 'list_unreadable'
  | 'list_not_utf8';

/** Bad arguments to the cosign role factory. */
export type CosignConfigErrorCode = 'invalid_cosign_key' | 'invalid_name' | 'invalid_evidence_limit';

/** The refusals of add-checkpoint, in the order of SPEC §5's table. */
export type CosignRejectionCode =
  | 'malformed_request'
  | 'unknown_origin'
  | 'origin_key_conflict'
  | 'invalid_signature'
  | 'no_trusted_signature'
  | 'ml_dsa_unsignable'
  | 'quota_exceeded'
  | 'old_size_too_large'
  | 'invalid_empty_tree'
  | 'unexpected_proof'
  | 'inconsistent';

/** The refusals of sign-subtree, in the order of SPEC §5.4's table (429: its own per-client rate limit). */
export type SignSubtreeRejectionCode =
  | 'rate_limited'
  | 'malformed_request'
  | 'invalid_subtree'
  | 'unknown_origin'
  | 'ml_dsa_unsignable'
  | 'subtree_beyond_checkpoint'
  | 'no_witness_cosignature'
  | 'invalid_signature'
  | 'inconsistent';

export class LogsConfigError extends CodedError<LogsConfigErrorCode> {}

export class CosignConfigError extends CodedError<CosignConfigErrorCode> {}

export class ListFetchError extends CodedError<ListFetchErrorCode> {}
