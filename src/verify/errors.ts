/**
 * The one error class of the verifier core (`anchor-witness/verify`, and the same functions in
 * `anchor-witness/client`): something a witness or party signed or sent does not
 * verify, or the caller's inputs cannot be verified against. `code` is one of VerificationCode, a
 * closed union (as in jose): branch on it, never on the message. docs/client.md lists what each
 * function throws.
 */
import { CodedError, ProtocolError } from '../errors.ts';

export type VerificationCode =
  // shapes and inputs
  | 'malformed_response'
  | 'key_invalid'
  | 'bundle_invalid'
  | 'witness_set_invalid'
  | 'crypto_unavailable'
  | 'algorithm_unsupported'
  // the witness's part of a receipt
  | 'wrong_witness'
  | 'cosignature_invalid'
  | 'cosignature_missing'
  | 'checkpoint_invalid'
  | 'checkpoint_wrong_origin'
  | 'inclusion_invalid'
  | 'tlog_proof_invalid'
  | 'note_invalid'
  | 'note_unverified'
  | 'consistency_invalid'
  | 'log_equivocation_invalid'
  | 'anchor_mismatch'
  // the party's part
  | 'party_unpinned'
  | 'party_key_mismatch'
  | 'party_signature_invalid'
  | 'duplicity_proof_invalid'
  // finality (FinalityResult codes other than `final`, when a caller turns them into errors)
  | 'threshold_not_met'
  | 'witness_set_mismatch'
  | 'threshold_mismatch'
  | 'said_mismatch'
  | 'receipt_invalid'
  // witness-key rotation (SPEC §1.2)
  | 'rotation_entry_invalid';

export class VerificationError extends CodedError<VerificationCode> {}

/** The one code of UsageError. */
export type UsageErrorCode = 'usage';

/**
 * The caller's own inputs cannot be used (a pin that is not a key of its length, a quorum out of
 * range, an unpinned witness set): never a verdict about what a witness or party signed. One class
 * for both entry points — the verifier core and the client SDK throw it alike — so `usage` has one
 * class, as every code does.
 */
export class UsageError extends CodedError<UsageErrorCode> {
  constructor(message: string) {
    super('usage', message);
  }
}

/** Throw a UsageError. */
export function usage(message: string): never {
  throw new UsageError(message);
}

export function fail(code: VerificationCode, message: string): never {
  throw new VerificationError(code, message);
}

/** Run `fn`; any failure other than a VerificationError becomes one with `code` (the cause's code in the message). */
export function wrap<T>(code: VerificationCode, what: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    return rethrow(code, what, e);
  }
}

export function rethrow(code: VerificationCode, what: string, e: unknown): never {
  if (e instanceof VerificationError) throw e;
  const inner = e instanceof ProtocolError ? ` (${e.code})` : '';
  throw new VerificationError(code, `${what}: ${e instanceof Error ? e.message : String(e)}${inner}`);
}
