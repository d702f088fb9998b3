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

/** `kel init | rotate | delegate` (src/cli/kel-author.ts) refused to touch a KEL or its key file. */
export type KelToolErrorCode = 'kel_missing' | 'kel_keys_missing' | 'kel_keys_invalid' | 'kel_keys_mismatch' | 'kel_keys_in_source';

export class ListenError extends CodedError<ListenErrorCode> {}

export class KelToolError extends CodedError<KelToolErrorCode> {}

export class CheckFailed extends CodedError<CheckFailedCode> {}
