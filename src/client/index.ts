/**
 * The client SDK (docs/client.md): parties, submission, verification, finalization, monitoring.
 * Imports protocol code only (never src/witness, src/server or src/store).
 *
 * Every verifier is the verifier core's (src/verify, async; the same functions as
 * `anchor-witness/verify`): this SDK has no signature-verifying code of its own. Importing it
 * installs the node:crypto backend of the core's crypto port (./node-crypto.ts; same verdicts as
 * WebCrypto, faster in Node).
 */
import { useNodeCrypto } from './node-crypto.ts';

useNodeCrypto();

export { ClientError } from './errors.ts';
export { makeDuplicityProof } from '../anchor/duplicity.ts';
export { decodeAnchor, encodeAnchor, decodeDuplicityProof, encodeDuplicityProof } from '../anchor/codec.ts';
export type { Anchor, AnchorWire, Curve, DuplicityProof, DuplicityProofWire } from '../anchor/types.ts';
// The verifier core (src/verify).
export { UsageError, VerificationError } from '../verify/errors.ts';
export type { UsageErrorCode, VerificationCode } from '../verify/errors.ts';
export {
  anchorLogEntry,
  decodeResponseAnchor,
  parseAnchorResponse,
  parseCosignature,
  parseReceipt,
  verifyAnchorCosignature,
  verifyAnchorResponse,
  verifyPartyPin,
  verifyReceipt,
  verifyWitnessReceipt,
} from '../verify/receipt.ts';
export type {
  AnchorResponseBody,
  CosignatureWire,
  InclusionWire,
  PinnedParty,
  PinnedPartyKey,
  PinnedWitness,
  Receipt,
  VerifiedReceipt,
} from '../verify/receipt.ts';
export { verifyDuplicityProof } from '../verify/duplicity.ts';
export {
  WITNESS_SET_V,
  MAX_WITNESS_SET_MEMBERS,
  makeWitnessSet,
  parseWitnessSet,
  encodeWitnessSet,
  witnessSetSaid,
  memberPin,
  findMember,
} from '../verify/witness-set.ts';
export type { WitnessSet, WitnessSetMember, WitnessSetWire, WitnessSetMemberWire } from '../verify/witness-set.ts';
export { FINALIZED_V, verifyFinalized, verifyFinalizedBundle, encodeFinalizedBundle, parseFinalizedBundle } from '../verify/finalize.ts';
export type {
  FinalizedBundle,
  FinalizedBundleWire,
  FinalityCode,
  FinalityFailureCode,
  FinalityOptions,
  FinalityResult,
  MemberResult,
} from '../verify/finalize.ts';
export {
  cosignatureNoteKey,
  ed25519NoteKey,
  noteKeyFromVkey,
  subtreeNoteKey,
  verifyCheckpoint,
  verifyCosignedCheckpoint,
  verifyNote,
} from '../verify/note.ts';
export type { Checkpoint, CosignedCheckpoint, NoteKey, VerifiedNote } from '../verify/note.ts';
export { verifyTlogProof } from '../verify/tlog-proof.ts';
export type { VerifiedTlogProof } from '../verify/tlog-proof.ts';
export { setCryptoBackend, cryptoBackend } from '../verify/crypto.ts';
export type { CryptoBackend } from '../verify/crypto.ts';
export { nodeCryptoBackend } from './node-crypto.ts';
export { signAnchor, anchorRequest } from './party.ts';
export type { UnsignedAnchor, AnchorRequest } from './party.ts';
export { generatePartyKey, partyKeyFromPem, partyKeyToPem } from './keys.ts';
export type { PartyKey } from './keys.ts';
export { nextAnchorFields, partyClaim, partySeedId } from './chain.ts';
export type { NextAnchorInput, PartyIdentity } from './chain.ts';
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
