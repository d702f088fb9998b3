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
  | 'kel_key_reused' // the KERI witness key is the witness key or a cosign key
  | 'next_key_reused'; // the next witness key (--next-key) is the witness key or another key of the node

export class NodeKeyError extends CodedError<NodeKeyErrorCode> {}

/** Key references (SPEC §1.1): parsing a `--key`-style value and opening what it names. */
export type KeyRefErrorCode =
  | 'key_ref_invalid' // not a valid ssh-agent:/pkcs11:/file reference (or pin-value, a repeated attribute, bad pct-encoding)
  | 'key_not_found' // no agent identity / token object matches
  | 'key_ambiguous' // more than one token or private key object matches
  | 'key_unsupported' // the key's type or the token's mechanisms cannot make the signature needed
  | 'pkcs11_unavailable' // the optional pkcs11js addon is not installed or did not build
  | 'pkcs11_module_unsafe' // the module is not a regular file, or group/others can write it
  | 'pin_file_invalid'; // the pin-source file is missing or readable by group or others

export class KeyRefError extends CodedError<KeyRefErrorCode> {}

/** External signers (SPEC §1.1 Availability): what a signature request may fail with. */
export type SignerErrorCode =
  | 'signer_unavailable' // the agent or token cannot sign now (503, Retry-After: 5)
  | 'signer_bad_signature' // the signer returned a signature that does not verify (the signer becomes unavailable)
  | 'key_changed' // the signer now holds another public key than the one bound at start (stays unavailable)
  | 'overloaded'; // more than --signer-max-pending requests wait for this signer (503)

export class SignerError extends CodedError<SignerErrorCode> {}

/** Witness-key rotation at start-up (SPEC §1.2, src/keys/rotation.ts); a key the store never recorded is store_identity_mismatch. */
export type KeyRotationErrorCode =
  | 'key_retired' // --key or --next-key is a key the store retired (refused forever)
  | 'key_overlap_too_short'; // completion (--key = the next key) before --key-overlap-min after the announcement

export class KeyRotationError extends CodedError<KeyRotationErrorCode> {}
