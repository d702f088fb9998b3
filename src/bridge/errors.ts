/**
 * Typed failures of the token bridge (SPEC §7). Every `/token` refusal is a BridgeError whose `code`
 * comes from the SPEC §7 table; `status` is the HTTP status that code always answers with, so the
 * HTTP layer never chooses a status itself. `detail` is the human sentence (it names the link index
 * for chain failures) that ends up in the problem+json body. Operator input the bridge cannot use is
 * a BridgeConfigError (start-up fails).
 */
import { CodedError } from '../errors.ts';

export type BridgeErrorCode =
  | 'malformed_body'
  | 'ttl_too_large'
  | 'chain_signature_invalid'
  | 'chain_broken'
  | 'attestation_expired'
  | 'attestation_revoked'
  | 'attestation_future'
  | 'pop_required'
  | 'pop_invalid'
  | 'pop_stale'
  | 'pop_replayed'
  | 'untrusted_root'
  | 'capability_escalation'
  | 'insufficient_capabilities'
  | 'audience_not_allowed'
  | 'subject_unsupported'
  | 'rate_limited'
  | 'overloaded'
  // SPEC §7.1 (rev 4): roots from KERI key event logs
  | 'root_revoked'
  | 'root_key_not_current'
  | 'registry_behind'
  // SPEC §7.2 (rev 4): the witness-finalized freshness gate
  | 'anchor_required'
  | 'anchor_witness_set_mismatch'
  | 'anchor_not_bound'
  | 'anchor_stale'
  | 'anchor_future'
  | 'chain_not_anchored'
  | 'anchor_superseded'
  | 'anchor_party_invalid'
  | 'anchor_not_final'
  | 'anchor_floor_full'
  | 'store_unavailable'
  | 'not_found';

/**
 * The trusted-roots file (`invalid_trusted_roots`), the key directory (`key_dir_…`, `key_…`,
 * `next_key_pending`), the issuer URL (`invalid_issuer`), the proof-of-possession nonce store
 * (`store_…` for PostgreSQL, `nonce_store_…` for SQLite) or another option (`invalid_option`).
 */
export type BridgeConfigErrorCode =
  | 'invalid_option'
  | 'invalid_issuer'
  | 'invalid_trusted_roots'
  | 'key_dir_invalid'
  | 'key_dir_locked'
  | 'key_unreadable'
  | 'key_mismatch'
  | 'next_key_pending'
  | 'store_unopenable'
  | 'store_read_only'
  | 'store_unsafe'
  | 'store_schema'
  | 'store_issuer_mismatch'
  | 'nonce_store_unopenable'
  | 'nonce_store_locked'
  | 'nonce_store_schema'
  | 'kel_store_required';

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
  root_revoked: 403,
  root_key_not_current: 403,
  registry_behind: 503,
  anchor_required: 403,
  anchor_witness_set_mismatch: 403,
  anchor_not_bound: 403,
  anchor_stale: 403,
  anchor_future: 403,
  chain_not_anchored: 403,
  anchor_superseded: 403,
  anchor_party_invalid: 403,
  anchor_not_final: 403,
  anchor_floor_full: 503,
  store_unavailable: 503,
  not_found: 404,
} as const satisfies Record<BridgeErrorCode, 400 | 401 | 403 | 404 | 429 | 503>;

/** A refused `/token` request: stable `code`, its HTTP `status`, and a `detail` for the body. */
export class BridgeError extends CodedError<BridgeErrorCode> {
  readonly status: number;
  readonly detail: string;
  /** JSON pointer of the offending field, for `malformed_body`. */
  readonly pointer: string | undefined;
  constructor(code: BridgeErrorCode, detail: string, pointer?: string) {
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

/** Operator input of the bridge that cannot be used. */
export class BridgeConfigError extends CodedError<BridgeConfigErrorCode> {}
