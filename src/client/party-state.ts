/**
 * The party's local chain state, the JSON file the CLI keeps (format: docs/client.md). Pure: the
 * caller reads and writes the file (files.ts, atomically). The next anchor always builds on the
 * highest signed one (pending, else latest), so a pending anchor is superseded by a higher index,
 * never replaced by a second head at its index (which would be duplicity).
 */
import { decodeAnchor, decodeDuplicityProof, encodeAnchor, encodeDuplicityProof } from '../anchor/codec.ts';
import type { Anchor, AnchorWire, Curve, DuplicityProofWire } from '../anchor/types.ts';
import { decodeHex, encodeHex } from '../encoding/hex.ts';
import { formatTimestamp } from '../encoding/time.ts';
import { nextAnchorFields, partySeedId, type NextAnchorInput, type PartyIdentity } from './chain.ts';
import { ClientError } from './errors.ts';
import type { PartyKey } from './keys.ts';
import { signAnchor } from './party.ts';
import { mergeReceipts } from './submit.ts';
import { verifyDuplicityProof } from '../verify/duplicity.ts';
import { VerificationError } from '../verify/errors.ts';
import type { FinalityResult } from '../verify/finalize.ts';
import { parseReceipt, type Receipt } from '../verify/receipt.ts';
import { encodeWitnessSet, parseWitnessSet, witnessSetSaid, type WitnessSet, type WitnessSetWire } from '../verify/witness-set.ts';

export const PARTY_STATE_V = 'anchor-witness/party-state/v1';
const MAX_HISTORY = 10_000;

export interface PartyStateWire {
  v: typeof PARTY_STATE_V;
  key_file: string;
  curve: Curve;
  public_key: string;
  party: PartyIdentity;
  seed_id: string;
  witness_set: WitnessSetWire;
  latest: { anchor: AnchorWire; receipts: Receipt[]; final: boolean } | null;
  pending: { anchor: AnchorWire; receipts: Receipt[] } | null;
  history: { index: number; head: string; timestamp: string; final: boolean }[];
  frozen: DuplicityProofWire | null;
}

export interface PartyState {
  keyFile: string;
  curve: Curve;
  publicKey: Uint8Array;
  party: PartyIdentity;
  seedId: Uint8Array;
  witnessSet: WitnessSet;
  latest: { anchor: Anchor; receipts: Receipt[]; final: boolean } | null;
  pending: { anchor: Anchor; receipts: Receipt[] } | null;
  history: { index: number; head: string; timestamp: string; final: boolean }[];
  frozen: DuplicityProofWire | null;
}

function bad(message: string): never {
  throw new ClientError('state_invalid', `party state: ${message}`);
}

/** A fresh chain state. `seedId` given: an underived seed; else derived from root, agent and scope. */
export function initPartyState(opts: {
  keyFile: string;
  key: PartyKey;
  party: PartyIdentity;
  witnessSet: WitnessSet;
  seedId?: Uint8Array;
}): PartyState {
  const seedId = opts.seedId ?? partySeedId(opts.party);
  return {
    keyFile: opts.keyFile,
    curve: opts.key.curve,
    publicKey: opts.key.publicKey,
    party: opts.party,
    seedId,
    witnessSet: opts.witnessSet,
    latest: null,
    pending: null,
    history: [],
    frozen: null,
  };
}

/** The highest signed anchor (pending, else latest). */
export function chainTip(s: PartyState): Anchor | undefined {
  return s.pending?.anchor ?? s.latest?.anchor;
}

/** Sign the next anchor and make it pending. Returns it (and the one it superseded, if any). */
export async function signNextAnchor(
  s: PartyState,
  key: PartyKey,
  input: NextAnchorInput,
): Promise<{ anchor: Anchor; superseded?: Anchor }> {
  if (s.frozen !== null)
    throw new ClientError('state_conflict', `the seed is frozen: a witness holds a duplicity proof at index ${s.frozen.index}`);
  if (key.curve !== s.curve || Buffer.compare(key.publicKey, s.publicKey) !== 0)
    throw new ClientError('party_key_invalid', 'the key is not the one this chain state was created with');
  const said = await witnessSetSaid(s.witnessSet);
  const fields = nextAnchorFields(chainTip(s), { seedId: s.seedId, witnessSet: { said, threshold: s.witnessSet.threshold } }, input);
  const anchor = signAnchor(key.privateKey, key.curve, fields);
  const superseded = s.pending?.anchor;
  s.pending = { anchor, receipts: [] };
  s.history.push({ index: anchor.index, head: encodeHex(anchor.head), timestamp: formatTimestamp(anchor.timestamp), final: false });
  if (s.history.length > MAX_HISTORY) s.history.splice(0, s.history.length - MAX_HISTORY);
  return superseded === undefined ? { anchor } : { anchor, superseded };
}

/** What `submit` sends: the pending anchor, else the latest (to collect more receipts). */
export function submissionTarget(s: PartyState): { anchor: Anchor; receipts: Receipt[]; pending: boolean } | undefined {
  if (s.pending !== null) return { anchor: s.pending.anchor, receipts: s.pending.receipts, pending: true };
  if (s.latest !== null) return { anchor: s.latest.anchor, receipts: s.latest.receipts, pending: false };
  return undefined;
}

/** Record receipts and the finality verdict for the submitted anchor; a final pending anchor becomes latest. */
export function recordSubmission(s: PartyState, receipts: readonly Receipt[], finality: FinalityResult): void {
  const target = submissionTarget(s);
  if (target === undefined) return;
  const merged = mergeReceipts([...target.receipts, ...receipts]);
  if (target.pending) {
    if (finality.final) {
      s.latest = { anchor: target.anchor, receipts: merged, final: true };
      s.pending = null;
      const h = s.history.findLast((x) => x.index === target.anchor.index && sameHexBytes(x.head, target.anchor.head));
      if (h !== undefined) h.final = true;
    } else {
      s.pending = { anchor: target.anchor, receipts: merged };
    }
  } else {
    s.latest = { anchor: target.anchor, receipts: merged, final: s.latest?.final === true || finality.final };
  }
}

