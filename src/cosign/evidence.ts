/**
 * Evidence keeping (SPEC §5): a checkpoint is kept only where the log's signature alone proves
 * misbehaviour against the stored state — size 0 with a root other than the empty-tree root, or
 * the stored size with another root. A failing consistency proof proves nothing (the client wrote
 * it) and is never evidence. A row holds the checkpoint text with only the log signature lines that
 * verified; rows are deduplicated by SHA-256 of the checkpoint text (one row per checkpoint, however
 * it is signed or sent) and bounded per origin (`limit`, oldest evicted first).
 */
import { sha256 } from '../crypto/sha256.ts';
import { encodeBase64 } from '../encoding/base64.ts';
import type { Checkpoint } from '../note/checkpoint.ts';
import { formatNote, type VerifiedNote } from '../note/signed-note.ts';
import { EVIDENCE_LIMIT, type CosignStateStorage, type OriginState } from '../store/types.ts';
import { EMPTY_ROOT, hashEqual } from '../tlog/hash.ts';
import { CosignConfigError } from './errors.ts';

/**
 * Why a validly signed checkpoint proves by itself that its log misbehaved, given the stored state
 * of the origin; undefined when it does not. A checkpoint above the stored size never does here:
 * only a consistency proof could show it, and a failing one may just be wrong.
 */
export function misbehaviour(checkpoint: Checkpoint, state: OriginState | undefined): string | undefined {
  if (checkpoint.size === 0 && !hashEqual(checkpoint.rootHash, EMPTY_ROOT)) return 'size 0 with a root other than the empty-tree root';
  if (state !== undefined && checkpoint.size === state.size && !hashEqual(checkpoint.rootHash, state.root)) {
    return `size ${state.size} was cosigned with root ${encodeBase64(state.root)}; the log signed another root for it`;
  }
  return undefined;
}

/** The verified note as stored: its text and the signature lines that verified. */
export function verifiedNoteText(verified: VerifiedNote): string {
  return formatNote({ text: verified.text, signatures: verified.verified.map((v) => v.signature) });
}

export interface EvidenceKeeperOptions {
  store: CosignStateStorage;
  /** Clock, milliseconds since the epoch. */
  now: () => number;
  /** Rows kept per origin (default EVIDENCE_LIMIT, 1 000). */
  limit?: number | undefined;
  /** Called after a new row is stored (for logs and metrics); not for a known one. */
  onEvidence?: ((origin: string, reason: string) => void) | undefined;
  /** Called when storing evidence evicted `count` older rows of the origin. */
  onEvicted?: ((origin: string, count: number) => void) | undefined;
}

export class EvidenceKeeper {
  private readonly opts: EvidenceKeeperOptions;
  private readonly limit: number;

  /** Throws CosignConfigError `invalid_evidence_limit` unless the limit is a positive integer. */
  constructor(opts: EvidenceKeeperOptions) {
    const limit = opts.limit ?? EVIDENCE_LIMIT;
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new CosignConfigError('invalid_evidence_limit', `evidence limit ${limit}: a positive integer is required`);
    this.opts = opts;
    this.limit = limit;
  }

  /**
   * Keep the checkpoint as evidence, durably, when its log signature alone proves misbehaviour
   * against `state`. True when it is evidence (stored now or already).
   */
  async keep(origin: string, checkpoint: Checkpoint, verified: VerifiedNote, state: OriginState | undefined): Promise<boolean> {
    const reason = misbehaviour(checkpoint, state);
    if (reason === undefined) return false;
    const { added, evicted } = await this.opts.store.recordEvidence(
      {
        origin,
        hash: sha256(new TextEncoder().encode(verified.text)),
        note: verifiedNoteText(verified),
        reason,
        at: Math.floor(this.opts.now() / 1000),
      },
      this.limit,
    );
    if (added) this.opts.onEvidence?.(origin, reason);
    if (evicted > 0) this.opts.onEvicted?.(origin, evicted);
    return true;
  }
}
