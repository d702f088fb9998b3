/**
 * Why a key event log is not (or not yet fully) accepted: the closed `reason` of SPEC §3.5's
 * `kel_invalid` log event and `registry_kel_invalid_total{reason}`, in the order of the SPEC's
 * verification rules. Each is described in docs/registry.md ("kel_invalid reasons").
 */
import { CodedError } from '../errors.ts';

export type KelReasonCode =
  // rule 1: size and shape
  | 'oversize'
  | 'malformed'
  // the source could not give this identifier's copy (a git error, an unreadable file)
  | 'source_error'
  // rule 2: each event against its predecessor
  | 'version_mismatch'
  | 'said_mismatch'
  | 'sequence_invalid'
  | 'prefix_mismatch'
  | 'chain_broken'
  | 'multiple_inceptions'
  // rule 3: the inception
  | 'not_inception'
  | 'prefix_invalid'
  // rule 4: thresholds, keys, backers
  | 'threshold_invalid'
  // rules 5 and 6: signatures and pre-rotation
  | 'signature_invalid'
  | 'prior_next_unmet'
  // rule 7: what may follow what
  | 'non_transferable'
  | 'abandoned'
  | 'establishment_only'
  | 'rotation_type_invalid'
  // rule 8: delegation
  | 'delegator_missing'
  | 'delegator_invalid'
  | 'delegation_too_deep'
  | 'delegator_dnd'
  | 'source_seal_mismatch'
  // against the state in force and the store's highest accepted tip (kel_tips)
  | 'fork'
  | 'rollback';

/** The name the registry and the CLI use for a reason. */
export type KelReason = KelReasonCode;

/** Every reason, in rule order (for metrics with one series per reason, and the docs test). */
export const KEL_REASONS: readonly KelReason[] = [
  'oversize',
  'malformed',
  'source_error',
  'version_mismatch',
  'said_mismatch',
  'sequence_invalid',
  'prefix_mismatch',
  'chain_broken',
  'multiple_inceptions',
  'not_inception',
  'prefix_invalid',
  'threshold_invalid',
  'signature_invalid',
  'prior_next_unmet',
  'non_transferable',
  'abandoned',
  'establishment_only',
  'rotation_type_invalid',
  'delegator_missing',
  'delegator_invalid',
  'delegation_too_deep',
  'delegator_dnd',
  'source_seal_mismatch',
  'fork',
  'rollback',
];

/**
 * A KEL (or one of its events) breaks a rule. Thrown inside src/keri by the decoders (qb64,
 * events, attachments) and turned into a `KelEvaluation` by the verifier; never escapes
 * evaluateKels. `seq` is the event's position when one is to blame.
 */
export class KelError extends CodedError<KelReasonCode> {
  readonly seq: number | null;
  constructor(code: KelReasonCode, message: string, seq: number | null = null) {
    super(code, message);
    this.seq = seq;
  }
}
