/**
 * The witness log's checkpoint signer (SPEC §4): checkpoints signed with the witness key
 * (signed-note type 0x01, key name = the origin). The key is in the process (a KeyObject: `sign`
 * is synchronous) or outside it (a Signer from src/keys, SPEC §1.1: only `signAsync` works, and a
 * signer failure rejects with its SignerError so the caller's transaction commits nothing).
 */
import type { KeyObject } from 'node:crypto';
import { ed25519PublicKeyBytes } from '../crypto/ed25519.ts';
import { SignerError } from '../keys/errors.ts';
import type { Signer } from '../keys/signer.ts';
import { formatCheckpoint } from '../note/checkpoint.ts';
import { computeKeyId } from '../note/key-id.ts';
import { formatNote, signNote, SIG_TYPE_ED25519 } from '../note/signed-note.ts';
import { ed25519NoteSigner, formatVkey } from '../note/vkey.ts';
import type { SignedCheckpoint, TreeHead } from '../store/types.ts';

const ENCODER = new TextEncoder();

export class LogSigner {
  readonly origin: string;
  readonly vkey: string;
  /** The raw 32-byte witness public key. */
  readonly publicKey: Uint8Array;
  private readonly signer: ReturnType<typeof ed25519NoteSigner> | undefined;
  private readonly external: Signer | undefined;

  constructor(origin: string, key: KeyObject | Signer) {
    this.origin = origin;
    if ('sign' in key && typeof key.sign === 'function' && 'publicKey' in key) {
      this.external = key;
      this.signer = undefined;
      this.publicKey = key.publicKey;
    } else {
      this.signer = ed25519NoteSigner(origin, key as KeyObject);
      this.external = undefined;
      this.publicKey = ed25519PublicKeyBytes(key as KeyObject);
    }
    this.vkey = formatVkey(origin, SIG_TYPE_ED25519, this.publicKey);
  }

  private text(head: TreeHead): string {
    return formatCheckpoint({ origin: this.origin, size: head.size, rootHash: head.root, extensions: [] });
  }

  /** Synchronous signing: only for a key in the process (else SignerError `signer_unavailable`). */
  sign(head: TreeHead): SignedCheckpoint {
    if (this.signer === undefined) {
      throw new SignerError('signer_unavailable', 'the witness key is outside the process: checkpoints are signed asynchronously');
    }
    return { ...head, note: signNote(this.text(head), [this.signer]) };
  }

  /** Sign with either kind of key; an external signer's failure rejects with its SignerError. */
  async signAsync(head: TreeHead): Promise<SignedCheckpoint> {
    if (this.external === undefined) return this.sign(head);
    const text = this.text(head);
    const signature = await this.external.sign(ENCODER.encode(text));
    const keyId = computeKeyId(this.origin, SIG_TYPE_ED25519, this.publicKey);
    return { ...head, note: formatNote({ text, signatures: [{ name: this.origin, keyId, signature }] }) };
  }
}
