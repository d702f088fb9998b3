/** Typed errors of the C2SP note formats (signed-note, tlog-checkpoint, tlog-cosignature, tlog-proof). */
import { CodedError } from '../errors.ts';

/** A failing inclusion proof is src/tlog's ProofError `inclusion_proof_invalid`, not a NoteError. */
export type NoteErrorCode =
  | 'malformed_note'
  | 'too_many_signatures'
  | 'invalid_key_name'
  | 'invalid_vkey'
  | 'unsupported_key_type'
  | 'ambiguous_verifier'
  | 'invalid_signature' // a known key's signature fails
  | 'unverified_note' // no known key verified
  | 'malformed_checkpoint'
  | 'invalid_name'
  | 'malformed_cosignature'
  | 'invalid_subtree_message' // a subtree/v1 message field breaks its rules (lengths, T, start/end, extension lines)
  | 'invalid_timestamp'
  | 'malformed_tlog_proof'
  | 'origin_mismatch';

export class NoteError extends CodedError<NoteErrorCode> {}

/** The tlog-witness add-checkpoint body does not parse (always 400; tlog-witness.ts). */
export type AddCheckpointRequestErrorCode = 'malformed_request';

/** The tlog-witness sign-subtree body does not parse (always 400; tlog-witness.ts). */
export type SignSubtreeRequestErrorCode = 'malformed_request';

export class AddCheckpointRequestError extends CodedError<AddCheckpointRequestErrorCode> {
  constructor(message: string) {
    super('malformed_request', message);
  }
}

export class SignSubtreeRequestError extends CodedError<SignSubtreeRequestErrorCode> {
  constructor(message: string) {
    super('malformed_request', message);
  }
}
