/** Typed errors of the crypto layer (key loading and key validation). */
import { CodedError } from '../errors.ts';

export type KeyErrorCode =
  | 'invalid_public_key' // wrong length or prefix
  | 'non_canonical_key'
  | 'not_on_curve'
  | 'small_order_key'
  | 'invalid_private_key'
  | 'invalid_seed'
  | 'invalid_did_key'
  | 'key_type_unsupported' // a private key of another algorithm, or ML-DSA-44 without its seed
  | 'mldsa_unsupported'; // ML-DSA-44 needs Node >= 24.6 with OpenSSL >= 3.5

/** A public or private key is unusable. */
export class KeyError extends CodedError<KeyErrorCode> {}
