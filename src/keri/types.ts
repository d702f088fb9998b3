/**
 * The verifier's data model, shared by the source readers (src/keri/document.ts), the verifier
 * (verify.ts, delegation.ts, evaluate.ts) and the registry built on it (SPEC §3.5).
 */
import type { KelReason } from './errors.ts';

export type KelStatus = 'accepted' | 'pending' | 'invalid';

/** A current signing key: its curve, raw bytes (32 Ed25519, 33 compressed P-256) and qb64 text. */
export interface KelKey {
  curve: 'ed25519' | 'p256';
  raw: Uint8Array;
  qb64: string;
}

/**
 * A threshold in a key state: a simple one as its number, a weighted one as its clauses of weight
 * texts (`[["1/2","1/2","1/2"]]`: one clause; SPEC §3.5 rev 4, src/keri/tholder.ts).
 */
export type KelThreshold = number | string[][];

/**
 * The accepted key state of one identifier (SPEC §3.5: tip, current keys, kt, delegator, revoked,
 * abandoned, and rev 4's last establishment event).
 */
export interface KeyState {
  prefix: string;
  /** Sequence number of the accepted tip. */
  s: number;
  /** SAID of the accepted tip. */
  d: string;
  /** The last establishment event (sn, SAID): the tip itself, or the one the tip's ixns follow. */
  estS: number;
  estD: string;
  keys: KelKey[];
  /**
   * The current keys that may sign an anchor alone (SPEC §3.5 check 4): every key, except those
   * whose weight in a weighted kt is "0".
   */
  anchorKeys: KelKey[];
  kt: KelThreshold;
  /** The next-key commitments (`n`) and their threshold in force. */
  n: string[];
  nt: KelThreshold;
  /** The delegator's prefix (from the `dip`), or null for a KEL begun by `icp`. */
  delegator: string | null;
  /** The delegator's accepted KEL carries the seal {d: <this prefix>}. */
  revoked: boolean;
  /** A rotation to n = [] ended the identifier (its keys are no longer usable for anchors). */
  abandoned: boolean;
  /** False for an inception with n = [] (no later event possible). */
  transferable: boolean;
  inception: 'icp' | 'dip';
}

/**
 * One KEL as read from a source, before verification. `events` are the parsed JSON values, one
 * attachment (CESR text) per event. `bytes` is the size of what was read (the file, or the sum of
 * the KEL's blobs) and `sourceHash` the SHA-256 (hex) of those bytes: an unchanged hash is not
 * verified again. `defect` is set when the source itself is not a well-formed KEL document (rule 1):
 * the KEL is then refused with that reason while its last accepted state stays in force.
 * evaluateKels keeps the `events` values in its cache to recognise unchanged events: hand it
 * fresh values (a new parse) and never mutate them afterwards.
 */
export interface RawKel {
  prefix: string;
  events: unknown[];
  attachments: string[];
  bytes: number;
  sourceHash: string;
  source: string;
  defect?: { reason: KelReason; detail: string };
}

export interface KelLimits {
  /** `--kel-max-events`. */
  maxEvents: number;
  /** `--kel-max-bytes`: the file, or the sum of the KEL's blobs. */
  maxBytes: number;
}

export const DEFAULT_KEL_LIMITS: KelLimits = Object.freeze({ maxEvents: 10_000, maxBytes: 8 * 1024 * 1024 });

/**
 * The outcome for one prefix. `state` is the state IN FORCE: the newly accepted one, or after a
 * rejection the last accepted one (null when there never was one, or for a `pending` dip). `seq`
 * names the event to blame (the failing event, or the first delegated event not yet anchored).
 * `verifiedEvents` counts the events whose rules 2–7 were checked in this evaluation (0 when the
 * source was unchanged; only the new suffix when it grew).
 */
export interface KelEvaluation {
  prefix: string;
  status: KelStatus;
  state: KeyState | null;
  reason: KelReason | null;
  seq: number | null;
  detail: string | null;
  source: string;
  verifiedEvents: number;
}
