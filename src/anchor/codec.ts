/** AnchorWire ↔ Anchor with every canonical-form check of SPEC §3.1 (errors: AnchorError `malformed_anchor`). */
import { decodeHex, encodeHex } from '../encoding/hex.ts';
import { u128FromJson } from '../encoding/decimal.ts';
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

/** Decode a wire anchor; `at` is the JSON pointer of the anchor in its document (for messages). */
export function decodeAnchor(w: AnchorWire, at = '/anchor'): Anchor {
  const curve = w.sig_party.curve as string;
  if (curve !== 'ed25519' && curve !== 'p256') throw new AnchorError('malformed_anchor', `${at}/sig_party/curve: unknown curve`);
  if (!Number.isSafeInteger(w.index) || w.index < 0)
    throw new AnchorError('malformed_anchor', `${at}/index: must be an integer 0 ≤ index ≤ 2^53−1`);
  const t = w.witness_set.threshold;
  if (!Number.isSafeInteger(t) || t < 1) throw new AnchorError('malformed_anchor', `${at}/witness_set/threshold: must be an integer ≥ 1`);
  const said = w.witness_set.said;
  if (said.length < 1 || codePoints(said) > 128)
    throw new AnchorError('malformed_anchor', `${at}/witness_set/said: must be 1..128 characters`);
  const cumulative = w.cumulative;
  return {
    seedId: field(`${at}/seed_id`, () => decodeHex(w.seed_id, 32)),
    index: w.index,
    head: field(`${at}/head`, () => decodeHex(w.head, 32)),
    cumulative: field(`${at}/cumulative`, () =>
      typeof cumulative === 'bigint' ? u128FromJson(cumulative.toString()) : u128FromJson(cumulative),
    ),
    timestamp: field(`${at}/timestamp`, () => parseTimestamp(w.timestamp)),
    witnessSet: { said, threshold: t },
    sigParty: {
      curve,
      publicKey: field(`${at}/sig_party/public_key`, () => decodeHex(w.sig_party.public_key, PUBLIC_KEY_LENGTH[curve])),
      signature: field(`${at}/sig_party/signature`, () => decodeHex(w.sig_party.signature, SIGNATURE_LENGTH)),
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

export function encodeDuplicityProof(p: DuplicityProof): DuplicityProofWire {
  return { seed_id: encodeHex(p.seedId), index: p.index, anchor_a: encodeAnchor(p.anchorA), anchor_b: encodeAnchor(p.anchorB) };
}

export function decodeDuplicityProof(w: DuplicityProofWire): DuplicityProof {
  if (!Number.isSafeInteger(w.index) || w.index < 0) throw new AnchorError('malformed_anchor', '/index: must be a non-negative integer');
  return {
    seedId: field('/seed_id', () => decodeHex(w.seed_id, 32)),
    index: w.index,
    anchorA: decodeAnchor(w.anchor_a, '/anchor_a'),
    anchorB: decodeAnchor(w.anchor_b, '/anchor_b'),
  };
}
