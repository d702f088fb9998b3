/** AnchorWire ↔ Anchor with every canonical-form check of SPEC §3.1 (errors: AnchorError `malformed_anchor`). */
import { decodeHex, encodeHex } from '../encoding/hex.ts';
import { u128FromJson } from '../encoding/decimal.ts';
import { jsonNumber } from '../encoding/json.ts';
import { parseTimestamp, formatTimestamp } from '../encoding/time.ts';
import { ProtocolError } from '../errors.ts';
import { AnchorError } from './errors.ts';
import { PUBLIC_KEY_LENGTH, SIGNATURE_LENGTH } from './types.ts';
import type { Anchor, AnchorWire, DuplicityProof, DuplicityProofWire } from './types.ts';

/** Length in code points (what JSON Schema's maxLength counts). */
const codePoints = (s: string): number => s.length - (s.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0);

function field<T>(pointer: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ProtocolError) throw new AnchorError('malformed_anchor', `${pointer}: ${e.message}`);
    throw e;
  }
}

function malformed(pointer: string, message: string): never {
  throw new AnchorError('malformed_anchor', `${pointer}: ${message}`);
}

/** The JSON object at `pointer` (not null, not an array). */
function objectAt(value: unknown, pointer: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) malformed(pointer || '/', 'must be a JSON object');
  return value as Record<string, unknown>;
}

function stringAt(value: unknown, pointer: string): string {
  if (typeof value !== 'string') malformed(pointer, 'must be a string');
  return value;
}

/** A JSON integer 0 ≤ n ≤ 2^53−1 (or, with `min` 1, ≥ 1). */
function integerAt(value: unknown, pointer: string, min = 0): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)
    malformed(pointer, `must be an integer ${min} ≤ n ≤ 2^53−1`);
  return value;
}

/**
 * Decode a wire anchor (parsed JSON: an AnchorWire, checked member by member, so structurally
 * wrong JSON — null, a number or an array where an object or a string belongs, a missing member —
 * is `malformed_anchor` like any other defect); `at` is the JSON pointer of the anchor in its
 * document (for messages). `cumulative` is a decimal string, a JSON integer or a bigint (a lossless
 * parse).
 */
export function decodeAnchor(wire: unknown, at = '/anchor'): Anchor {
  const w = objectAt(wire, at);
  const sigParty = objectAt(w.sig_party, `${at}/sig_party`);
  const curve = stringAt(sigParty.curve, `${at}/sig_party/curve`);
  if (curve !== 'ed25519' && curve !== 'p256') malformed(`${at}/sig_party/curve`, 'unknown curve');
  const index = integerAt(w.index, `${at}/index`);
  const witnessSet = objectAt(w.witness_set, `${at}/witness_set`);
  const t = integerAt(witnessSet.threshold, `${at}/witness_set/threshold`, 1);
  const said = stringAt(witnessSet.said, `${at}/witness_set/said`);
  if (said.length < 1 || codePoints(said) > 128) malformed(`${at}/witness_set/said`, 'must be 1..128 characters');
  const cumulative = w.cumulative;
  if (typeof cumulative !== 'string' && typeof cumulative !== 'number' && typeof cumulative !== 'bigint')
    malformed(`${at}/cumulative`, 'must be a decimal string or an integer');
  const seedId = stringAt(w.seed_id, `${at}/seed_id`);
  const head = stringAt(w.head, `${at}/head`);
  const timestamp = stringAt(w.timestamp, `${at}/timestamp`);
  const publicKey = stringAt(sigParty.public_key, `${at}/sig_party/public_key`);
  const signature = stringAt(sigParty.signature, `${at}/sig_party/signature`);
  return {
    seedId: field(`${at}/seed_id`, () => decodeHex(seedId, 32)),
    index,
    head: field(`${at}/head`, () => decodeHex(head, 32)),
    cumulative: field(`${at}/cumulative`, () =>
      typeof cumulative === 'bigint' ? u128FromJson(cumulative.toString()) : u128FromJson(cumulative),
    ),
    timestamp: field(`${at}/timestamp`, () => parseTimestamp(timestamp)),
    witnessSet: { said, threshold: t },
    sigParty: {
      curve,
      publicKey: field(`${at}/sig_party/public_key`, () => decodeHex(publicKey, PUBLIC_KEY_LENGTH[curve])),
      signature: field(`${at}/sig_party/signature`, () => decodeHex(signature, SIGNATURE_LENGTH)),
    },
  };
}

/** Encode for output: lowercase hex, `cumulative` as a bigint (lossless integer literal). */
export function encodeAnchor(a: Anchor): AnchorWire {
  return {
    seed_id: encodeHex(a.seedId),
    index: a.index,
    head: encodeHex(a.head),
    cumulative: a.cumulative,
    timestamp: formatTimestamp(a.timestamp),
    witness_set: { said: a.witnessSet.said, threshold: a.witnessSet.threshold },
    sig_party: { curve: a.sigParty.curve, public_key: encodeHex(a.sigParty.publicKey), signature: encodeHex(a.sigParty.signature) },
  };
}

/**
 * The JSON text of encodeAnchor(a), byte for byte what stringifyJson writes for it (members in
 * encodeAnchor's order, `cumulative` as an integer literal), written directly: the store's anchor
 * rows and the anchor role's 200 body carry this text (test/anchoring/reply-json.test.ts compares).
 */
export function anchorJson(a: Anchor): string {
  return (
    `{"seed_id":"${encodeHex(a.seedId)}","index":${jsonNumber(a.index)},"head":"${encodeHex(a.head)}",` +
    `"cumulative":${a.cumulative.toString()},"timestamp":"${formatTimestamp(a.timestamp)}",` +
    `"witness_set":{"said":${JSON.stringify(a.witnessSet.said)},"threshold":${jsonNumber(a.witnessSet.threshold)}},` +
    `"sig_party":{"curve":${JSON.stringify(a.sigParty.curve)},"public_key":"${encodeHex(a.sigParty.publicKey)}","signature":"${encodeHex(a.sigParty.signature)}"}}`
  );
}

export function encodeDuplicityProof(p: DuplicityProof): DuplicityProofWire {
  return { seed_id: encodeHex(p.seedId), index: p.index, anchor_a: encodeAnchor(p.anchorA), anchor_b: encodeAnchor(p.anchorB) };
}

/** Decode a duplicity proof (parsed JSON: a DuplicityProofWire, checked as decodeAnchor does; `malformed_anchor`). */
export function decodeDuplicityProof(wire: unknown): DuplicityProof {
  const w = objectAt(wire, '');
  const index = integerAt(w.index, '/index');
  const seedId = stringAt(w.seed_id, '/seed_id');
  return {
    seedId: field('/seed_id', () => decodeHex(seedId, 32)),
    index,
    anchorA: decodeAnchor(w.anchor_a, '/anchor_a'),
    anchorB: decodeAnchor(w.anchor_b, '/anchor_b'),
  };
}
