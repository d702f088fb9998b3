/**
 * Anchor receipts for the verifier SDK (SPEC §3.3, §4), async (WebCrypto): what a witness returns
 * for an anchor — its cosignature and the anchor's inclusion in its log — checked against the
 * witness key the caller pins (never the key the response carries), and the anchor's party
 * signature against the party key the caller pins (a witness can co-sign and log an anchor it
 * minted under a key of its own). The one implementation: `anchor-witness/client` re-exports it. Codes: malformed_response, wrong_witness, cosignature_invalid,
 * checkpoint_wrong_origin, checkpoint_invalid, inclusion_invalid, tlog_proof_invalid,
 * party_unpinned, party_key_mismatch, party_signature_invalid.
 */
import { decodeAnchor } from '../anchor/codec.ts';
import { cosignMessage, partyMessage } from '../anchor/messages.ts';
import type { Anchor, AnchorWire, Curve } from '../anchor/types.ts';
import { decodeBase64 } from '../encoding/base64.ts';
import { decodeHex, encodeHex } from '../encoding/hex.ts';
import { equalBytes } from '../encoding/portable.ts';
import { isJsonObject, parseStrictJson } from '../encoding/json.ts';
import { parseRfc3339 } from '../encoding/time.ts';
import { parseCheckpoint } from '../note/checkpoint.ts';
import { parseNote } from '../note/signed-note.ts';
import { parseTlogProof } from '../note/tlog-proof.ts';
import { verifyEd25519, verifyP256 } from './crypto.ts';
import { fail, wrap, usage } from './errors.ts';
import { hashLeaf, inclusionFailure } from './merkle.ts';
import { ed25519NoteKey, verifyCheckpoint, type Checkpoint } from './note.ts';
import { partyKeyPin, pinnedBytes, witnessPin } from './pins.ts';

export interface CosignatureWire {
  witness_name: string;
  witness_public_key: string;
  signature: string;
  timestamp: string;
}

export interface InclusionWire {
  log_origin: string;
  leaf_index: number;
  tree_size: number;
  hashes: string[];
  checkpoint: string;
  tlog_proof: string;
}

/** What a witness returns for one anchor: its cosignature and the anchor's inclusion in its log. */
export interface Receipt {
  cosignature: CosignatureWire;
  /** During a witness-key rotation overlap (SPEC §1.2): the next key's cosignature, same message. */
  cosignature_next?: CosignatureWire;
  inclusion: InclusionWire;
}

export interface AnchorResponseBody extends Receipt {
  anchor: AnchorWire;
  /** POST /v1/anchor only. */
  replay?: boolean;
  /** GET /v1/anchor/{seed} only. */
  duplicity?: boolean;
}

export interface PinnedWitness {
  /** Ed25519 public key of the witness: 32 bytes, or its 64-character hex (as `/health` shows it). Anything else is `usage`. */
  publicKey: Uint8Array | string;
  /** The witness's log origin (key name of its checkpoints). */
  logOrigin: string;
  name?: string;
}

/** A party key the verifier trusts (SPEC §3.2 registry entry `keys[]` item; the anchor's `sig_party` curve and key). */
export interface PinnedPartyKey {
  curve: Curve;
  /** Ed25519: 32 bytes; P-256: 33-byte compressed SEC1; or their hex (as the registry has it). Anything else is `usage`. */
  publicKey: Uint8Array | string;
}

/** The party an anchor must be signed by: one key, or every current key of its registry entry (any one may sign). */
export type PinnedParty = PinnedPartyKey | readonly PinnedPartyKey[];

/** The pins with their keys as bytes (what the checks use after `usage` validation). */
export type PinnedWitnessBytes = Omit<PinnedWitness, 'publicKey'> & { publicKey: Uint8Array };

export interface VerifiedReceipt {
  anchor: Anchor;
  treeSize: number;
  leafIndex: number;
  /** The checkpoint the anchor is included in (verified under the pinned key). */
  checkpoint: Checkpoint;
}

const isString = (x: unknown): x is string => typeof x === 'string';
const isIndex = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;

/**
 * Parse a witness's JSON text (a 200 body, a 409 duplicity proof, a bundle) strictly and without
 * loss: `cumulative` is a u128, beyond what `JSON.parse` / `Response.json()` keep exactly, so one
 * above 2^53 − 1 comes back as its decimal string (which the anchor codec accepts). Duplicate keys and other non-JSON are `malformed_response`.
 */
