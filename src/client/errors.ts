/**
 * Errors of the client SDK. Codes are stable (snake_case) and closed unions (as in jose):
 *
 * ClientError — input the client was given, a state it cannot act on, or a witness it cannot
 * reach: ClientErrorCode below. No code is in both unions: one code, one class.
 * VerificationError (src/verify/errors.ts, re-exported here) — something a witness or party signed
 * or sent does not verify: VerificationCode. The verifier SDK (`anchor-witness/verify`) throws the
 * same class. docs/client.md lists which function throws which code.
 */
import { CodedError } from '../errors.ts';

export { UsageError, VerificationError, type UsageErrorCode, type VerificationCode } from '../verify/errors.ts';

export type ClientErrorCode =
  | 'party_key_invalid'
  | 'chain_invalid'
  | 'state_invalid'
  | 'state_conflict'
  | 'unknown_witness'
  | 'http_failed'
  | 'response_too_large'
  | 'unexpected_redirect'
  | 'malformed_json'
  | 'tiles_unavailable'
  | 'duplicity_proof_foreign';

export class ClientError extends CodedError<ClientErrorCode> {}
