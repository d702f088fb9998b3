/**
 * Offline verification of what an anchor witness returns (SPEC §3.3, §4), against a witness key
 * the client pins — never the key the response carries:
 *  - the cosignature is the pinned key's Ed25519 signature over the cosign message of the anchor;
 *  - the checkpoint is a signed note by the pinned key under the log origin (type 0x01);
 *  - the audit path proves the cosign message's leaf at `leaf_index` under that checkpoint;
 *  - the tlog-proof text carries the same index, path and byte-identical checkpoint.
 *
 * Failures throw VerificationError with a stable code: malformed_response, wrong_witness,
 * cosignature_invalid, checkpoint_wrong_origin, checkpoint_invalid, inclusion_invalid,
 * tlog_proof_invalid.
 */
import { decodeAnchor } from '../anchor/codec.ts';
import { cosignMessage } from '../anchor/messages.ts';
import type { Anchor, AnchorWire } from '../anchor/types.ts';
import { verifyEd25519 } from '../crypto/ed25519.ts';
import { decodeBase64 } from '../encoding/base64.ts';
import { decodeHex, encodeHex } from '../encoding/hex.ts';
import { parseRfc3339 } from '../encoding/time.ts';
import { ProtocolError } from '../errors.ts';
import { parseCheckpoint, type Checkpoint } from '../note/checkpoint.ts';
import { parseNote, verifyNote } from '../note/signed-note.ts';
import { parseTlogProof } from '../note/tlog-proof.ts';
import { ed25519NoteVerifier } from '../note/vkey.ts';
import { hashLeaf } from '../tlog/hash.ts';
import { verifyInclusion } from '../tlog/merkle.ts';

export class VerificationError extends ProtocolError {}

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
  /** Ed25519 public key of the witness. */
  publicKey: Uint8Array;
  /** The witness's log origin (key name of its checkpoints). */
  logOrigin: string;
  name?: string;
}

export interface VerifiedReceipt {
  anchor: Anchor;
  treeSize: number;
  leafIndex: number;
  /** The checkpoint the anchor is included in (verified under the pinned key). */
  checkpoint: Checkpoint;
}

function fail(code: string, message: string): never {
  throw new VerificationError(code, message);
}

function wrap<T>(code: string, what: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof VerificationError) throw e;
    return fail(code, `${what}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const isString = (x: unknown): x is string => typeof x === 'string';
const isIndex = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;

/** Check the JSON shape of a cosignature object; throws malformed_response. */
export function parseCosignature(c: unknown, at = '/cosignature'): CosignatureWire {
  if (!isObject(c) || !isString(c.witness_name) || !isString(c.witness_public_key) || !isString(c.signature) || !isString(c.timestamp)) {
    fail('malformed_response', `${at} must have string witness_name, witness_public_key, signature and timestamp`);
  }
  return { witness_name: c.witness_name, witness_public_key: c.witness_public_key, signature: c.signature, timestamp: c.timestamp };
}

/** Check the JSON shape of a receipt (cosignature + inclusion); throws malformed_response. */
export function parseReceipt(doc: unknown, at = ''): Receipt {
  if (!isObject(doc)) fail('malformed_response', `${at || 'body'} is not a JSON object`);
  const cosignature = parseCosignature(doc.cosignature, `${at}/cosignature`);
  const i = doc.inclusion;
  if (
    !isObject(i) ||
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
  if (!isObject(d.anchor) || !isObject(d.anchor.witness_set) || !isObject(d.anchor.sig_party)) fail('malformed_response', '/anchor is not an anchor object');
  const body: AnchorResponseBody = { anchor: d.anchor as unknown as AnchorWire, ...receipt };
  if (typeof d.replay === 'boolean') body.replay = d.replay;
  if (typeof d.duplicity === 'boolean') body.duplicity = d.duplicity;
  return body;
}

/** Decode an anchor from a response; malformed_response on failure. */
export function decodeResponseAnchor(w: AnchorWire): Anchor {
  return wrap('malformed_response', 'anchor', () => decodeAnchor(w));
}

/** Verify a witness's receipt for `anchor` under the pinned witness identity. */
export function verifyReceipt(anchor: Anchor, receipt: Receipt, witness: PinnedWitness): VerifiedReceipt {
  const cos = receipt.cosignature;
  if (witness.name !== undefined && cos.witness_name !== witness.name) fail('wrong_witness', `cosignature is by ${cos.witness_name}, expected ${witness.name}`);
  if (cos.witness_public_key.toLowerCase() !== encodeHex(witness.publicKey)) fail('wrong_witness', 'the response names another witness key than the pinned one');
  wrap('malformed_response', 'cosignature.timestamp', () => parseRfc3339(cos.timestamp));
  const signature = wrap('malformed_response', 'cosignature.signature', () => decodeHex(cos.signature, 64));
  const message = cosignMessage(anchor);
  if (!verifyEd25519(witness.publicKey, message, signature)) fail('cosignature_invalid', 'the cosignature does not verify under the pinned witness key');

  const inc = receipt.inclusion;
  if (inc.log_origin !== witness.logOrigin) fail('checkpoint_wrong_origin', `the inclusion is in log ${JSON.stringify(inc.log_origin)}, expected ${JSON.stringify(witness.logOrigin)}`);
  const unverified = wrap('checkpoint_invalid', 'checkpoint', () => parseCheckpoint(parseNote(inc.checkpoint).text));
  if (unverified.origin !== witness.logOrigin) {
    fail('checkpoint_wrong_origin', `the checkpoint is from log ${JSON.stringify(unverified.origin)}, expected ${JSON.stringify(witness.logOrigin)}`);
  }
  const verifier = ed25519NoteVerifier(witness.logOrigin, witness.publicKey);
  const note = wrap('checkpoint_invalid', 'checkpoint', () => verifyNote(inc.checkpoint, [verifier]));
  const tree = parseCheckpoint(note.text);
  if (tree.size !== inc.tree_size) fail('inclusion_invalid', 'tree_size differs from the checkpoint size');
  const hashes = wrap('malformed_response', 'inclusion.hashes', () => inc.hashes.map((h) => decodeBase64(h, 32)));
  if (!verifyInclusion(hashLeaf(message), inc.leaf_index, tree.size, hashes, tree.rootHash)) {
    fail('inclusion_invalid', 'the inclusion proof does not lead to the checkpoint root');
  }
  const tp = wrap('tlog_proof_invalid', 'tlog_proof', () => parseTlogProof(inc.tlog_proof));
  if (tp.checkpoint !== inc.checkpoint) fail('tlog_proof_invalid', 'tlog_proof checkpoint is not byte-identical to checkpoint');
  if (tp.extra !== undefined) fail('tlog_proof_invalid', 'tlog_proof carries an extra line');
  if (tp.index !== inc.leaf_index || tp.proof.length !== hashes.length || tp.proof.some((h, i) => Buffer.compare(h, hashes[i]!) !== 0)) {
    fail('tlog_proof_invalid', 'tlog_proof index or path differs from the inclusion fields');
  }
  return { anchor, treeSize: tree.size, leafIndex: inc.leaf_index, checkpoint: tree };
}

/** Verify a 200 body of POST /v1/anchor or GET /v1/anchor/{seed}; returns the decoded anchor. */
export function verifyAnchorResponse(body: AnchorResponseBody, witness: PinnedWitness): VerifiedReceipt {
  const parsed = parseAnchorResponse(body);
  return verifyReceipt(decodeResponseAnchor(parsed.anchor), parsed, witness);
}
