/**
 * The monitor's state: what it has seen (high-water checkpoints and anchors per witness,
 * observations per seed), a plain JSON document the caller persists between polls so that a
 * restarted monitor still catches a witness restored from an old copy (docs/client.md,
 * "Restarts"). Stored heads and roots are compared as decoded bytes, never as text.
 */
import type { AnchorWire } from '../../anchor/types.ts';
import { decodeHex } from '../../encoding/hex.ts';
import { ClientError } from '../errors.ts';
import type { CosignatureWire } from '../../verify/receipt.ts';
import { checkAlertState, type AlertState } from './alert-state.ts';

export const MONITOR_STATE_V = 'anchor-witness/monitor-state/v1';
/** Observations kept per seed (oldest dropped first). */
export const MAX_OBSERVATIONS = 256;

export interface ObservedAnchor {
  anchor: AnchorWire;
  cosignature: CosignatureWire;
  /** Unix seconds when first seen. */
  seen: number;
}

export interface WitnessRecord {
  public_key: string;
  log_origin: string;
  /**
   * Without a witness set: the configured URL whose first answer pinned this record (trust on
   * first use is bound to it, SPEC §6.2). Absent in witness-set records and in records written
   * before rev 4 (adopted by the first URL whose claim matches).
   */
  url?: string;
  /**
   * The witness's next key, pinned from a verifying `announce` entry (protocol §1.2) until its
   * `complete` entry moves the pin to it (or an `abort` drops it). Hex.
   */
  next_key?: string;
  /** Keys this record pinned before completed rotations, oldest first (hex): never trusted again. */
  rotated_from?: string[];
  /** The largest checkpoint seen that extends every earlier one (signed note). */
  checkpoint?: string;
  /** Signed checkpoints seen (one per size, two when they conflict; from /log/checkpoint and anchor responses), to catch a split view. */
  checkpoints?: string[];
  /** Per seed: the highest anchor seen at this witness. */
  anchors: Record<string, ObservedAnchor>;
  /** Per seed: since when (unix seconds) this witness has been behind. */
  behind: Record<string, number>;
}

export interface Observation extends ObservedAnchor {
  witness: string;
}

/** A checkpoint a `--peer`'s monitoring endpoint served, verified under the pinned log key. */
export interface PeerCheckpoint {
  /** `peer <host>`. */
  peer: string;
  /** The pinned log key it verified under (hex). */
  public_key: string;
  note: string;
}

export interface MonitorState {
  v: typeof MONITOR_STATE_V;
  /** By witness name (the witness set's, else the claimed name — `<name> <url>` when another URL holds it). */
  witnesses: Record<string, WitnessRecord>;
  /** By seed (hex): distinct (witness, index, head) observations. */
  seeds: Record<string, { observations: Observation[] }>;
  /** Checkpoints read from peers' monitoring endpoints (one per peer, origin and size; two when they conflict). */
  peer_checkpoints?: PeerCheckpoint[];
  /** Alert episodes and the webhook delivery queue (src/client/monitor/alerts.ts). */
  alerts?: AlertState;
}

export function emptyMonitorState(): MonitorState {
  return { v: MONITOR_STATE_V, witnesses: {}, seeds: {} };
}

/** A JSON object (not null, not an array): what every record of the state is. */
const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Check the shape of a loaded state document (structurally wrong JSON is `state_invalid`, never a TypeError). */
export function parseMonitorState(doc: unknown): MonitorState {
  const bad = (m: string): never => {
    throw new ClientError('state_invalid', `monitor state: ${m}`);
  };
  if (!isObject(doc)) return bad('not an object');
  const d = doc as Partial<MonitorState>;
  if (d.v !== MONITOR_STATE_V) bad(`v must be ${MONITOR_STATE_V}`);
  if (!isObject(d.witnesses) || !isObject(d.seeds)) bad('witnesses and seeds must be objects');
  for (const [name, w] of Object.entries(d.witnesses as Record<string, Partial<WitnessRecord>>)) {
    if (!isObject(w) || typeof w.public_key !== 'string' || typeof w.log_origin !== 'string' || !isObject(w.anchors) || !isObject(w.behind))
      bad(`witness ${name} is malformed`);
    if (w.url !== undefined && typeof w.url !== 'string') bad(`witness ${name}: url must be a string`);
    if (w.next_key !== undefined && hex32(w.next_key) === undefined) bad(`witness ${name}: next_key must be 32 bytes of hex`);
    if (w.rotated_from !== undefined && !(Array.isArray(w.rotated_from) && w.rotated_from.every((k) => hex32(k) !== undefined)))
      bad(`witness ${name}: rotated_from must be an array of 32-byte hex keys`);
    if (w.checkpoints !== undefined && !(Array.isArray(w.checkpoints) && w.checkpoints.every((c) => typeof c === 'string')))
      bad(`witness ${name}: checkpoints must be an array of signed notes`);
  }
  for (const [seed, s] of Object.entries(d.seeds as Record<string, { observations?: unknown }>)) {
    if (!isObject(s) || !Array.isArray(s.observations)) bad(`seed ${seed} is malformed`);
  }
  if (
    d.peer_checkpoints !== undefined &&
    !(
      Array.isArray(d.peer_checkpoints) &&
      d.peer_checkpoints.every(
        (p: Partial<PeerCheckpoint> | null) =>
          isObject(p) && typeof p.peer === 'string' && typeof p.public_key === 'string' && typeof p.note === 'string',
      )
    )
  )
    bad('peer_checkpoints must be an array of {peer, public_key, note}');
  if (d.alerts !== undefined) checkAlertState(d.alerts, bad);
  return d as MonitorState;
}

/** 32 bytes of hex, either case (undefined when not). */
export function hex32(text: unknown): Uint8Array | undefined {
  try {
    return typeof text === 'string' ? decodeHex(text, 32) : undefined;
  } catch {
    return undefined;
  }
}
/** Head bytes of a stored wire anchor (undefined when undecodable). */
export const headOf = (w: AnchorWire): Uint8Array | undefined => hex32(w.head);
export const sameBytes = (a: Uint8Array | undefined, b: Uint8Array | undefined): boolean =>
  a !== undefined && b !== undefined && Buffer.compare(a, b) === 0;
