/**
 * The witness's own log (SPEC §4): checkpoints signed with the witness key (signed-note type 0x01,
 * key name = the origin), and the inclusion material returned with every co-signed anchor.
 */
import type { KeyObject } from 'node:crypto';
import { formatCheckpoint } from '../note/checkpoint.ts';
import { signNote } from '../note/signed-note.ts';
import { ed25519NoteSigner, formatVkey } from '../note/vkey.ts';
import { SIG_TYPE_ED25519 } from '../note/signed-note.ts';
import { formatTlogProof } from '../note/tlog-proof.ts';
import { encodeBase64 } from '../encoding/base64.ts';
import { ed25519PublicKeyBytes } from '../crypto/ed25519.ts';
import type { SignedCheckpoint, TreeHead, WitnessStore } from '../store/types.ts';

export interface InclusionBody {
  log_origin: string;
  leaf_index: number;
  tree_size: number;
  hashes: string[];
  checkpoint: string;
  tlog_proof: string;
}

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

/** Inclusion proof of `leafIndex` against `checkpoint`, in both JSON and tlog-proof forms. */
export async function inclusionBody(store: WitnessStore, origin: string, leafIndex: number, checkpoint: SignedCheckpoint): Promise<InclusionBody> {
  const proof = await store.inclusionProof(leafIndex, checkpoint.size);
  return {
    log_origin: origin,
    leaf_index: leafIndex,
    tree_size: checkpoint.size,
    hashes: proof.map(encodeBase64),
    checkpoint: checkpoint.note,
    tlog_proof: formatTlogProof({ index: leafIndex, proof, checkpoint: checkpoint.note }),
  };
}

/** Sign and store the size-0 checkpoint on first start; return the latest checkpoint. */
export async function ensureCheckpoint(store: WitnessStore, signer: LogSigner): Promise<SignedCheckpoint> {
  const existing = await store.checkpoint();
  if (existing !== undefined) return existing;
  return store.transaction(async (tx) => {
    const cp = signer.sign(await tx.treeHead());
    await tx.setCheckpoint(cp);
    return cp;
  });
}