export function parseJson(text: string): unknown {
  return wrap('malformed_response', 'JSON', () => parseStrictJson(text, { bigIntegerKeys: new Set(['cumulative']), maxDepth: 64 }));
}

/** Check the JSON shape of a cosignature object; throws malformed_response. */
export function parseCosignature(c: unknown, at = '/cosignature'): CosignatureWire {
  if (
    !isJsonObject(c) ||
    !isString(c.witness_name) ||
    !isString(c.witness_public_key) ||
    !isString(c.signature) ||
    !isString(c.timestamp)
  ) {
    fail('malformed_response', `${at} must have string witness_name, witness_public_key, signature and timestamp`);
  }
  return { witness_name: c.witness_name, witness_public_key: c.witness_public_key, signature: c.signature, timestamp: c.timestamp };
}

/** Check the JSON shape of a receipt (cosignature + inclusion); throws malformed_response. */
export function parseReceipt(doc: unknown, at = ''): Receipt {
  if (!isJsonObject(doc)) fail('malformed_response', `${at || 'body'} is not a JSON object`);
  const cosignature = parseCosignature(doc.cosignature, `${at}/cosignature`);
  const next = doc.cosignature_next === undefined ? undefined : parseCosignature(doc.cosignature_next, `${at}/cosignature_next`);
  const i = doc.inclusion;
  if (
    !isJsonObject(i) ||
    !isString(i.log_origin) ||
    !isIndex(i.leaf_index) ||
    !isIndex(i.tree_size) ||
    !Array.isArray(i.hashes) ||
    !i.hashes.every(isString) ||
    !isString(i.checkpoint) ||
    !isString(i.tlog_proof)
  ) {
    fail('malformed_response', `${at}/inclusion must have log_origin, leaf_index, tree_size, hashes, checkpoint and tlog_proof`);
  }
  return {
    cosignature,
    ...(next === undefined ? {} : { cosignature_next: next }),
    inclusion: {
      log_origin: i.log_origin,
      leaf_index: i.leaf_index,
      tree_size: i.tree_size,
      hashes: i.hashes,
      checkpoint: i.checkpoint,
      tlog_proof: i.tlog_proof,
    },
  };
}

/** Check the JSON shape of a 200 body of POST /v1/anchor or GET /v1/anchor/{seed}. */
export function parseAnchorResponse(doc: unknown): AnchorResponseBody {
  const receipt = parseReceipt(doc);
  const d = doc as Record<string, unknown>;
  if (!isJsonObject(d.anchor) || !isJsonObject(d.anchor.witness_set) || !isJsonObject(d.anchor.sig_party))
    fail('malformed_response', '/anchor is not an anchor object');
  const body: AnchorResponseBody = { anchor: d.anchor as unknown as AnchorWire, ...receipt };
  if (typeof d.replay === 'boolean') body.replay = d.replay;
  if (typeof d.duplicity === 'boolean') body.duplicity = d.duplicity;
  return body;
}

/** Decode an anchor from a response; malformed_response on failure. */
export function decodeResponseAnchor(w: AnchorWire): Anchor {
  return wrap('malformed_response', 'anchor', () => decodeAnchor(w));
}

/** True when the hex text decodes to exactly `bytes` (either case; a non-hex text never matches). */
function hexIsBytes(text: string, bytes: Uint8Array): boolean {
  try {
    return equalBytes(decodeHex(text, bytes.length), bytes);
  } catch {
    return false;
  }
}

/** The anchor's own party signature (curve-tagged Ed25519 or P-256 low S over the party message). Says nothing about whose key it is. */
export async function verifyPartySignature(anchor: Anchor): Promise<boolean> {
  const { curve, publicKey, signature } = anchor.sigParty;
  const message = partyMessage(anchor);
  return curve === 'ed25519' ? verifyEd25519(publicKey, message, signature) : verifyP256(publicKey, message, signature);
}

/**
 * The pinned keys as bytes, or party_unpinned (undefined, null, an empty list); a key that is not
 * bytes (or hex) of its curve's length, or an unknown curve, is `usage`.
 */
