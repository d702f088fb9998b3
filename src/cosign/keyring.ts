/**
 * The cosign keys of a witness (`--cosign-key`, SPEC §5.3): one Cosigner (src/note/cosigner.ts)
 * per key, in line order, each a distinct key of type 0x04 (Ed25519 cosignature/v1) or 0x06
 * (ML-DSA-44 subtree/v1), and the digest of the set that a stored state's lines were made by.
 */
import { sha256 } from '../crypto/sha256.ts';
import { encodeHex } from '../encoding/hex.ts';
import { cosignerForKey, type Cosigner, type CosignerWorkers, type CosignKey, type MlDsa44Cosigner } from '../note/cosigner.ts';
import { SIG_TYPE_COSIGNATURE_V1, SIG_TYPE_SUBTREE_V1 } from '../note/signed-note.ts';
import type { Checkpoint } from '../note/checkpoint.ts';
import { formatCosignatureReply } from '../note/tlog-witness.ts';
import { CosignConfigError } from './errors.ts';

export class CosignKeyring {
  /** One per cosign key, in line order. */
  readonly cosigners: readonly Cosigner[];
  /** SHA-256 of the cosign vkeys, one per line: which key set made a state's stored lines. */
  readonly digest: Uint8Array;

  /**
   * Throws CosignConfigError `invalid_cosign_key`: no key, a key that is not an Ed25519 or
   * ML-DSA-44 private key, or the same key twice. ML-DSA-44 keys sign on `workers` when given.
   */
  constructor(name: string, keys: readonly CosignKey[], workers?: CosignerWorkers) {
    if (keys.length === 0) throw new CosignConfigError('invalid_cosign_key', 'at least one cosign key is required');
    const seen = new Set<string>();
    this.cosigners = keys.map((key, i): Cosigner => {
      let cosigner: Cosigner;
      try {
        cosigner = cosignerForKey(name, key, workers);
      } catch (e) {
        throw new CosignConfigError(
          'invalid_cosign_key',
          `cosign key ${i + 1}: not an Ed25519 or ML-DSA-44 private key (${(e as Error).message})`,
        );
      }
      const hex = encodeHex(cosigner.publicKey);
      if (seen.has(hex))
        throw new CosignConfigError('invalid_cosign_key', `cosign key ${i + 1}: the same key twice (each cosigner needs a distinct key)`);
      seen.add(hex);
      return cosigner;
    });
    this.digest = sha256(new TextEncoder().encode(this.cosigners.map((c) => c.vkey).join('\n')));
  }

  /** The cosigner vkeys, in line order. */
  get vkeys(): string[] {
    return this.cosigners.map((c) => c.vkey);
  }

  /** The vkey of the first Ed25519 (type 0x04) key, if any: `/health` `cosign_vkey`. */
  get ed25519Vkey(): string | undefined {
    return this.cosigners.find((c) => c.type === SIG_TYPE_COSIGNATURE_V1)?.vkey;
  }

  /** The ML-DSA-44 cosigners, in `--cosign-key` order (sign-subtree, SPEC §5.4). */
  get mlDsa(): readonly MlDsa44Cosigner[] {
    return this.cosigners.filter((c): c is MlDsa44Cosigner => c.type === SIG_TYPE_SUBTREE_V1);
  }

  /** Whether an ML-DSA-44 key is configured (then extension lines are refused, SPEC §5.3). */
  get hasMlDsaKey(): boolean {
    return this.cosigners.some((c) => c.type === SIG_TYPE_SUBTREE_V1);
  }

  /**
   * Every cosigner's line over the checkpoint text at `timestamp`, in key order (signed
   * concurrently); `parsed` is that text's checkpoint, parsed once by the caller.
   */
  async cosignCheckpoint(checkpointText: string, timestamp: number, parsed?: Checkpoint): Promise<string> {
    return formatCosignatureReply(await Promise.all(this.cosigners.map((c) => c.cosignCheckpoint(checkpointText, timestamp, parsed))));
  }
}
