/**
 * The witness log's checkpoint signer (SPEC §4): checkpoints signed with the witness key
 * (signed-note type 0x01, key name = the origin).
 */
import type { KeyObject } from 'node:crypto';
import { ed25519PublicKeyBytes } from '../crypto/ed25519.ts';
import { formatCheckpoint } from '../note/checkpoint.ts';
import { signNote, SIG_TYPE_ED25519 } from '../note/signed-note.ts';
import { ed25519NoteSigner, formatVkey } from '../note/vkey.ts';
import type { SignedCheckpoint, TreeHead } from '../store/types.ts';

export class LogSigner {
  readonly origin: string;
  readonly vkey: string;
  private readonly signer: ReturnType<typeof ed25519NoteSigner>;

  constructor(origin: string, key: KeyObject) {
    this.origin = origin;
    this.signer = ed25519NoteSigner(origin, key);
    this.vkey = formatVkey(origin, SIG_TYPE_ED25519, ed25519PublicKeyBytes(key));
  }

  sign(head: TreeHead): SignedCheckpoint {
    const text = formatCheckpoint({ origin: this.origin, size: head.size, rootHash: head.root, extensions: [] });
    return { ...head, note: signNote(text, [this.signer]) };
  }
}
