/**
 * Errors of the client SDK. Codes are stable (snake_case):
 *
 * ClientError — input the client was given, or a state it cannot act on:
 *   witness_set_invalid, party_key_invalid, chain_invalid, state_invalid, state_conflict,
 *   bundle_invalid, unknown_witness, http_failed, usage
 * VerificationError (src/client/verify-anchor.ts) — something a witness signed or sent does not
 * verify: malformed_response, wrong_witness, cosignature_invalid, checkpoint_invalid,
 * checkpoint_wrong_origin, inclusion_invalid, tlog_proof_invalid, anchor_mismatch,
 * duplicity_proof_invalid, consistency_invalid.
 */
import { ProtocolError } from '../errors.ts';

export class ClientError extends ProtocolError {}