export function pinnedKeys(party: PinnedParty | undefined): readonly { curve: Curve; publicKey: Uint8Array }[] {
  const given = party as PinnedParty | undefined | null;
  if (given === undefined || given === null)
    fail(
      'party_unpinned',
      "no party key pinned: give the party's key (its registry entry) to verify an anchor; verifyWitnessReceipt checks only the witness part",
    );
  if (typeof given !== 'object') usage('the pinned party must be a key { curve, publicKey } or a list of them');
  const keys: readonly PinnedPartyKey[] = Array.isArray(given) ? given : [given as PinnedPartyKey];
  if (keys.length === 0) fail('party_unpinned', 'no party key pinned (empty list)');
  return keys.map(partyKeyPin);
}

/** party_key_mismatch unless the anchor's `sig_party` curve and key are one of the pinned keys. */
export function checkPartyKeyPinned(anchor: Anchor, party: PinnedParty): void {
  const sp = anchor.sigParty;
  if (!pinnedKeys(party).some((k) => k.curve === sp.curve && equalBytes(k.publicKey, sp.publicKey))) {
    fail('party_key_mismatch', `the anchor is signed by ${sp.curve} key ${encodeHex(sp.publicKey)}, not by the pinned party key`);
  }
}

/** The anchor is signed by the pinned party: its key is pinned (party_key_mismatch) and its signature verifies (party_signature_invalid). */
export async function verifyPartyPin(anchor: Anchor, party: PinnedParty): Promise<void> {
  checkPartyKeyPinned(anchor, party);
  if (!(await verifyPartySignature(anchor)))
    fail('party_signature_invalid', 'the party signature of the anchor does not verify under the pinned party key');
}

/**
 * The WITNESS's part of a receipt for `anchor` under the pinned witness: its cosignature,
 * checkpoint, inclusion proof and tlog-proof. It does NOT establish who signed the anchor (use
 * verifyReceipt for that).
 */
export async function verifyWitnessReceipt(anchor: Anchor, receipt: Receipt, pinned: PinnedWitness): Promise<VerifiedReceipt> {
  const witness = witnessPin(pinned);
  // SPEC §1.2: during a rotation overlap a witness pinned to the next key counts by cosignature_next
  // (once: one receipt is one witness's vote, whichever of its two keys is pinned).
  const next = receipt.cosignature_next;
  const cos = next !== undefined && hexIsBytes(next.witness_public_key, witness.publicKey) ? next : receipt.cosignature;
  const signature = cosignatureSignature(cos, witness);
  const message = cosignMessage(anchor);
  if (!(await verifyEd25519(witness.publicKey, message, signature)))
    fail('cosignature_invalid', 'the cosignature does not verify under the pinned witness key');

  const inc = receipt.inclusion;
  checkInclusionOrigin(inc, witness);
  const key = await ed25519NoteKey(witness.logOrigin, witness.publicKey).catch(() =>
    fail('wrong_witness', 'the pinned witness key or log origin is not a usable note key'),
  );
  const { checkpoint: tree } = await verifyCheckpoint(inc.checkpoint, [key], witness.logOrigin);
  if (tree.size !== inc.tree_size) fail('inclusion_invalid', 'tree_size differs from the checkpoint size');
  const hashes = wrap('malformed_response', 'inclusion.hashes', () => inc.hashes.map((h) => decodeBase64(h, 32)));
  const why = await inclusionFailure(await hashLeaf(message), inc.leaf_index, tree.size, hashes, tree.rootHash);
  if (why !== null) fail('inclusion_invalid', `the inclusion proof does not lead to the checkpoint root (${why})`);
  checkTlogProofMatches(inc, hashes);
  return { anchor, treeSize: tree.size, leafIndex: inc.leaf_index, checkpoint: tree };
}

/** The cosignature names the pinned witness and key, has a valid timestamp; its signature bytes. */
function cosignatureSignature(cos: CosignatureWire, witness: { publicKey: Uint8Array; name?: string | undefined }): Uint8Array {
  if (witness.name !== undefined && cos.witness_name !== witness.name)
    fail('wrong_witness', `cosignature is by ${cos.witness_name}, expected ${witness.name}`);
  if (!hexIsBytes(cos.witness_public_key, witness.publicKey))
    fail('wrong_witness', 'the response names another witness key than the pinned one');
  wrap('malformed_response', 'cosignature.timestamp', () => parseRfc3339(cos.timestamp));
  return wrap('malformed_response', 'cosignature.signature', () => decodeHex(cos.signature, 64));
}

