/** Errors of the strict codecs: a value could not be decoded from its wire form. */
import { CodedError } from '../errors.ts';

export type EncodingErrorCode =
  | 'invalid_hex'
  | 'invalid_base64'
  | 'invalid_base64url'
  | 'invalid_base58'
  | 'invalid_decimal'
  | 'invalid_timestamp'
  | 'invalid_utf8'
  | 'invalid_json'
  | 'jcs_unsupported_value';

/** A value could not be decoded from its wire form (hex, base64, timestamps, decimals, JSON). */
export class EncodingError extends CodedError<EncodingErrorCode> {}
