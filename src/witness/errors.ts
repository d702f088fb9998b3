/**
 * Codes of the anchor-witness node: its start-up configuration errors and the problems of its
 * node-wide routes (the anchor role's are src/anchoring/errors.ts; the shared HTTP layer's own are
 * ServerProblemCode).
 */
import { CodedError } from '../errors.ts';
import { HttpProblem } from '../server/errors.ts';

/** A configuration the node cannot start with; the CLI prints it and exits. */
export type WitnessConfigErrorCode =
  | 'invalid_config'
  | 'missing_option'
  | 'invalid_role'
  | 'invalid_store'
  | 'key_required' // the CLI: key flags missing (the node's own key checks: NodeKeyErrorCode, src/keys)
  | 'invalid_no_listen'; // invalid_no_listen: --no-listen without a --bastion, or with a role other than cosign

/** The problems of the node-wide routes: the witness log (SPEC §4) and the build statement (§6). */
export type WitnessProblemCode = 'not_found' | 'no_build_attestation';

export class ConfigError extends CodedError<WitnessConfigErrorCode> {}

/** The HttpProblem a node-wide route throws. */
export function witnessProblem(
  status: number,
  code: WitnessProblemCode,
  detail: string,
  headers?: Readonly<Record<string, string>>,
): HttpProblem {
  return new HttpProblem(status, code, detail, headers);
}
