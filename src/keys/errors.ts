/** Errors of the key files (PKCS#8 PEM, mode 0600) and of the node's keys. The CLI prints them and exits. */
import { CodedError } from '../errors.ts';

export type KeyFileErrorCode =
  | 'key_exists' // refusing to overwrite a key
  | 'key_unwritable'
  | 'key_missing' // cannot be read
  | 'key_permissions'; // group- or world-accessible

export class KeyFileError extends CodedError<KeyFileErrorCode> {}

/** The node's keys (src/keys/node-keys.ts): a key missing, or one key for two purposes (SPEC §1). */
export type NodeKeyErrorCode =
  | 'key_required' // a key file is required outside development mode (or --bastion without --bastion-key)
  | 'cosign_key_reused' // a cosign key is the witness key
  | 'cosign_key_duplicate' // two --cosign-key references hold one key
  | 'bastion_key_reused' // the bastion key is the witness key or a cosign key
  | 'kel_key_required' // role kel without --kel-key
  | 'kel_key_reused'; // the KERI witness key is the witness key or a cosign key

export class NodeKeyError extends CodedError<NodeKeyErrorCode> {}
