/**
 * Codes of the cosign role (SPEC §5): the errors it throws, one class and one closed union per
 * kind, and the refusals add-checkpoint answers (returned as an outcome, not thrown).
 */
import { CodedError } from '../errors.ts';

/** The add-checkpoint body does not parse (always 400). */
export type AddCheckpointRequestErrorCode = 'malformed_request';

/** The known-logs file or a logs/v0 list is refused: start-up fails, a reload keeps the previous copy. */
export type LogsConfigErrorCode = 'invalid_logs_config' | 'invalid_log_list';

/** Bad arguments to the cosign role factory. */
export type CosignConfigErrorCode = 'invalid_cosign_key' | 'invalid_name' | 'invalid_evidence_limit';

/** The refusals of add-checkpoint, in the order of SPEC §5's table. */
export type CosignRejectionCode =
  | 'malformed_request'
  | 'unknown_origin'
  | 'invalid_signature'
  | 'no_trusted_signature'
  | 'ml_dsa_unsignable'
  | 'quota_exceeded'
  | 'old_size_too_large'
  | 'invalid_empty_tree'
  | 'unexpected_proof'
  | 'inconsistent';

export class AddCheckpointRequestError extends CodedError<AddCheckpointRequestErrorCode> {
  constructor(message: string) {
    super('malformed_request', message);
  }
}

export class LogsConfigError extends CodedError<LogsConfigErrorCode> {}

export class CosignConfigError extends CodedError<CosignConfigErrorCode> {}
