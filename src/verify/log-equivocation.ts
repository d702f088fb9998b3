/**
 * Log equivocation evidence (SPEC §6.1), checked offline: two checkpoints of one log origin, both
 * signed by the log key the caller pins, that cannot both be views of one append-only log — same
 * size and different roots, or (with the consistency proof hashes a monitor computed from the
 * log's tiles) a larger tree whose first `a.size` leaves have another root than the smaller
 * checkpoint signs. A monitor writes the document; anyone holding the log's key re-checks it.
 */
import { decodeBase64 } from '../encoding/base64.ts';
import { equalBytes } from '../encoding/portable.ts';
import { fail, VerificationError } from './errors.ts';
import { consistencyFailure } from './merkle.ts';
import { verifyCheckpoint, type Checkpoint, type NoteKey } from './note.ts';

export const LOG_EQUIVOCATION_V = 'anchor-witness/log-equivocation/v1';

/** The evidence document: `a` and `b` are signed notes; the proof fields only for two sizes. */
export interface LogEquivocationEvidence {
  v: typeof LOG_EQUIVOCATION_V;
  origin: string;
  a: string;
  b: string;
  /** The root of the first min(size) leaves of the larger tree, computed from its tiles (base64). */
  old_root_from_tiles?: string;
  /** Consistency proof from (min size, old_root_from_tiles) to the larger checkpoint (base64 hashes). */
  consistency_proof?: string[];
}

export interface ProvenLogEquivocation {
  origin: string;
  /** `same_size`: one size, two roots; `inconsistent`: the smaller is not a prefix of the larger. */
  kind: 'same_size' | 'inconsistent';
  a: Checkpoint;
  b: Checkpoint;
}

const FIELDS = new Set(['v', 'origin', 'a', 'b', 'old_root_from_tiles', 'consistency_proof']);
const unproven = (why: string): never => fail('log_equivocation_invalid', `not proven: ${why}`);

function hash(text: unknown, what: string): Uint8Array {
  let bytes: Uint8Array | undefined;
  try {
    bytes = typeof text === 'string' ? decodeBase64(text) : undefined;
  } catch {
    bytes = undefined;
  }
  if (bytes?.length !== 32) fail('malformed_response', `${what} must be a base64 SHA-256 hash`);
  return bytes;
}

/** The document's shape (`malformed_response`): strict, no unknown member. */
export function parseLogEquivocation(doc: unknown): LogEquivocationEvidence {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    fail('malformed_response', 'log-equivocation evidence must be an object');
  const d = doc as Record<string, unknown>;
  const extra = Object.keys(d).filter((k) => !FIELDS.has(k));
  if (extra.length > 0) fail('malformed_response', `unknown member(s) ${extra.map((k) => JSON.stringify(k)).join(', ')}`);
  if (d.v !== LOG_EQUIVOCATION_V) fail('malformed_response', `v must be ${JSON.stringify(LOG_EQUIVOCATION_V)}`);
  if (typeof d.origin !== 'string' || d.origin === '') fail('malformed_response', 'origin must be a non-empty string');
  if (typeof d.a !== 'string' || typeof d.b !== 'string') fail('malformed_response', 'a and b must be signed checkpoint notes (strings)');
  const hasProof = d.consistency_proof !== undefined || d.old_root_from_tiles !== undefined;
  if (hasProof) {
    hash(d.old_root_from_tiles, 'old_root_from_tiles');
    if (!Array.isArray(d.consistency_proof)) fail('malformed_response', 'consistency_proof must be an array of base64 hashes');
    (d.consistency_proof as unknown[]).forEach((h, i) => hash(h, `consistency_proof[${i}]`));
  }
  return d as unknown as LogEquivocationEvidence;
}

/**
 * Check evidence under the pinned log key(s): both notes verify under `logKeys` as checkpoints
 * of `origin`, each signed by a pinned key NAMED `origin` (a pinned key of another name proves
 * nothing about this log), and they contradict each other. `malformed_response` for the shape, the
 * checkpoint codes (`checkpoint_invalid`, `checkpoint_wrong_origin`: another origin, or no
 * signature by a key named after it) for a note that does not verify, `log_equivocation_invalid`
 * when the two verified checkpoints prove nothing.
 */
export async function verifyLogEquivocation(evidence: unknown, logKeys: readonly NoteKey[]): Promise<ProvenLogEquivocation> {
  const ev = parseLogEquivocation(evidence);
  const check = async (side: 'a' | 'b'): Promise<Checkpoint> => {
    try {
      const { checkpoint, note } = await verifyCheckpoint(ev[side], logKeys, ev.origin);
      // C2SP signed-note: a log's key is named after its origin. A signature by a pinned key of
      // another name says nothing about this log (SPEC §6.1 rev 4).
      if (!note.verified.some((v) => v.verifier.name === ev.origin))
        fail(
          'checkpoint_wrong_origin',
          `signed only by ${note.verified.map((v) => JSON.stringify(v.verifier.name)).join(', ')}, not by a key of log ${JSON.stringify(ev.origin)} (a log key is named after its origin): it proves nothing about that log`,
        );
      return checkpoint;
    } catch (e) {
      if (e instanceof VerificationError) throw new VerificationError(e.code, `checkpoint ${side}: ${e.message}`);
      throw e;
    }
  };
  const a = await check('a');
  const b = await check('b');
  if (a.size === b.size) {
    if (equalBytes(a.rootHash, b.rootHash)) unproven(`both checkpoints have size ${a.size} and the same root`);
    return { origin: ev.origin, kind: 'same_size', a, b };
  }
  const [small, large] = a.size < b.size ? [a, b] : [b, a];
  if (ev.consistency_proof === undefined || ev.old_root_from_tiles === undefined)
    unproven(`the checkpoints have sizes ${small.size} and ${large.size}: that needs old_root_from_tiles and consistency_proof`);
  const oldRoot = hash(ev.old_root_from_tiles, 'old_root_from_tiles');
  if (equalBytes(oldRoot, small.rootHash))
    unproven(`old_root_from_tiles is the root the size-${small.size} checkpoint signs (the logs agree on it)`);
  const why = await consistencyFailure(
    small.size,
    large.size,
    oldRoot,
    large.rootHash,
    ev.consistency_proof!.map((h, i) => hash(h, `consistency_proof[${i}]`)),
  );
  if (why !== null) unproven(`the consistency proof from old_root_from_tiles to the size-${large.size} root fails (${why})`);
  return { origin: ev.origin, kind: 'inconsistent', a, b };
}
