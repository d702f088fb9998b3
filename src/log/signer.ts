/**
 * The witness log's checkpoint signer (SPEC §4): checkpoints signed with the witness key
 * (signed-note type 0x01, key name = the origin). The key is in the process (a KeyObject: `sign`
 * is synchronous) or outside it (a Signer from src/keys, SPEC §1.1: only `signAsync` works, and a
 * signer failure rejects with its SignerError so the caller's transaction commits nothing).
 *
 * During a witness-key rotation overlap (SPEC §1.2) the signer holds the next key too: every
 * checkpoint then carries two 0x01 lines under the origin, the current key's first.
 */
import type { KeyObject } from 'node:crypto';
import { ed25519PublicKeyBytes, signEd25519 } from '../crypto/ed25519.ts';
import { encodeHex } from '../encoding/hex.ts';
import { SignerError } from '../keys/errors.ts';
import type { Signer } from '../keys/signer.ts';
import { formatCheckpoint } from '../note/checkpoint.ts';
import { computeKeyId } from '../note/key-id.ts';
import { formatNote, SIG_TYPE_ED25519, type NoteSignature } from '../note/signed-note.ts';
import { formatVkey } from '../note/vkey.ts';
import type { SignedCheckpoint, TreeHead } from '../store/types.ts';

const ENCODER = new TextEncoder();

const isExternal = (key: KeyObject | Signer): key is Signer => 'sign' in key && typeof key.sign === 'function' && 'publicKey' in key;

/** One key of the signer: its raw public key, key ID under the origin, and how it signs. */
interface LineKey {
  readonly publicKey: Uint8Array;
  readonly keyId: number;
  readonly key: KeyObject | Signer;
}

export class LogSigner {
  readonly origin: string;
  /** The current witness key's vkey. */
  readonly vkey: string;
  /** The raw 32-byte current witness public key. */
  readonly publicKey: Uint8Array;
  /** Every key's vkey, the current key's first (two during a rotation overlap). */
  readonly vkeys: readonly string[];
  /** The key set as hex public keys, the current key's first (compared with the store's history before each signature). */
  readonly keySet: readonly string[];
  private readonly keys: readonly LineKey[];

  constructor(origin: string, key: KeyObject | Signer, nextKey?: KeyObject | Signer) {
    this.origin = origin;
    this.keys = [key, ...(nextKey === undefined ? [] : [nextKey])].map((k) => {
      const publicKey = isExternal(k) ? k.publicKey : ed25519PublicKeyBytes(k);
      return { publicKey, keyId: computeKeyId(origin, SIG_TYPE_ED25519, publicKey), key: k };
    });
    this.publicKey = this.keys[0]!.publicKey;
    this.vkeys = this.keys.map((k) => formatVkey(origin, SIG_TYPE_ED25519, k.publicKey));
    this.vkey = this.vkeys[0]!;
    this.keySet = this.keys.map((k) => encodeHex(k.publicKey));
  }

  private text(head: TreeHead): string {
    return formatCheckpoint({ origin: this.origin, size: head.size, rootHash: head.root, extensions: [] });
  }

  /** Synchronous signing: only for keys in the process (else SignerError `signer_unavailable`). */
  sign(head: TreeHead): SignedCheckpoint {
    const text = this.text(head);
    const bytes = ENCODER.encode(text);
    const signatures: NoteSignature[] = this.keys.map((k) => {
      if (isExternal(k.key))
        throw new SignerError('signer_unavailable', 'the witness key is outside the process: checkpoints are signed asynchronously');
      return { name: this.origin, keyId: k.keyId, signature: signEd25519(k.key, bytes) };
    });
    return { ...head, note: formatNote({ text, signatures }) };
  }

  /** Sign with either kind of key; an external signer's failure rejects with its SignerError. */
  async signAsync(head: TreeHead): Promise<SignedCheckpoint> {
    if (!this.keys.some((k) => isExternal(k.key))) return this.sign(head);
    const text = this.text(head);
    const bytes = ENCODER.encode(text);
    const signatures: NoteSignature[] = [];
    for (const k of this.keys) {
      const signature = isExternal(k.key) ? await k.key.sign(bytes) : signEd25519(k.key, bytes);
      signatures.push({ name: this.origin, keyId: k.keyId, signature });
    }
    return { ...head, note: formatNote({ text, signatures }) };
  }
}
