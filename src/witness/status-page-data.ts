// The status page's data model: what gathering (status-page.ts) produces for one request and
// rendering (status-page-render.ts) shows, kept apart so neither imports the other.
import type { LogWitnessRow } from '../log-witness/witnessing.ts';
import type { KelRegistryStatus } from '../registry/live.ts';

export interface CosignLogRow {
  origin: string;
  /** Where the log is configured: `logs file` or `list <path>`. */
  source: string;
  /** Size last cosigned (null: never). */
  size: number | null;
  /** Unix seconds of the last cosignature (null: never). */
  lastCosigned: number | null;
  qpd: number | undefined;
  /** add-checkpoint requests that reached the quota check since start, and those refused (429). */
  counted: number;
  refused: number;
}

export interface WitnessPageData {
  name: string;
  roles: readonly string[];
  version: string;
  witnessKeyHex: string;
  logOrigin: string;
  logVkey: string;
  cosignVkeys: readonly string[];
  log: {
    size: number;
    /** The signed note (null before the first checkpoint). */
    checkpoint: string | null;
    /** Unix ms; exact when this process signed it, else the latest it can have been. */
    signedAtMs: number;
    signedExact: boolean;
  };
  /** Seeds with a co-signed anchor, anchors co-signed (log entries that are not duplicity entries), duplicity proofs. */
  counts: { seeds: number; anchors: number; duplicities: number };
  /** The party registry's KEL source (SPEC §3.5); absent without one. */
  kel?: KelRegistryStatus | undefined;
  /** The peer witnesses of the own log (SPEC §4.1); null without --log-witnesses. */
  logWitnesses?: {
    published: number;
    witnesses: readonly LogWitnessRow[];
  } | null;
  /** null when the cosign role is off. */
  cosign: { logs: readonly CosignLogRow[]; total: number } | null;
  /** Base URL for the commands (`$WITNESS_URL` when the Host header was unusable). */
  baseUrl: string;
  hostUsable: boolean;
  runningDigest?: string | undefined;
  nowMs: number;
  startedAtMs: number;
}

/** Seed and duplicity counts (`count(*)` scans) are re-read at most this often. */
export const COUNTS_TTL_MS = 10_000;
