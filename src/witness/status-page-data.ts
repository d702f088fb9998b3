// The status page's data model: what gathering (status-page.ts) produces for one request and
// rendering (status-page-render.ts) shows, kept apart so neither imports the other.
import type { CosignStatus } from '../cosign/part.ts';
import type { KelWitnessStatus } from '../kel-witness/part.ts';
import type { LogWitnessStatus } from '../log-witness/part.ts';
import type { KelRegistryStatus } from '../registry/live.ts';

export type { CosignLogRow } from '../cosign/part.ts';

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
  logWitnesses?: LogWitnessStatus | null;
  /** The KERI witness role (SPEC §3.6); null or absent when role kel is off. */
  kelWitness?: KelWitnessStatus | null;
  /** null when the cosign role is off. */
  cosign: CosignStatus | null;
  /** Base URL for the commands (`$WITNESS_URL` when the Host header was unusable). */
  baseUrl: string;
  hostUsable: boolean;
  runningDigest?: string | undefined;
  nowMs: number;
  startedAtMs: number;
}

/** Seed and duplicity counts (`count(*)` scans) are re-read at most this often. */
export const COUNTS_TTL_MS = 10_000;
