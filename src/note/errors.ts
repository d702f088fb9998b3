/** Typed errors of the C2SP note formats (signed-note, tlog-checkpoint, tlog-cosignature, tlog-proof). */
import { ProtocolError } from '../errors.ts';

/**
 * Codes: `malformed_note`, `too_many_signatures`, `invalid_key_name`, `invalid_vkey`,
 * `unsupported_key_type`, `ambiguous_verifier`, `invalid_signature` (a known key's signature
 * fails), `unverified_note` (no known key verified), `malformed_checkpoint`, `invalid_name`,
 * `malformed_cosignature`, `invalid_timestamp`, `malformed_tlog_proof`, `origin_mismatch`.
 * (A failing inclusion proof is src/tlog's ProofError `inclusion_proof_invalid`.)
 */
export class NoteError extends ProtocolError {}
