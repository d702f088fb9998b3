/**
 * The KERI witness role's bounds (SPEC §3.6.7) besides its per-client quotas (quota.ts): the
 * ledger's, the escrow's, group commit's and the verification workers' (offload.ts).
 */
import { DEFAULT_ESCROW_LIMITS, type EscrowLimits } from './escrow.ts';
import { DEFAULT_OFFLOAD_MAX_PENDING, OFFLOAD_MIN_BYTES } from './offload.ts';
import { DEFAULT_KEL_QUOTA_LIMITS, type KelQuotaLimits } from './quota.ts';

export interface KelWitnessLimits extends KelQuotaLimits {
  /** Per prefix: `--kel-max-events`, `--kel-max-bytes` (stored events and attachments, superseded included). */
  maxEvents: number;
  maxBytes: number;
  maxProofsPerPrefix: number;
  escrow: EscrowLimits;
  /** Events committed together at most (group-commit.ts; 1: one transaction per event). */
  maxGroup: number;
  /** Verification worker threads (offload.ts; null: as many as the node's signature pool, 0: none). */
  offloadWorkers: number | null;
  /** Jobs waiting for them at most; past it 503 `overloaded`. */
  offloadMaxPending: number;
  /** Requests of this many bytes (body and `CESR-ATTACHMENT`) or more go to them (OFFLOAD_MIN_BYTES). */
  offloadMinBytes: number;
}

export const DEFAULT_KEL_WITNESS_LIMITS: KelWitnessLimits = {
  ...DEFAULT_KEL_QUOTA_LIMITS,
  maxEvents: 10_000,
  maxBytes: 8 * 1024 * 1024,
  maxProofsPerPrefix: 16,
  escrow: DEFAULT_ESCROW_LIMITS,
  maxGroup: 32,
  offloadWorkers: null,
  offloadMaxPending: DEFAULT_OFFLOAD_MAX_PENDING,
  offloadMinBytes: OFFLOAD_MIN_BYTES,
};