function sameHexBytes(text: string, bytes: Uint8Array): boolean {
  try {
    return Buffer.compare(decodeHex(text, bytes.length), bytes) === 0;
  } catch {
    return false;
  }
}

/**
 * Freeze the chain on a duplicity proof — only a proof of THIS party's duplicity: it verifies
 * offline, is for this state's seed and both anchors are signed by this state's key (ClientError
 * `duplicity_proof_foreign`, VerificationError `duplicity_proof_invalid` otherwise; the state is
 * unchanged). The canonical wire form is stored. The first proof wins.
 */
export async function freeze(s: PartyState, wire: DuplicityProofWire): Promise<void> {
  let proof;
  try {
    proof = decodeDuplicityProof(wire);
  } catch (e) {
    throw new VerificationError('duplicity_proof_invalid', `not a duplicity proof: ${(e as Error).message}`);
  }
  try {
    await verifyDuplicityProof(wire);
  } catch (e) {
    if (!(e instanceof VerificationError)) throw e;
    throw new VerificationError('duplicity_proof_invalid', `the duplicity proof does not verify: ${e.message}`);
  }
  if (Buffer.compare(proof.seedId, s.seedId) !== 0)
    throw new ClientError('duplicity_proof_foreign', "the duplicity proof is for another seed than this chain's");
  const signer = proof.anchorA.sigParty; // verifyDuplicityProof: anchor_b has the same key
  if (signer.curve !== s.curve || Buffer.compare(signer.publicKey, s.publicKey) !== 0) {
    throw new ClientError('duplicity_proof_foreign', "the duplicity proof is signed by another key than this chain's");
  }
  s.frozen ??= encodeDuplicityProof(proof);
}

export async function encodePartyState(s: PartyState): Promise<PartyStateWire> {
  return {
    v: PARTY_STATE_V,
    key_file: s.keyFile,
    curve: s.curve,
    public_key: encodeHex(s.publicKey),
    party: s.party,
    seed_id: encodeHex(s.seedId),
    witness_set: await encodeWitnessSet(s.witnessSet),
    latest: s.latest === null ? null : { anchor: encodeAnchor(s.latest.anchor), receipts: s.latest.receipts, final: s.latest.final },
    pending: s.pending === null ? null : { anchor: encodeAnchor(s.pending.anchor), receipts: s.pending.receipts },
    history: s.history,
    frozen: s.frozen,
  };
}

function anchorOf(w: unknown, at: string): Anchor {
  try {
    return decodeAnchor(w, at);
  } catch (e) {
    return bad((e as Error).message);
  }
}

function receiptsOf(x: unknown, at: string): Receipt[] {
  if (!Array.isArray(x)) bad(`${at} must be an array`);
  return (x as unknown[]).map((r, i) => {
    try {
      return parseReceipt(r, `${at}/${i}`);
    } catch (e) {
      return bad((e as Error).message);
    }
  });
}

export async function parsePartyState(doc: unknown): Promise<PartyState> {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) bad('not a JSON object');
  const d = doc as Partial<Record<keyof PartyStateWire, unknown>>;
  if (d.v !== PARTY_STATE_V) bad(`v must be ${PARTY_STATE_V}`);
  if (typeof d.key_file !== 'string') bad('key_file must be a string');
  if (d.curve !== 'ed25519' && d.curve !== 'p256') bad('curve must be ed25519 or p256');
  const party = d.party as Partial<PartyIdentity> | null | undefined;
  if (typeof party !== 'object' || party === null || typeof party.agent !== 'string') bad('party.agent must be a string');
  let publicKey: Uint8Array;
  let seedId: Uint8Array;
  try {
    publicKey = decodeHex(String(d.public_key), d.curve === 'ed25519' ? 32 : 33);
    seedId = decodeHex(String(d.seed_id), 32);
  } catch {
    return bad('public_key or seed_id is not hex of the right length');
  }
  const latest = d.latest as { anchor?: unknown; receipts?: unknown; final?: unknown } | null | undefined;
  const pending = d.pending as { anchor?: unknown; receipts?: unknown } | null | undefined;
  if (!Array.isArray(d.history)) bad('history must be an array');
  const state: PartyState = {
    keyFile: d.key_file,
    curve: d.curve,
    publicKey,
    party: {
      agent: party.agent,
      ...(typeof party.root === 'string' ? { root: party.root } : {}),
      ...(typeof party.scope === 'string' ? { scope: party.scope } : {}),
    },
    seedId,
    witnessSet: await parseWitnessSet(d.witness_set),
    latest:
      latest === null || latest === undefined
        ? null
        : {
            anchor: anchorOf(latest.anchor, '/latest/anchor'),
            receipts: receiptsOf(latest.receipts, '/latest/receipts'),
            final: latest.final === true,
          },
    pending:
      pending === null || pending === undefined
        ? null
        : { anchor: anchorOf(pending.anchor, '/pending/anchor'), receipts: receiptsOf(pending.receipts, '/pending/receipts') },
    history: d.history as PartyState['history'],
    frozen: null,
  };
  if (d.frozen !== null && d.frozen !== undefined) {
    try {
      decodeDuplicityProof(d.frozen);
    } catch (e) {
      bad(`frozen: ${(e as Error).message}`);
    }
    state.frozen = d.frozen as DuplicityProofWire;
  }
  return state;
}