/** The inclusion and its (not yet verified) checkpoint are in the pinned witness's log. */
function checkInclusionOrigin(inc: Receipt['inclusion'], witness: PinnedWitness): void {
  if (inc.log_origin !== witness.logOrigin)
    fail(
      'checkpoint_wrong_origin',
      `the inclusion is in log ${JSON.stringify(inc.log_origin)}, expected ${JSON.stringify(witness.logOrigin)}`,
    );
  const unverified = wrap('checkpoint_invalid', 'checkpoint', () => parseCheckpoint(parseNote(inc.checkpoint).text));
  if (unverified.origin !== witness.logOrigin)
    fail(
      'checkpoint_wrong_origin',
      `the checkpoint is from log ${JSON.stringify(unverified.origin)}, expected ${JSON.stringify(witness.logOrigin)}`,
    );
}

/** The tlog-proof repeats the inclusion fields exactly (same checkpoint bytes, index and path). */
function checkTlogProofMatches(inc: Receipt['inclusion'], hashes: readonly Uint8Array[]): void {
  const tp = wrap('tlog_proof_invalid', 'tlog_proof', () => parseTlogProof(inc.tlog_proof));
  if (tp.checkpoint !== inc.checkpoint) fail('tlog_proof_invalid', 'tlog_proof checkpoint is not byte-identical to checkpoint');
  if (tp.extra !== undefined) fail('tlog_proof_invalid', 'tlog_proof carries an extra line');
  if (tp.index !== inc.leaf_index || tp.proof.length !== hashes.length || tp.proof.some((h, i) => !equalBytes(h, hashes[i]!))) {
    fail('tlog_proof_invalid', 'tlog_proof index or path differs from the inclusion fields');
  }
}

/** A witness's receipt for `anchor`: co-signed and logged by the pinned witness AND signed by the pinned party. */
export async function verifyReceipt(
  anchor: Anchor,
  receipt: Receipt,
  witness: PinnedWitness,
  party: PinnedParty,
): Promise<VerifiedReceipt> {
  witnessPin(witness);
  pinnedKeys(party);
  const v = await verifyWitnessReceipt(anchor, receipt, witness);
  await verifyPartyPin(anchor, party);
  return v;
}

/** A 200 body of POST /v1/anchor or GET /v1/anchor/{seed} (parsed JSON), the witness and the party pinned. */
export async function verifyAnchorResponse(body: unknown, witness: PinnedWitness, party: PinnedParty): Promise<VerifiedReceipt> {
  // The caller's pins first: a wrong pin is `usage`, whatever the response.
  witnessPin(witness);
  pinnedKeys(party);
  const parsed = parseAnchorResponse(body);
  return verifyReceipt(decodeResponseAnchor(parsed.anchor), parsed, witness, party);
}

/** The witness-log entry of an anchor (SPEC §4: its cosign message), for verifyTlogProof `{ data }`. */
export function anchorLogEntry(anchor: Anchor): Uint8Array {
  return cosignMessage(anchor);
}

/**
 * The witness cosignature alone (no inclusion): it names the pinned witness and key
 * (`wrong_witness`), is well formed (`malformed_response`) and verifies over the anchor's cosign
 * message under the pinned key (`cosignature_invalid`) — the first step of verifyWitnessReceipt.
 */
export async function verifyAnchorCosignature(
  anchor: Anchor,
  cosignature: CosignatureWire,
  pinned: Pick<PinnedWitness, 'publicKey' | 'name'>,
): Promise<void> {
  // No inclusion is checked, so no log origin is needed: the key (and the name, if given) only.
  if (typeof pinned !== 'object' || (pinned as unknown) === null) usage('the pinned witness must be an object { publicKey }');
  if (pinned.name !== undefined && typeof pinned.name !== 'string') usage('the pinned witness name must be a string');
  const witness = { name: pinned.name, publicKey: pinnedBytes(pinned.publicKey, 32, 'the pinned witness publicKey (Ed25519)') };
  const signature = cosignatureSignature(cosignature, witness);
  if (!(await verifyEd25519(witness.publicKey, cosignMessage(anchor), signature)))
    fail('cosignature_invalid', 'the cosignature does not verify under the pinned witness key');
}
