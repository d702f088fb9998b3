/**
 * A "malicious witness" for client tests: pure helpers that mint everything a witness signs or
 * serves — anchors (under any party key, or with a garbage party signature), cosignatures,
 * checkpoints of its own log, inclusion proofs, tlog-proofs, whole 200 bodies, duplicity proofs —
 * under ARBITRARY keys, with the project's own encoders (src/anchor, src/note, src/tlog). Nothing
 * here checks anything: the point is to hand verifiers well-formed lies. No I/O, no clock (times
 * are parameters), deterministic for a given seed byte.
 *
 * API:
 *   fakeWitness({seed?, name?, origin?})         → FakeWitness: an Ed25519 witness identity plus an
 *                                                  in-memory log (leaf hashes); `pin` / `member`
 *                                                  describe it as a client would pin it.
 *   fakeParty(seed, curve?)                      → FakeParty {curve, key, publicKey} (Ed25519 from a
 *                                                  seed byte; P-256 generated).
 *   mintAnchor(party, fields, {signature?})      → Anchor signed by `party` (fields default: seed 0x5e…,
 *                                                  index 0, head 0x01…, cumulative 0, ts 1_700_000_000,
 *                                                  set {said 'ESet', threshold 1}); `signature` replaces
 *                                                  the party signature (e.g. garbageSignature()).
 *   garbageSignature(byte?)                      → 64 bytes that are not a valid party signature.
 *   appendLeaf(w, entry) / appendAnchor(w, a)    → leaf index of an entry (cosign message) in w's log.
 *   checkpointNote(w, size?, signers?)           → w's signed checkpoint note of `size` (default: all
 *                                                  leaves); `signers` to sign under other keys/names.
 *   inclusionFor(w, leafIndex, size?)            → the SPEC §3.3 `inclusion` object (hashes, checkpoint,
 *                                                  tlog_proof) under w's key.
 *   cosign(w, anchor, timestamp?)                → the `cosignature` object: w's real Ed25519 signature
 *                                                  over the anchor's cosign message.
 *   receiptFor(w, anchor)                        → {cosignature, inclusion}: logs the anchor, proves it.
 *   anchorResponse(w, anchor, {replay?})         → a full 200 body (JSON-ready wire object).
 *   duplicityProof(party, {seedId?, index?, heads?}) → {proof, wire}: a VALID duplicity proof by `party`.
 *   upperHex(doc)                                → a deep copy with every hex string value upper-cased.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { encodeAnchor, encodeDuplicityProof } from '../../src/anchor/codec.ts';
import { makeDuplicityProof } from '../../src/anchor/duplicity.ts';
import { cosignMessage } from '../../src/anchor/messages.ts';
import type { Anchor, AnchorWire, Curve, DuplicityProof, DuplicityProofWire } from '../../src/anchor/types.ts';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes, signEd25519 } from '../../src/crypto/ed25519.ts';
import { p256PublicKeyBytes } from '../../src/crypto/p256.ts';
import { encodeBase64 } from '../../src/encoding/base64.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { formatTimestamp } from '../../src/encoding/time.ts';
import { formatCheckpoint } from '../../src/note/checkpoint.ts';
import { signNote } from '../../src/note/signed-note.ts';
import { formatTlogProof } from '../../src/note/tlog-proof.ts';
import { ed25519NoteSigner, type NoteSigner } from '../../src/note/vkey.ts';
import { hashLeaf } from '../../src/tlog/hash.ts';
import { inclusionProof, memoryHashReader, treeRoot } from '../../src/tlog/merkle.ts';
import { signAnchor, type UnsignedAnchor } from '../../src/client/party.ts';
import type { AnchorResponseBody, CosignatureWire, InclusionWire, Receipt } from '../../src/verify/receipt.ts';
import type { WitnessSetMember } from '../../src/verify/witness-set.ts';

const fill = (byte: number, n = 32): Uint8Array => new Uint8Array(n).fill(byte);

export interface FakeWitness {
  name: string;
  origin: string;
  key: KeyObject;
  publicKey: Uint8Array;
  /** Leaf hashes of its log, in order. */
  leaves: Uint8Array[];
  /** As a client pins it (verifyReceipt's `witness`). */
  pin: { name: string; publicKey: Uint8Array; logOrigin: string };
  /** As a witness-set member (makeWitnessSet input). */
  member: WitnessSetMember;
}

export function fakeWitness(opts: { seed?: number; name?: string; origin?: string } = {}): FakeWitness {
  const key = ed25519KeyFromSeed(fill(opts.seed ?? 0x66));
  const publicKey = ed25519PublicKeyBytes(key);
  const name = opts.name ?? 'evil.example';
  const origin = opts.origin ?? `${name}/anchors`;
  return {
    name,
    origin,
    key,
    publicKey,
    leaves: [],
    pin: { name, publicKey, logOrigin: origin },
    member: { name, curve: 'ed25519', publicKey, logOrigin: origin },
  };
}

export interface FakeParty {
  curve: Curve;
  key: KeyObject;
  publicKey: Uint8Array;
}

