/**
 * The row layout both SQL drivers share: seeds with their latest anchor stored as lossless JSON
 * (cumulative as an integer literal), duplicity proofs as JSON, hashes and signatures as bytes.
 */
import { anchorJson, decodeAnchor, decodeDuplicityProof, encodeDuplicityProof } from '../anchor/codec.ts';
import type { Anchor, DuplicityProof } from '../anchor/types.ts';
import { parseStrictJson, stringifyJson } from '../encoding/json.ts';
import { StoreUnavailableError } from './errors.ts';
import type { KelTip, OriginState, SeedRecord } from './types.ts';

const CUMULATIVE = new Set(['cumulative']);

export const encodeStoredAnchor = (a: Anchor): string => anchorJson(a);
export const decodeStoredAnchor = (text: string): Anchor => decodeAnchor(parseStrictJson(text, { bigIntegerKeys: CUMULATIVE }), '');
export const encodeStoredProof = (p: DuplicityProof): string => stringifyJson(encodeDuplicityProof(p));
export const decodeStoredProof = (text: string): DuplicityProof =>
  decodeDuplicityProof(parseStrictJson(text, { bigIntegerKeys: CUMULATIVE }));

export function toBytes(v: unknown): Uint8Array {
  if (!(v instanceof Uint8Array)) throw new StoreUnavailableError('store: corrupt row (expected bytes)');
  return v;
}

/** A seed joined with its duplicity proof (null when not frozen). */
export interface SeedRow {
  seed_id: Uint8Array;
  owner: string;
  created_at: number;
  anchor: string;
  cosig_signature: Uint8Array;
  cosig_time: number;
  leaf_index: number;
  proof: string | null;
}

export function seedFromRow(row: SeedRow): SeedRecord {
  const record: SeedRecord = {
    seedId: toBytes(row.seed_id),
    owner: row.owner,
    createdAt: row.created_at,
    latest: decodeStoredAnchor(row.anchor),
    cosignature: { signature: toBytes(row.cosig_signature), timestamp: row.cosig_time, leafIndex: row.leaf_index },
  };
  if (row.proof !== null) record.duplicity = decodeStoredProof(row.proof);
  return record;
}

/** A cosign origin's row, both drivers. */
export interface OriginRow {
  size: number;
  root: Uint8Array;
  checkpoint: string;
  cosignatures: string;
  last_time: number;
  log_keys: string | null;
  cosigner_set: Uint8Array | null;
}

/** A key set as stored: vkeys, one per line (vkeys never contain a newline). */
export const encodeKeySet = (keys: readonly string[] | undefined): string | null => (keys === undefined ? null : keys.join('\n'));
export const decodeKeySet = (text: string | null): string[] | undefined => (text === null || text === '' ? undefined : text.split('\n'));

/** The stored state of `origin`; undefined for an empty state (an imported log, never cosigned: no checkpoint). */
export function originFromRow(origin: string, row: OriginRow | undefined): OriginState | undefined {
  if (row === undefined || row.checkpoint === '') return undefined;
  return {
    origin,
    size: row.size,
    root: toBytes(row.root),
    checkpoint: row.checkpoint,
    cosignatures: row.cosignatures,
    lastTime: row.last_time,
    logKeys: decodeKeySet(row.log_keys),
    cosignerSet: row.cosigner_set === null ? undefined : toBytes(row.cosigner_set),
  };
}

/** A kel_tips row as both drivers read it (est_s/est_d NULL on rows written before SPEC revision 4). */
export interface KelTipRow {
  prefix: string;
  s: number | string;
  d: string;
  est_s: number | string | null;
  est_d: string | null;
}

export function kelTipFromRow(r: KelTipRow): KelTip {
  const tip: KelTip = { prefix: r.prefix, s: Number(r.s), d: r.d };
  if (r.est_s !== null && r.est_d !== null) {
    tip.estS = Number(r.est_s);
    tip.estD = r.est_d;
  }
  return tip;
}

/**
 * The SQL condition (both drivers, in an upsert's DO UPDATE … WHERE) under which the new tip
 * `excluded` is ahead of the stored row `kel_tips` (SPEC §3.5 rev 4): a higher est_s, or the same
 * est_s and a higher s; a row without est_s by s alone, and filled at its own tip.
 */
export const KEL_TIP_AHEAD = `CASE WHEN kel_tips.est_s IS NULL THEN excluded.s > kel_tips.s OR (excluded.s = kel_tips.s AND excluded.d = kel_tips.d)
  ELSE excluded.est_s > kel_tips.est_s OR (excluded.est_s = kel_tips.est_s AND excluded.s > kel_tips.s) END`;
