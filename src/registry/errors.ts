/**
 * Codes of the KEL sources (SPEC §3.5): a `--kel-source` the node cannot use, or a source that
 * cannot be read as a whole (the reload fails and every current state is kept).
 */
import { CodedError } from '../errors.ts';

export type KelSourceErrorCode = 'invalid_kel_source' | 'kel_source_unreadable' | 'registry_required';

export class KelSourceError extends CodedError<KelSourceErrorCode> {}
