/**
 * One witness cosign key as a `Cosigner`: its name, key ID, public key, vkey and signature type,
 * the lines it signs and the verifier of those lines. Production (the cosign role's add-checkpoint
 * and sign-subtree, src/cosign) and tests sign through here; there is no other cosigning code.
 *
 *   ed25519Cosigner(name, key)           type 0x04 cosignature/v1 (C2SP tlog-cosignature)
 *   mlDsa44Cosigner(name, key, workers?)  type 0x06 subtree/v1 (SPEC §5.2): checkpoints as the
 *                                         subtree [0, size) with hash = root, and any subtree (T = 0)
 *   cosignerForKey(name, key, workers?)   one of the two, by the key's algorithm
 *
 * Lines are verified in one place: `verifier()` is the key's NoteVerifier (vkey.ts), whose signed
 * input the node checks on its worker pool and the portable verifier with WebCrypto.
 *
 * Nothing here reads a clock: timestamps are parameters. Signing runs on the calling thread unless
 * `workers` are given (the cosign role's signature pool, for ML-DSA-44's ≈ 20× cost); `noteSigner`
 * always signs on the calling thread.
 */
import { KeyObject } from 'node:crypto';
import { ed25519PublicKeyBytes, signEd25519 } from '../crypto/ed25519.ts';
import { mlDsa44PublicKeyBytes, signMlDsa44 } from '../crypto/ml-dsa.ts';
import { cosignatureMessage, encodeCosignatureBytes, toCosignatureTimestamp } from './cosignature.ts';
import {
  SIG_TYPE_COSIGNATURE_V1,
  SIG_TYPE_SUBTREE_V1,
  formatSignatureLine,
  type NoteSigner,
  type NoteVerifier,
  type SignatureCheck,
} from './signed-note.ts';
import {
  checkpointStatement,
  checkpointSubtreeMessage,
  encodeSubtreeSignatureBytes,
  statementOfCheckpoint,
  subtreeMessage,
} from './subtree-message.ts';
import type { Checkpoint } from './checkpoint.ts';
import { cosignatureNoteVerifier, subtreeNoteVerifier } from './vkey.ts';

