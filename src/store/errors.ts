/**
 * Errors of the store drivers, one class per kind of failure with its closed code union.
 *
 * StoreUnavailableError (`store_unavailable`): the database cannot serve this now (I/O error, full
 *   disk, read-only file system, lost connection, lock timeout, closed handle). HTTP 503 with
 *   Retry-After; nothing was written. Callers test it with `isStoreUnavailable(e)`.
 * StoreOpenError: the store refuses to open or to be bound (start-up fails):
 *   store_locked, store_unopenable, store_schema, store_identity_mismatch, store_read_only, store_unsafe.
 * StoreInvariantError (`store_invariant`): a write would break an invariant the database also
 *   guards (the log head moved, a seed's latest anchor or the checkpoint would go backwards). A bug
 *   or a rogue writer, never an outage: the whole transaction rolls back (HTTP 500).
 */
import { CodedError } from '../errors.ts';

export type StoreUnavailableCode = 'store_unavailable';
export type StoreOpenErrorCode =
  'store_locked' | 'store_unopenable' | 'store_schema' | 'store_identity_mismatch' | 'store_read_only' | 'store_unsafe';
export type StoreInvariantCode = 'store_invariant';
export type StoreErrorCode = StoreUnavailableCode | StoreOpenErrorCode | StoreInvariantCode;

export class StoreUnavailableError extends CodedError<StoreUnavailableCode> {
  constructor(message: string) {
    super('store_unavailable', message);
  }
}

/** The store refuses to open: bound to another identity, locked by another process, bad schema, unsafe settings. */
export class StoreOpenError extends CodedError<StoreOpenErrorCode> {}

export class StoreInvariantError extends CodedError<StoreInvariantCode> {
  constructor(message: string) {
    super('store_invariant', message);
  }
}

/** True for a store outage (503 + Retry-After): the one check servers make on store errors. */
export function isStoreUnavailable(e: unknown): e is StoreUnavailableError {
  return e instanceof StoreUnavailableError;
}
