/**
 * KERI key event logs (SPEC §3.5): the pure verifier the KEL registry builds on. Sources are read
 * elsewhere; this layer turns their bytes into RawKels (document.ts), verifies them (rules 1–8,
 * evaluate.ts) and builds signed KELs from key material (build.ts, for tests and the demo).
 *
 * For the KERI witness role (src/kel-witness, SPEC §3.6.4): `classifyConflict(accepted,
 * conflict)` takes the first-seen chain in force (events 0 … tip with their attachments) and a
 * different event Y at a held sn, and says which case it is — `invalid` (with the §3.5 reason),
 * `recovery` (with the key state after Y), `kel_recovery_unsupported`, `stale` or `duplicity`.
 * The witness checks `superseded` (its ledger) before, and its checks 10–11 after a recovery.
 * Weighted thresholds (keripy's Tholder) are `parseTholder`/`tholderMet` (tholder.ts).
 */
export type { KelStatus, KelKey, KeyState, RawKel, KelLimits, KelEvaluation } from './types.ts';
export { DEFAULT_KEL_LIMITS } from './types.ts';
export { KEL_REASONS, KelError, type KelReason } from './errors.ts';
export { parseKelDocument, kelFromEventBlobs, parseEventBlob, defectiveKel, PREFIX_PATTERN, type KelSourceFailure } from './document.ts';
export { evaluateKels, verifyKels, stageKel, resolveStages, revocationSeals, type KelCache, type KelStage } from './evaluate.ts';
export { classifyConflict, type ConflictInput, type ConflictingEvent, type ConflictClass, type ConflictKind } from './conflict.ts';
export { parseTholder, tholderMet, type Tholder } from './tholder.ts';
export type { KelThreshold } from './types.ts';
export { isAhead, isRecovery, type KelTipRef } from './history.ts';
export { chooseCopy, type ChosenCopy } from './copies.ts';
