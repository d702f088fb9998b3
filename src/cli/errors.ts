/**
 * Codes the command lines throw themselves (the modules they call throw their own). The CLI
 * prints `code: message` and exits; none of these reaches an HTTP client.
 */
import type { KeyErrorCode } from '../crypto/errors.ts';
import { CodedError } from '../errors.ts';
import type { BuildErrorCode } from '../release/errors.ts';

/** `--listen` is not HOST:PORT. */
export type ListenErrorCode = 'invalid_listen';

/**
 * `verify build` could not check (exit 2, as opposed to 1 for an invalid claim): the node is
 * unreachable, answered an HTTP error, or the options (release key, expected digest) are unusable —
 * a release key's own BuildError or KeyError code is kept.
 */
export type CheckFailedCode = 'unreachable' | 'http_error' | 'invalid_option' | BuildErrorCode | KeyErrorCode;

export class ListenError extends CodedError<ListenErrorCode> {}

export class CheckFailed extends CodedError<CheckFailedCode> {}