/** A party key: Ed25519 from a seed byte (deterministic), or a fresh P-256 key. */
export function fakeParty(seed: number, curve: Curve = 'ed25519'): FakeParty {
  if (curve === 'ed25519') {
    const key = ed25519KeyFromSeed(fill(seed));
    return { curve, key, publicKey: ed25519PublicKeyBytes(key) };
  }
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { curve, key: privateKey, publicKey: p256PublicKeyBytes(privateKey) };
}

export function garbageSignature(byte = 0x01): Uint8Array {
  return fill(byte, 64);
}

/** An anchor signed by `party` (or carrying `signature` instead of a real one). */
export function mintAnchor(party: FakeParty, fields: Partial<UnsignedAnchor> = {}, opts: { signature?: Uint8Array } = {}): Anchor {
  const unsigned: UnsignedAnchor = {
    seedId: fill(0x5e),
    index: 0,
    head: fill(0x01),
    cumulative: 0n,
    timestamp: 1_700_000_000,
    witnessSet: { said: 'ESet', threshold: 1 },
    ...fields,
  };
  const a = signAnchor(party.key, party.curve, unsigned);
  return opts.signature === undefined ? a : { ...a, sigParty: { ...a.sigParty, signature: opts.signature } };
}

export function appendLeaf(w: FakeWitness, entry: Uint8Array): number {
  w.leaves.push(hashLeaf(entry));
  return w.leaves.length - 1;
}

export function appendAnchor(w: FakeWitness, anchor: Anchor): number {
  return appendLeaf(w, cosignMessage(anchor));
}

/** The witness's signed checkpoint of `size` leaves (default all), signed by `signers` (default: the witness under its origin). */
export function checkpointNote(w: FakeWitness, size = w.leaves.length, signers?: readonly NoteSigner[]): string {
  const rootHash = treeRoot(size, memoryHashReader(w.leaves));
  return signNote(formatCheckpoint({ origin: w.origin, size, rootHash, extensions: [] }), signers ?? [ed25519NoteSigner(w.origin, w.key)]);
}

export function inclusionFor(w: FakeWitness, leafIndex: number, size = w.leaves.length): InclusionWire {
  const proof = inclusionProof(leafIndex, size, memoryHashReader(w.leaves));
  const checkpoint = checkpointNote(w, size);
  return {
    log_origin: w.origin,
    leaf_index: leafIndex,
    tree_size: size,
    hashes: proof.map(encodeBase64),
    checkpoint,
    tlog_proof: formatTlogProof({ index: leafIndex, proof, checkpoint }),
  };
}

export function cosign(w: FakeWitness, anchor: Anchor, timestamp = 1_700_000_000): CosignatureWire {
  return {
    witness_name: w.name,
    witness_public_key: encodeHex(w.publicKey),
    signature: encodeHex(signEd25519(w.key, cosignMessage(anchor))),
    timestamp: formatTimestamp(timestamp),
  };
}

/** Log the anchor in w's log and return a receipt that verifies under w's key (whatever the anchor is). */
export function receiptFor(w: FakeWitness, anchor: Anchor): Receipt {
  const leaf = appendAnchor(w, anchor);
  return { cosignature: cosign(w, anchor), inclusion: inclusionFor(w, leaf) };
}

/** A whole 200 body of POST /v1/anchor (`replay`) for `anchor`, minted by w. */
export function anchorResponse(
  w: FakeWitness,
  anchor: Anchor,
  opts: { replay?: boolean } = {},
): AnchorResponseBody & { anchor: AnchorWire } {
  return { anchor: encodeAnchor(anchor), ...receiptFor(w, anchor), replay: opts.replay ?? false };
}

/** A VALID duplicity proof by `party`: two heads at one index of one seed. */
export function duplicityProof(
  party: FakeParty,
  opts: { seedId?: Uint8Array; index?: number; heads?: [Uint8Array, Uint8Array]; witnessSet?: { said: string; threshold: number } } = {},
): { proof: DuplicityProof; wire: DuplicityProofWire } {
  const [h1, h2] = opts.heads ?? [fill(0xa1), fill(0xb2)];
  const fields = {
    seedId: opts.seedId ?? fill(0x5e),
    index: opts.index ?? 0,
    ...(opts.witnessSet !== undefined ? { witnessSet: opts.witnessSet } : {}),
  };
  const proof = makeDuplicityProof(mintAnchor(party, { ...fields, head: h1 }), mintAnchor(party, { ...fields, head: h2 }));
  return { proof, wire: encodeDuplicityProof(proof) };
}

/** A deep copy with every string that is all hex (≥ 2 chars) upper-cased: what a sloppy or hostile peer may send. */
export function upperHex<T>(doc: T): T {
  const walk = (x: unknown): unknown => {
    if (typeof x === 'string') return /^(?:[0-9a-f]{2})+$/.test(x) ? x.toUpperCase() : x;
    if (Array.isArray(x)) return x.map(walk);
    if (typeof x === 'object' && x !== null && typeof x !== 'bigint')
      return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, walk(v)]));
    return x;
  };
  return walk(doc) as T;
}
