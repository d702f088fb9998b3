/** Errors of the signed build statement (SPEC §6), with stable snake_case codes. */
import { CodedError } from '../errors.ts';

export type BuildErrorCode =
  | 'not_bundled' // not running from the single-file bundle
  | 'attestation_unreadable'
  | 'malformed_envelope'
  | 'unsupported_payload_type'
  | 'malformed_statement'
  | 'digest_mismatch'
  | 'version_mismatch'
  | 'bad_signature'
  | 'malformed_response'
  | 'unexpected_digest'
  | 'invalid_release_key'
  | 'missing_source_commit'
  | 'no_build_attestation';

/** A build statement, envelope or bundle that cannot be used, or a node that makes no build claim. */
export class BuildError extends CodedError<BuildErrorCode> {}
