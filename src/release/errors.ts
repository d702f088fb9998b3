/** Errors of the signed build statement (SPEC §6), with stable snake_case codes. */
import { ProtocolError } from '../errors.ts';

/**
 * A build statement, envelope or bundle that cannot be used. Codes: `not_bundled`,
 * `attestation_unreadable`, `malformed_envelope`, `unsupported_payload_type`, `malformed_statement`,
 * `digest_mismatch`, `version_mismatch`, `bad_signature`, `malformed_response`, `unexpected_digest`.
 */
export class BuildError extends ProtocolError {}
