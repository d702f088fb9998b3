/**
 * Codes of the KERI witness role (SPEC §3.6): its start-up errors and the problems of its routes.
 * Each is listed in docs/errors.md.
 */
import { CodedError } from '../errors.ts';

/** Role kel cannot start with this configuration; the CLI prints it and exits 1. */
export type KelWitnessConfigErrorCode = 'kel_allow_required' | 'invalid_kel_allow' | 'invalid_kel_url';

export class KelWitnessConfigError extends CodedError<KelWitnessConfigErrorCode> {}

/** The problems of POST /receipts, POST /, and the role's reads. */
export type KelWitnessProblemCode =
  | 'unsupported_media_type'
  | 'malformed_cesr'
  | 'malformed_body'
  | 'malformed_query'
  | 'not_found'
  | 'kel_prefix_not_allowed'
  | 'rate_limited'
  | 'kel_quota_exceeded'
  | 'kel_capacity_exhausted'
  | 'kel_event_invalid'
  | 'kel_escrow_full'
  | 'kel_not_witness'
  | 'kel_recovery_unsupported'
  | 'overloaded';
