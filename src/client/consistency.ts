/**
 * Consistency between two checkpoints of one log, computed from the log's tiles (C2SP
 * tlog-tiles): fetch the tiles a consistency proof old → new needs, check they hash to the new
 * checkpoint's root, then compute the proof and the old tree's root from them. Pure apart from
 * the injected tile fetcher.
 *
 * When the old tree's root recomputed from tiles that hash to the NEW signed root differs from
 * the OLD signed root, the log is proven inconsistent: the evidence (the recomputed old root and
 * the consistency proof from it to the new root) verifies offline with verifyInconsistency —
 * a valid consistency proof binds the old root, so the two signed checkpoints cannot both be
 * views of one append-only log. `inconsistent` is returned only when verifyInconsistency accepts
 * the evidence; tiles that yield evidence it refuses (a forged tile below honest upper levels)
 * are `tiles_mismatch`: the witness misbehaves, the log is not proven forked.
 */
import { encodeBase64 } from '../encoding/base64.ts';
import type { Checkpoint } from '../note/checkpoint.ts';
import { EMPTY_ROOT, hashEqual } from '../tlog/hash.ts';
import { consistencyProof, treeRoot, verifyConsistency } from '../tlog/merkle.ts';
import { consistencyProofTiles, tileHashReader, tilePath, type Tile } from '../tlog/tiles.ts';
import { ClientError } from './errors.ts';
import { httpRequest, joinUrl, tileCap, type HttpOptions } from './http.ts';
import { checkEmptyTree } from '../verify/note.ts';
import { UsageError } from '../verify/errors.ts';

export type TileFetcher = (tile: Tile) => Promise<Uint8Array>;

/**
 * Tiles from a log served over HTTP at `<url>/log/tile/…` (C2SP tlog-tiles); `tiles_unavailable` on
 * any other answer than 200; a body longer than the tile (width × 32 bytes) is `response_too_large`.
 */
export function httpTiles(url: string, http: HttpOptions): TileFetcher {
  return async (tile) => {
    const res = await httpRequest(joinUrl(url, `/log/${tilePath(tile)}`), { maxBytes: tileCap(tile.width) }, http);
    if (res.status !== 200) throw new ClientError('tiles_unavailable', `${tilePath(tile)}: HTTP ${res.status}`);
    return res.bytes;
  };
}

export interface InconsistencyEvidence {
  oldSize: number;
  newSize: number;
  /** The root of the first oldSize leaves of the new tree, from its tiles. */
  oldRootFromTiles: Uint8Array;
  /** Consistency proof from (oldSize, oldRootFromTiles) to the new checkpoint. */
  proof: Uint8Array[];
}

export type ConsistencyCheck =
  | { status: 'consistent'; proof: Uint8Array[] }
  /** The served tiles do not hash to the new checkpoint's root, are malformed, or contradict each other: nothing is proven. */
  | { status: 'tiles_mismatch'; reason: string }
  | { status: 'inconsistent'; evidence: InconsistencyEvidence };

/** Check that `newer` extends `older` (same origin, newer.size ≥ older.size), from tiles of `newer`. */
export async function checkConsistencyFromTiles(older: Checkpoint, newer: Checkpoint, fetchTile: TileFetcher): Promise<ConsistencyCheck> {
  if (older.origin !== newer.origin) throw new UsageError('checkpoints of two different logs');
  if (older.size > newer.size) throw new UsageError('the older checkpoint is larger: that is a rollback, not a consistency question');
  checkEmptyTree(newer);
  if (older.size === newer.size || older.size === 0) {
    const expected = older.size === 0 ? EMPTY_ROOT : newer.rootHash;
    if (hashEqual(older.rootHash, expected)) return { status: 'consistent', proof: [] };
    // Same size, two roots (or a size-0 checkpoint with a non-empty root): both signed, no tiles needed.
    return { status: 'inconsistent', evidence: { oldSize: older.size, newSize: newer.size, oldRootFromTiles: expected, proof: [] } };
  }
  const tiles = consistencyProofTiles(older.size, newer.size);
  const fetched = new Map<string, Uint8Array>();
  const key = (t: Tile): string => `${t.level}/${t.index}`;
  await Promise.all(
    tiles.map(async (t) => {
      fetched.set(key(t), await fetchTile(t));
    }),
  );
  let proof: Uint8Array[];
  let oldRoot: Uint8Array;
  try {
    const read = tileHashReader(newer.size, (t) => {
      const bytes = fetched.get(key(t));
      if (bytes === undefined) throw new ClientError('tiles_unavailable', `tile ${tilePath(t)} was not fetched`);
      return bytes;
    });
    const newRoot = treeRoot(newer.size, read);
    if (!hashEqual(newRoot, newer.rootHash))
      return {
        status: 'tiles_mismatch',
        reason: `the tiles hash to ${encodeBase64(newRoot)}, not the checkpoint root ${encodeBase64(newer.rootHash)}`,
      };
    proof = consistencyProof(older.size, newer.size, read);
    oldRoot = treeRoot(older.size, read);
  } catch (e) {
    if (e instanceof ClientError && e.code === 'tiles_unavailable') throw e;
    return { status: 'tiles_mismatch', reason: `tiles unusable: ${(e as Error).message}` };
  }
  if (hashEqual(oldRoot, older.rootHash) && verifyConsistency(older.size, newer.size, older.rootHash, newer.rootHash, proof)) {
    return { status: 'consistent', proof };
  }
  // Inconsistent only when the evidence itself proves it. Tiles whose upper levels hash to the
  // signed root while the hashes below them do not (a forged tile) yield an old root and a proof
  // that do not lead to the new root: that proves nothing about the log, only that the witness
  // serves tiles that do not match what it signed.
  const evidence: InconsistencyEvidence = { oldSize: older.size, newSize: newer.size, oldRootFromTiles: oldRoot, proof };
  if (!verifyInconsistency(older, newer, evidence)) {
    return {
      status: 'tiles_mismatch',
      reason: `the tiles are not consistent with the checkpoint root ${encodeBase64(newer.rootHash)} (a proof computed from them does not verify)`,
    };
  }
  return { status: 'inconsistent', evidence };
}

/**
 * Offline check of inconsistency evidence for two checkpoints (whose signatures the caller has
 * verified): true when the evidence proves they are not views of one append-only log.
 */
export function verifyInconsistency(older: Checkpoint, newer: Checkpoint, ev: InconsistencyEvidence): boolean {
  if (older.origin !== newer.origin || ev.oldSize !== older.size || ev.newSize !== newer.size || older.size > newer.size) return false;
  if (older.size === newer.size) return !hashEqual(older.rootHash, newer.rootHash);
  if (older.size === 0) return !hashEqual(older.rootHash, EMPTY_ROOT);
  return (
    !hashEqual(ev.oldRootFromTiles, older.rootHash) &&
    verifyConsistency(older.size, newer.size, ev.oldRootFromTiles, newer.rootHash, ev.proof)
  );
}
