/**
 * Codes of the anchor role: the signal its sequencer gives an abandoned request, and the problems
 * its routes answer (the acceptance rules' refusals are src/anchor's AnchorRejectionCode; the
 * shared HTTP layer's own are ServerProblemCode).
 */
import type { AnchorRejectionCode } from '../anchor/errors.ts';
import { CodedError } from '../errors.ts';
import { HttpProblem } from '../server/errors.ts';

/** The request was abandoned (deadline passed, client gone) before its anchor reached the store. */
export type AnchorAbandonedErrorCode = 'request_abandoned';

/** The problems of the anchor routes (SPEC §3.3, §3.4). */
export type AnchorProblemCode =
  AnchorRejectionCode | 'malformed_body' | 'malformed_seed' | 'malformed_query' | 'not_found' | 'request_timeout';

/** Nothing was logged: the anchor was dropped from the sequencer's queue before its batch started. */
export class AnchorAbandonedError extends CodedError<AnchorAbandonedErrorCode> {
  constructor() {
    super('request_abandoned', 'the request was abandoned before its anchor reached the store; nothing was logged');
  }
}

/** The HttpProblem an anchor route throws: its code is one of the anchor routes'. */
export function anchorProblem(
  status: number,
  code: AnchorProblemCode,
  detail: string,
  headers?: Readonly<Record<string, string>>,
): HttpProblem {
  return new HttpProblem(status, code, detail, headers);
}