/** Signature arithmetic off the calling thread (the node's SignaturePool fits). */
export interface CosignerWorkers {
  signMlDsa44(privateKey: KeyObject, message: Uint8Array): Promise<Uint8Array>;
  verifyMlDsa44(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean>;
}

/**
 * An Ed25519 key outside the process (an ssh-agent or PKCS#11 signer, SPEC §1.1): it signs
 * asynchronously only, and its signatures are verified before use by the signer itself.
 */
export interface ExternalEd25519Key {
  readonly algorithm?: string;
  readonly publicKey: Uint8Array;
  sign(message: Uint8Array): Promise<Uint8Array>;
}

/** A cosign key: in the process, or an external Ed25519 one. */
export type CosignKey = KeyObject | ExternalEd25519Key;

/** A subtree of a log's tree, as subtree/v1 signs it. */
export interface Subtree {
  readonly origin: string;
  readonly start: bigint | number;
  readonly end: bigint | number;
  /** The subtree's Merkle hash, 32 bytes. */
  readonly hash: Uint8Array;
}

/** A cosigner at one timestamp, signing on the calling thread. */
export interface CosignerNoteSigner extends NoteSigner {
  /** The verifier of the lines (as `Cosigner.verifier()`). */
  readonly verifier: NoteVerifier;
  /** The cosignature line over a checkpoint note text (what `cosignCheckpoint` makes, synchronously). */
  line(checkpointText: string): string;
}

function noteSignerOf(v: NoteVerifier, sign: (text: Uint8Array) => Uint8Array): CosignerNoteSigner {
  return {
    name: v.name,
    keyId: v.keyId,
    verifier: v,
    sign,
    line: (checkpointText) => formatSignatureLine({ name: v.name, keyId: v.keyId, signature: sign(ENCODER.encode(checkpointText)) }),
  };
}

interface CosignerKey {
  /** The cosigner (witness) name: the key name of its lines. */
  readonly name: string;
  readonly keyId: number;
  /** Raw public key: 32 bytes (Ed25519) or 1312 bytes (ML-DSA-44). */
  readonly publicKey: Uint8Array;
  readonly vkey: string;
  /**
   * The cosignature line (`— <name> base64(key ID ‖ u64be T ‖ signature)\n`) over a checkpoint note
   * text at `timestamp` (POSIX seconds). Throws NoteError (`invalid_timestamp`, and for 0x06
   * `invalid_subtree_message` on extension lines or an origin over 255 bytes). `parsed`: the
   * checkpoint of that text when the caller has parsed it already (a 0x06 key signs its values).
   */
  cosignCheckpoint(checkpointText: string, timestamp: bigint | number, parsed?: Checkpoint): Promise<string>;
  /** The same signature at `timestamp` on the calling thread, as a note signer (for signNote) or one line. */
  noteSigner(timestamp: bigint | number): CosignerNoteSigner;
  /** The verifier of this key's lines (name, key ID, type and public key as in the vkey). */
  verifier(): NoteVerifier;
  /** Whether `signature` (a line's bytes after the key ID) is this key's valid line over the checkpoint text (any T). */
  verifyCheckpoint(checkpointText: string, signature: Uint8Array): Promise<boolean>;
}

export interface Ed25519Cosigner extends CosignerKey {
  readonly type: typeof SIG_TYPE_COSIGNATURE_V1;
}

export interface MlDsa44Cosigner extends CosignerKey {
  readonly type: typeof SIG_TYPE_SUBTREE_V1;
  /** The subtree/v1 line over `subtree` at `timestamp` (default 0, required when start ≠ 0: sign-subtree, SPEC §5.4). */
  signSubtree(subtree: Subtree, timestamp?: bigint | number): Promise<string>;
}

export type Cosigner = Ed25519Cosigner | MlDsa44Cosigner;

const ENCODER = new TextEncoder();

function verifyWith(verifier: NoteVerifier, workers: CosignerWorkers | undefined) {
  return async (checkpointText: string, signature: Uint8Array): Promise<boolean> => {
    const text = ENCODER.encode(checkpointText);
    if (workers === undefined) return verifier.verify(text, signature);
    const check: SignatureCheck | null = verifier.signedInput(text, signature);
    if (check === null) return false;
    return check.algorithm === 'ml-dsa-44'
      ? workers.verifyMlDsa44(check.publicKey, check.message, check.signature)
      : verifier.verify(text, signature);
  };
}

/**
 * A cosignature/v1 (type 0x04) cosigner of the Ed25519 private key `privateKey` under `name`; an
 * external key signs `cosignCheckpoint` only (its `noteSigner` throws: it cannot sign synchronously).
 */
export function ed25519Cosigner(name: string, privateKey: CosignKey): Ed25519Cosigner {
  if (!(privateKey instanceof KeyObject)) return externalEd25519Cosigner(name, privateKey);
  const v = cosignatureNoteVerifier(name, ed25519PublicKeyBytes(privateKey));
  const sign = (text: Uint8Array | string, t: bigint): Uint8Array =>
    encodeCosignatureBytes(t, signEd25519(privateKey, cosignatureMessage(text, t)));
  return {
    type: SIG_TYPE_COSIGNATURE_V1,
    name,
    keyId: v.keyId,
    publicKey: v.publicKey,
    vkey: v.vkey,
    cosignCheckpoint(checkpointText, timestamp) {
      // signed now, on this thread (a throw in the executor rejects)
      return new Promise((resolve) => {
        const t = toCosignatureTimestamp(timestamp);
        resolve(formatSignatureLine({ name, keyId: v.keyId, signature: sign(checkpointText, t) }));
      });
    },
    noteSigner(timestamp) {
      const t = toCosignatureTimestamp(timestamp);
      return noteSignerOf(v, (text) => sign(text, t));
    },
    verifier: () => v,
    verifyCheckpoint: verifyWith(v, undefined),
  };
}

function externalEd25519Cosigner(name: string, key: ExternalEd25519Key): Ed25519Cosigner {
  const v = cosignatureNoteVerifier(name, key.publicKey);
  return {
    type: SIG_TYPE_COSIGNATURE_V1,
    name,
    keyId: v.keyId,
    publicKey: v.publicKey,
    vkey: v.vkey,
    async cosignCheckpoint(checkpointText, timestamp) {
      const t = toCosignatureTimestamp(timestamp);
      const signature = await key.sign(cosignatureMessage(checkpointText, t));
      return formatSignatureLine({ name, keyId: v.keyId, signature: encodeCosignatureBytes(t, signature) });
    },
    noteSigner() {
      throw new TypeError('an external cosign key signs asynchronously only (cosignCheckpoint)');
    },
    verifier: () => v,
    verifyCheckpoint: verifyWith(v, undefined),
  };
}

/**
 * A subtree/v1 (type 0x06) cosigner of the ML-DSA-44 private key `privateKey` under `name`; it
 * signs and verifies on `workers` when given. Throws KeyError when the runtime has no ML-DSA-44.
 */
export function mlDsa44Cosigner(name: string, privateKey: KeyObject, workers?: CosignerWorkers): MlDsa44Cosigner {
  const v = subtreeNoteVerifier(name, mlDsa44PublicKeyBytes(privateKey));
  const sign = (message: Uint8Array): Promise<Uint8Array> =>
    workers === undefined ? Promise.resolve(signMlDsa44(privateKey, message)) : workers.signMlDsa44(privateKey, message);
  const line = (timestamp: bigint | number, signature: Uint8Array): string =>
    formatSignatureLine({ name, keyId: v.keyId, signature: encodeSubtreeSignatureBytes(timestamp, signature) });
  return {
    type: SIG_TYPE_SUBTREE_V1,
    name,
    keyId: v.keyId,
    publicKey: v.publicKey,
    vkey: v.vkey,
    async cosignCheckpoint(checkpointText, timestamp, parsed) {
      const statement =
        parsed === undefined ? checkpointStatement(name, checkpointText, timestamp) : statementOfCheckpoint(name, parsed, timestamp);
      return line(timestamp, await sign(subtreeMessage(statement)));
    },
    async signSubtree(subtree, timestamp = 0n) {
      return line(timestamp, await sign(subtreeMessage({ name, timestamp, ...subtree })));
    },
    noteSigner(timestamp) {
      const t = toCosignatureTimestamp(timestamp);
      return noteSignerOf(v, (text) =>
        encodeSubtreeSignatureBytes(t, signMlDsa44(privateKey, checkpointSubtreeMessage(name, DECODER.decode(text), t))),
      );
    },
    verifier: () => v,
    verifyCheckpoint: verifyWith(v, workers),
  };
}

const DECODER = new TextDecoder('utf-8', { fatal: true });

/**
 * The cosigner of a private key by its algorithm: ML-DSA-44 → subtree/v1, else Ed25519 →
 * cosignature/v1. Throws (the key library's error, or TypeError) for anything else: a public key,
 * RSA, … (the cosign role reports it as `invalid_cosign_key`).
 */
export function cosignerForKey(name: string, privateKey: CosignKey, workers?: CosignerWorkers): Cosigner {
  if (!(privateKey instanceof KeyObject)) {
    if (privateKey.algorithm !== undefined && privateKey.algorithm !== 'ed25519') throw new TypeError('an external cosign key is Ed25519');
    return externalEd25519Cosigner(name, privateKey);
  }
  if (privateKey.type !== 'private') throw new TypeError('not a private key');
  return privateKey.asymmetricKeyType === 'ml-dsa-44' ? mlDsa44Cosigner(name, privateKey, workers) : ed25519Cosigner(name, privateKey);
}
