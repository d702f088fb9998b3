/**
 * The client SDK (docs/client.md): parties, submission, verification, finalization, monitoring.
 * Imports protocol code only (never src/witness, src/server or src/store).
 */
export { ClientError } from './errors.ts';
// Duplicity proofs and anchors: the protocol's own codecs and offline verifier, for SDK users.
export { verifyDuplicityProof, makeDuplicityProof } from '../anchor/duplicity.ts';
export type { DuplicityVerdict } from '../anchor/duplicity.ts';
export { decodeAnchor, encodeAnchor, decodeDuplicityProof, encodeDuplicityProof } from '../anchor/codec.ts';
export type { Anchor, AnchorWire, Curve, DuplicityProof, DuplicityProofWire } from '../anchor/types.ts';
export {
  VerificationError,
  verifyAnchorResponse,
  verifyReceipt,
  verifyWitnessReceipt,
  verifyPartyPin,
  parseAnchorResponse,
  parseReceipt,
  parseCosignature,
  decodeResponseAnchor,
} from './verify-anchor.ts';
export type {
  AnchorResponseBody,
  CosignatureWire,
  InclusionWire,
  PinnedParty,
  PinnedPartyKey,
  PinnedWitness,
  Receipt,
  VerifiedReceipt,
} from './verify-anchor.ts';
export { signAnchor, anchorRequest } from './party.ts';
export type { UnsignedAnchor, AnchorRequest } from './party.ts';
export { generatePartyKey, partyKeyFromPem, partyKeyToPem } from './keys.ts';
export type { PartyKey } from './keys.ts';
export { nextAnchorFields, partyClaim, partySeedId } from './chain.ts';
export type { NextAnchorInput, PartyIdentity } from './chain.ts';
export {
  WITNESS_SET_V,
  MAX_WITNESS_SET_MEMBERS,
  makeWitnessSet,
  parseWitnessSet,
  encodeWitnessSet,
  witnessSetSaid,
  memberPin,
  findMember,
} from './witness-set.ts';
export type { WitnessSet, WitnessSetMember, WitnessSetWire, WitnessSetMemberWire } from './witness-set.ts';
export { FINALIZED_V, verifyFinalized, verifyFinalizedBundle, encodeFinalizedBundle, parseFinalizedBundle } from './finalize.ts';
export type { FinalizedBundle, FinalizedBundleWire, FinalityCode, FinalityOptions, FinalityResult, MemberResult } from './finalize.ts';
export {
  httpRequest,
  parseJsonBody,
  problemOf,
  retryAfterMs,
  joinUrl,
  HttpFailure,
  ResponseTooLarge,
  RESPONSE_CAPS,
  tileCap,
} from './http.ts';
export type { HttpOptions, HttpResponse } from './http.ts';
export { submitAnchor, interpretAnchorResponse, finalityOf, receiptsOf, mergeReceipts, fetchHealth, resolveTargets } from './submit.ts';
export type { SubmitEvent, SubmitOptions, SubmitOutcome, SubmitResult, WitnessTarget, HealthInfo } from './submit.ts';
export { checkConsistencyFromTiles, verifyInconsistency } from './consistency.ts';
export type { ConsistencyCheck, InconsistencyEvidence, TileFetcher } from './consistency.ts';
export { verifyCheckpointNote, verifyCosignedCheckpoint, verifyTlogProofFile, verifyAnchorCosignature } from './offline.ts';
export type { CosignedCheckpoint } from './offline.ts';
export { MONITOR_STATE_V, emptyMonitorState, parseMonitorState, monitorPoll } from './monitor.ts';
export type {
  Finding,
  FindingKind,
  MonitorConfig,
  MonitorState,
  PollReport,
  WitnessStatus,
  WitnessRecord,
  Observation,
  ObservedAnchor,
} from './monitor.ts';
export {
  PARTY_STATE_V,
  initPartyState,
  chainTip,
  signNextAnchor,
  submissionTarget,
  recordSubmission,
  freeze,
  encodePartyState,
  parsePartyState,
} from './party-state.ts';
export type { PartyState, PartyStateWire } from './party-state.ts';
export { writeFileAtomic, writeJsonAtomic, readJsonFile } from './files.ts';
