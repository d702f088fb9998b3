/**
 * Codes of the anchor-witness node: its start-up configuration errors, the abandoned-anchor signal
 * of the anchor role, and the problems the witness routes answer (the acceptance rules' refusals
 * come from src/anchor's AnchorRejectionCode; the shared HTTP layer's own are ServerProblemCode).
 */
import type { AnchorRejectionCode } from '../anchor/errors.ts';
import { CodedError } from '../errors.ts';
import { HttpProblem } from '../server/errors.ts';

/** A configuration the node cannot start with; the CLI prints it and exits. */
export type WitnessConfigErrorCode = 'invalid_config' | 'missing_option' | 'invalid_role' | 'invalid_store' | 'key_required' | 'cosign_key_reused';

/** The request was abandoned (deadline passed, client gone) before its anchor reached the store. */
export type AnchorAbandonedErrorCode = 'request_abandoned';

/** The problems of the witness routes (SPEC §3.3, §3.4, §4, §6). */
export type WitnessProblemCode =
  | AnchorRejectionCode
  | 'malformed_body'
  | 'malformed_seed'
  | 'malformed_query'
  | 'not_found'
  | 'request_timeout'
  | 'no_build_attestation';

export class ConfigError extends CodedError<WitnessConfigErrorCode> {}

/** Nothing was logged: the anchor was dropped from the sequencer's queue before its batch started. */
export class AnchorAbandonedError extends CodedError<AnchorAbandonedErrorCode> {
  constructor() {
    super('request_abandoned', 'the request was abandoned before its anchor reached the store; nothing was logged');
  }
}

/** The HttpProblem a witness route throws: its code is one of the witness routes'. */
export function witnessProblem(status: number, code: WitnessProblemCode, detail: string, headers?: Readonly<Record<string, string>>): HttpProblem {
  return new HttpProblem(status, code, detail, headers);
}
