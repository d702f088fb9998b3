/** Errors of the key files (PKCS#8 PEM, mode 0600). The CLI prints them and exits. */
import { CodedError } from '../errors.ts';

export type KeyFileErrorCode =
  | 'key_exists' // refusing to overwrite a key
  | 'key_unwritable'
  | 'key_missing' // cannot be read
  | 'key_permissions'; // group- or world-accessible

export class KeyFileError extends CodedError<KeyFileErrorCode> {}
