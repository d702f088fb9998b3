/**
 * Typed failures of the federation tooling (SPEC §8). The CLI prints the message and exits 1
 * (lint-policy and check-token use 2 for input that cannot be parsed).
 */
import { CodedError } from '../errors.ts';

export type FederationErrorCode =
  | 'invalid_option' // a flag value that cannot be used
  | 'invalid_subject'
  | 'wildcard_subject'
  | 'invalid_session_name'
  | 'invalid_thumbprint'
  | 'too_many_thumbprints'
  | 'no_thumbprint'
  | 'certificate_unreadable'
  | 'connect_failed'
  | 'policy_unparsable'
  | 'token_unparsable'
  | 'token_request_failed'
  | 'token_rejected'
  | 'sts_failed'
  | 'unsafe_credential'
  | 'github_env_missing';

export class FederationError extends CodedError<FederationErrorCode> {}
