/**
 * KERI key event logs (SPEC §3.5): the pure verifier the KEL registry builds on. Sources are read
 * elsewhere; this layer turns their bytes into RawKels (document.ts), verifies them (rules 1–8,
 * evaluate.ts) and builds signed KELs from key material (build.ts, for tests and the demo).
 */
export type { KelStatus, KelKey, KeyState, RawKel, KelLimits, KelEvaluation } from './types.ts';
export { DEFAULT_KEL_LIMITS } from './types.ts';
export { KEL_REASONS, KelError, type KelReason } from './errors.ts';
export { parseKelDocument, kelFromEventBlobs, parseEventBlob, defectiveKel, PREFIX_PATTERN, type KelSourceFailure } from './document.ts';
export { evaluateKels, verifyKels, stageKel, resolveStages, revocationSeals, type KelCache, type KelStage } from './evaluate.ts';
