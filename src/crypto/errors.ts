/** Typed errors of the crypto layer (key loading and key validation). */
import { CodedError } from '../errors.ts';

export type KeyErrorCode =
  | 'invalid_public_key' // wrong length or prefix
  | 'non_canonical_key'
  | 'not_on_curve'
  | 'small_order_key'
  | 'invalid_private_key'
  | 'invalid_seed'
  | 'invalid_did_key';

/** A public or private key is unusable. */
export class KeyError extends CodedError<KeyErrorCode> {}
