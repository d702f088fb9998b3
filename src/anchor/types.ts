/**
 * The anchor (SPEC §3.1) in its two forms: `AnchorWire` as it travels in JSON, and `Anchor`
 * decoded (bytes, bigint, unix seconds). Signed bytes are always built from the decoded form.
 */
export type Curve = 'ed25519' | 'p256';

export interface AnchorWire {
  seed_id: string;
  index: number;
  head: string;
  /** JSON integer on input and output (bigint when serialized), or a canonical decimal string on input. */
  cumulative: number | string | bigint;
  timestamp: string;
  witness_set: { said: string; threshold: number };
  sig_party: { curve: Curve; public_key: string; signature: string };
}

export interface PartySignature {
  curve: Curve;
  publicKey: Uint8Array;
  signature: Uint8Array;
}

export interface Anchor {
  seedId: Uint8Array;
  index: number;
  head: Uint8Array;
  cumulative: bigint;
  /** Unix seconds (whole). */
  timestamp: number;
  witnessSet: { said: string; threshold: number };
  sigParty: PartySignature;
}

/** `party` of POST /v1/anchor, ids normalised to `did:keri:<prefix>`. */
export interface PartyClaim {
  agent: string;
  root?: string;
  scope?: string;
}

export interface DuplicityProof {
  seedId: Uint8Array;
  index: number;
  /** The anchor whose head sorts lower (bytewise). */
  anchorA: Anchor;
  anchorB: Anchor;
}

export interface DuplicityProofWire {
  seed_id: string;
  index: number;
  anchor_a: AnchorWire;
  anchor_b: AnchorWire;
}

export const PUBLIC_KEY_LENGTH: Record<Curve, number> = { ed25519: 32, p256: 33 };
export const SIGNATURE_LENGTH = 64;
