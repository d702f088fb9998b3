/**
 * A refused request of the cosign API (add-checkpoint, sign-subtree): the HTTP status, the stable
 * code, and the detail sent as the one-line text body SPEC §5 gives (CR/LF folded to spaces).
 */

export interface CosignRejection<Code extends string> {
  readonly kind: 'rejected';
  readonly status: 400 | 403 | 404 | 422 | 429;
  readonly code: Code;
  readonly detail: string;
  /** The origin when it is a known one (never an attacker-chosen string). */
  readonly origin: string | undefined;
  /** Seconds, sent as Retry-After (429 only). */
  readonly retryAfter?: number;
}

/** A rejection with `detail` on one line; `retryAfter` (seconds) only for a 429. */
export function reject<Code extends string>(
  status: 400 | 403 | 404 | 422,
  code: Code,
  detail: string,
  origin: string | undefined,
): CosignRejection<Code>;
export function reject<Code extends string>(
  status: 429,
  code: Code,
  detail: string,
  origin: string | undefined,
  retryAfter: number,
): CosignRejection<Code>;
export function reject<Code extends string>(
  status: CosignRejection<Code>['status'],
  code: Code,
  detail: string,
  origin: string | undefined,
  retryAfter?: number,
): CosignRejection<Code> {
  const line = detail.replace(/[\r\n]+/g, ' ');
  return retryAfter === undefined
    ? { kind: 'rejected', status, code, detail: line, origin }
    : { kind: 'rejected', status, code, detail: line, origin, retryAfter };
}

/** The headers of a rejection reply: Retry-After when the client may retry later. */
export function rejectionHeaders(r: CosignRejection<string>): Record<string, string> {
  return r.retryAfter === undefined ? {} : { 'retry-after': String(r.retryAfter) };
}
