/**
 * Typed failures of the token bridge (SPEC §7). Every `/token` refusal is a BridgeError whose `code`
 * comes from the SPEC §7 table; `status` is the HTTP status that code always answers with, so the
 * HTTP layer never chooses a status itself. `detail` is the human sentence (it names the link index
 * for chain failures) that ends up in the problem+json body.
 */
import { ProtocolError } from '../errors.ts';

export const BRIDGE_STATUS = {
  malformed_body: 400,
  ttl_too_large: 400,
  chain_signature_invalid: 401,
  chain_broken: 401,
  attestation_expired: 401,
  attestation_revoked: 401,
  attestation_future: 401,
  pop_required: 401,
  pop_invalid: 401,
  pop_stale: 401,
  pop_replayed: 401,
  untrusted_root: 403,
  capability_escalation: 403,
  insufficient_capabilities: 403,
  audience_not_allowed: 403,
  subject_unsupported: 403,
  rate_limited: 429,
  overloaded: 503,
} as const;

export type BridgeCode = keyof typeof BRIDGE_STATUS;

/** A refused `/token` request: stable `code`, its HTTP `status`, and a `detail` for the body. */
export class BridgeError extends ProtocolError {
  declare readonly code: BridgeCode;
  readonly status: number;
  readonly detail: string;
  /** JSON pointer of the offending field, for `malformed_body`. */
  readonly pointer: string | undefined;
  constructor(code: BridgeCode, detail: string, pointer?: string) {
    super(code, detail);
    this.status = BRIDGE_STATUS[code];
    this.detail = detail;
    this.pointer = pointer;
  }
}

/** `malformed_body` with the JSON pointer of the first offending field at the front of the detail. */
export function malformed(pointer: string, message: string): BridgeError {
  return new BridgeError('malformed_body', pointer === '' ? message : `${pointer}: ${message}`, pointer);
}

/**
 * Operator input of the bridge that cannot be used: the trusted-roots file (`invalid_trusted_roots`),
 * the key directory (`key_dir_invalid`, `key_dir_locked`, `key_unreadable`, `key_mismatch`,
 * `next_key_pending`), the issuer URL (`invalid_issuer`) or another option (`invalid_option`).
 */
export class BridgeConfigError extends ProtocolError {}
