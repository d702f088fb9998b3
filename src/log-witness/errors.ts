/**
 * Codes of the witnessed own log (SPEC §4.1): the witnesses file refused at start or reload, and
 * why one submission to a peer witness failed (logged and counted; never on this node's wire).
 */
import { CodedError } from '../errors.ts';

/** `--log-witnesses FILE` is refused: start-up fails, a reload keeps the previous copy. */
export type LogWitnessConfigErrorCode =
  | 'invalid_log_witnesses' // the file does not parse or breaks a rule of SPEC §4.1
  | 'log_witness_key_duplicate'; // one public key listed twice (two witnesses, or one twice), whatever the names

/** Why a submission to a peer witness did not collect a cosignature. */
export type PeerFailureCode =
  | 'peer_state_conflict' // 409 with a size this node never had, or a second 409 in a row: not followed
  | 'peer_rejected' // another 4xx (or a 3xx: redirects are not followed)
  | 'peer_rate_limited' // 429: Retry-After honoured
  | 'peer_unavailable' // 5xx
  | 'peer_unreachable' // connection failure or no answer within the timeout
  | 'invalid_peer_response'; // oversized body, unparsable lines or 409 body, a matching line that fails, no matching line

export class LogWitnessConfigError extends CodedError<LogWitnessConfigErrorCode> {}

export class PeerFailure extends CodedError<PeerFailureCode> {
  /** For peer_rate_limited: the Retry-After in milliseconds, when the peer gave a valid one. */
  readonly retryAfterMs: number | undefined;
  /** The HTTP status, when there was an answer. */
  readonly status: number | undefined;

  constructor(code: PeerFailureCode, message: string, status?: number, retryAfterMs?: number) {
    super(code, message);
    this.status = status;
    this.retryAfterMs = retryAfterMs;
  }
}
