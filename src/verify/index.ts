/**
 * `anchor-witness/verify`: the verifier SDK for relying parties — pure async functions over bytes
 * and JSON, no I/O, no node: import (it runs in browsers; SHA-256, Ed25519 and P-256 through
 * WebCrypto with this project's strict rules). Every failure is a VerificationError whose `code` is
 * a VerificationCode, or a UsageError (`usage`) when the caller's own inputs cannot be used. docs/client.md lists this API; test/verify/exports.test.ts keeps the two equal.
 */
export { UsageError, VerificationError } from './errors.ts';
export type { UsageErrorCode, VerificationCode } from './errors.ts';
export {
  anchorLogEntry,
  decodeResponseAnchor,
  parseAnchorResponse,
  parseJson,
  parseReceipt,
  verifyAnchorResponse,
  verifyAnchorCosignature,
  verifyPartyPin,
  verifyPartySignature,
  verifyReceipt,
  verifyWitnessReceipt,
} from './receipt.ts';
export type {
  AnchorResponseBody,
  CosignatureWire,
  InclusionWire,
  PinnedParty,
  PinnedPartyKey,
  PinnedWitness,
  Receipt,
  VerifiedReceipt,
} from './receipt.ts';
export { decodeHex, encodeHex } from './pins.ts';
export { verifyDuplicityProof } from './duplicity.ts';
export {
  cosignatureNoteKey,
  ed25519NoteKey,
  noteKeyFromVkey,
  subtreeNoteKey,
  verifyCheckpoint,
  verifyCosignedCheckpoint,
  verifyNote,
} from './note.ts';
export type { Checkpoint, CosignedCheckpoint, NoteKey, VerifiedNote } from './note.ts';
export { LOG_EQUIVOCATION_V, parseLogEquivocation, verifyLogEquivocation } from './log-equivocation.ts';
export type { LogEquivocationEvidence, ProvenLogEquivocation } from './log-equivocation.ts';
export { verifyTlogProof } from './tlog-proof.ts';
export type { VerifiedTlogProof } from './tlog-proof.ts';
export { hashLeaf, verifyInclusion } from './merkle.ts';
export { WITNESS_SET_V, encodeWitnessSet, makeWitnessSet, parseWitnessSet, witnessSetSaid } from './witness-set.ts';
export type { WitnessSet, WitnessSetMember, WitnessSetWire } from './witness-set.ts';
export { FINALIZED_V, encodeFinalizedBundle, parseFinalizedBundle, verifyFinalized, verifyFinalizedBundle } from './finalize.ts';
export type {
  FinalityCode,
  FinalityFailureCode,
  FinalityOptions,
  FinalityResult,
  FinalizedBundle,
  FinalizedBundleWire,
  MemberResult,
} from './finalize.ts';
export { freshness } from './freshness.ts';
export type { Freshness } from './freshness.ts';
export { cryptoBackend, mlDsa44Available, setCryptoBackend, sha256, verifyEd25519, verifyMlDsa44, verifyP256 } from './crypto.ts';
export type { CryptoBackend } from './crypto.ts';
export type { Anchor, AnchorWire, Curve, DuplicityProof, DuplicityProofWire } from '../anchor/types.ts';
