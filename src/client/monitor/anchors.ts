/**
 * A watched seed at one witness: fetch its latest co-signed anchor, verify the witness's
 * cosignature under the pin and the party's signature under the registry, then move the
 * high-water mark and record the observation — or report rollback, forgery or an invalid
 * response. Also the duplicity proofs a witness serves (for a seed, or its whole list).
 */
import { decodeDuplicityProof, encodeAnchor, encodeDuplicityProof } from '../../anchor/codec.ts';
import type { Anchor, DuplicityProofWire } from '../../anchor/types.ts';
import { encodeHex } from '../../encoding/hex.ts';
import { ClientError } from '../errors.ts';
import { httpRequest, joinUrl, parseJsonBody, type HttpOptions } from '../http.ts';
import { stringifyJson } from '../../encoding/json.ts';
import { VerificationError } from '../../verify/errors.ts';
import { decodeResponseAnchor, parseAnchorResponse, verifyWitnessReceipt } from '../../verify/receipt.ts';
import { errorText, short, unverifiedEvidence, type AddFinding } from './findings.ts';
import type { Identified } from './identify.ts';
import { notThePartys, partyDuplicity } from './parties.ts';
import { headOf, hex32, MAX_OBSERVATIONS, sameBytes, type MonitorState, type ObservedAnchor, type WitnessRecord } from './state.ts';

/** One seed at one witness. Returns the latest index (null: none), undefined when unknown. */
export async function checkSeed(
  id: Identified,
  record: WitnessRecord,
  seed: string,
  state: MonitorState,
  http: HttpOptions,
  add: AddFinding,
  now: number,
): Promise<number | null | undefined> {
  let res;
  try {
    res = await httpRequest(joinUrl(id.url, `/v1/anchor/${seed}`), {}, http);
  } catch (e) {
    add({
      id: `unreachable ${id.url} ${seed}`,
      kind: 'unreachable',
      severity: 'warning',
      witness: id.name,
      seed,
      message: `${id.name}: GET /v1/anchor/${short(seed)}… failed: ${errorText(e)}`,
    });
    return undefined;
  }
  const prev = record.anchors[seed];
  if (res.status === 404) {
    if (prev !== undefined) {
      add({
        id: `anchor_rollback ${id.name} ${seed} ${prev.anchor.index} none`,
        kind: 'anchor_rollback',
        severity: 'alert',
        witness: id.name,
        seed,
        message: `${id.name}: seed ${short(seed)}… is gone; it co-signed index ${prev.anchor.index} before`,
        evidence: { previous: prev },
      });
    }
    return null;
  }
  let observed: ObservedAnchor;
  let duplicity: boolean;
  let anchor: Anchor;
  try {
    if (res.status !== 200) throw new ClientError('http_failed', `HTTP ${res.status}`);
    const body = parseAnchorResponse(parseJsonBody(res.text));
    anchor = decodeResponseAnchor(body.anchor);
    if (encodeHex(anchor.seedId) !== seed) throw new VerificationError('anchor_mismatch', 'the response is for another seed');
    let cosignature = body.cosignature;
    try {
      await verifyWitnessReceipt(anchor, body, id.pin);
    } catch (e) {
      // During a rotation overlap the announced next key's cosignature counts too (protocol §1.2).
      if (id.next === undefined) throw e;
      await verifyWitnessReceipt(anchor, body, { ...id.pin, publicKey: id.next }).catch(() => Promise.reject(e as Error));
      cosignature = body.cosignature_next ?? body.cosignature;
    }
    id.seen.push(body.inclusion.checkpoint);
    // Stored in canonical form (lowercase hex): what is compared later is what was signed.
    observed = { anchor: encodeAnchor(anchor), cosignature, seen: now };
    duplicity = body.duplicity === true;
  } catch (e) {
    add({
      id: `invalid ${id.name} ${seed}`,
      kind: 'invalid_response',
      severity: 'alert',
      witness: id.name,
      seed,
      message: `${id.name}: its anchor for seed ${short(seed)}… does not verify: ${errorText(e)}`,
    });
    return undefined;
  }
  // The witness signed it; did the party? A witness can co-sign anything, including an anchor at
  // index 10^12 under a garbage signature or a key of its own: that is the witness's misbehaviour,
  // never a high-water mark, an observation or evidence that the others withhold.
  const forged = await notThePartys(anchor, id.parties);
  if (forged !== undefined) {
    add({
      id: `forged_anchor ${id.name} ${seed} ${anchor.index} ${encodeHex(anchor.head)}`,
      kind: 'forged_anchor',
      severity: 'alert',
      witness: id.name,
      seed,
      message: `${id.name} co-signed index ${anchor.index} of seed ${short(seed)}… that the party never signed: ${forged}`,
      evidence: { anchor: observed.anchor, cosignature: observed.cosignature },
    });
    return undefined;
  }
  const index = observed.anchor.index;
  if (prev !== undefined && index < prev.anchor.index) {
    add({
      id: `anchor_rollback ${id.name} ${seed} ${prev.anchor.index} ${index}`,
      kind: 'anchor_rollback',
      severity: 'alert',
      witness: id.name,
      seed,
      message: `${id.name}: seed ${short(seed)}… moved back from index ${prev.anchor.index} to ${index}`,
      evidence: { previous: prev, current: observed },
    });
  } else if (prev === undefined || index > prev.anchor.index) {
    record.anchors[seed] = observed;
  }
  const entry = (state.seeds[seed] ??= { observations: [] });
  if (!entry.observations.some((o) => o.witness === id.name && o.anchor.index === index && sameBytes(headOf(o.anchor), anchor.head))) {
    entry.observations.push({ witness: id.name, ...observed });
    if (entry.observations.length > MAX_OBSERVATIONS) entry.observations.splice(0, entry.observations.length - MAX_OBSERVATIONS);
  }
  if (duplicity) await reportedDuplicity(id, seed, http, add);
  return index;
}

async function reportedDuplicity(id: Identified, seed: string, http: HttpOptions, add: AddFinding): Promise<void> {
  try {
    const res = await httpRequest(joinUrl(id.url, `/v1/duplicity/${seed}`), {}, http);
    if (res.status !== 200) throw new ClientError('http_failed', `HTTP ${res.status}`);
    const doc = parseJsonBody(res.text);
    const wire = doc as DuplicityProofWire;
    if (typeof doc !== 'object' || doc === null || !sameBytes(hex32(wire.seed_id), hex32(seed))) {
      throw new VerificationError('anchor_mismatch', 'the proof served is for another seed');
    }
    await duplicityFinding(id, wire, add);
  } catch (e) {
    add({
      id: `invalid ${id.name} duplicity ${seed}`,
      kind: 'invalid_response',
      severity: 'warning',
      witness: id.name,
      seed,
      message: `${id.name}: says seed ${short(seed)}… is frozen, but its duplicity proof is unavailable: ${errorText(e)}`,
    });
  }
}

async function duplicityFinding(id: Identified, wire: DuplicityProofWire, add: AddFinding): Promise<void> {
  const proof = decodeDuplicityProof(wire);
  const verdict = await partyDuplicity(proof, id.parties);
  const seed = encodeHex(proof.seedId);
  if (!verdict.valid) {
    add({
      id: `forged_duplicity ${id.name} ${seed} ${proof.index} ${encodeHex(proof.anchorA.head)} ${encodeHex(proof.anchorB.head)}`,
      kind: 'forged_duplicity',
      severity: 'alert',
      witness: id.name,
      seed,
      message: `${id.name}: serves a duplicity proof for ${short(seed)}… at index ${proof.index} that is not the party's: ${verdict.reason}`,
      // The party's key did not sign it: what the witness served, bounded and marked unverified.
      evidence: { duplicity_proof: unverifiedEvidence(stringifyJson(wire)) },
    });
    return;
  }
  add({
    id: `duplicity ${seed} ${proof.index} ${encodeHex(proof.anchorA.head)} ${encodeHex(proof.anchorB.head)}`,
    kind: 'duplicity',
    severity: 'alert',
    witness: id.name,
    seed,
    message: `party duplicity of ${verdict.party} on seed ${short(seed)}… at index ${proof.index} (reported by ${id.name}; the proof verifies offline under the party's registered key)`,
    evidence: { duplicity_proof: encodeDuplicityProof(proof) },
  });
}

export async function scanDuplicities(id: Identified, http: HttpOptions, add: AddFinding): Promise<void> {
  let after: string | null = null;
  for (let page = 0; page < 100; page++) {
    let doc: { items?: unknown; next?: unknown };
    try {
      const res = await httpRequest(joinUrl(id.url, `/v1/duplicity?limit=100${after === null ? '' : `&after=${after}`}`), {}, http);
      if (res.status !== 200) throw new ClientError('http_failed', `HTTP ${res.status}`);
      doc = parseJsonBody(res.text) as { items?: unknown; next?: unknown };
      if (!Array.isArray(doc.items)) throw new ClientError('malformed_json', 'items must be an array');
    } catch (e) {
      add({
        id: `unreachable ${id.url} duplicities`,
        kind: 'unreachable',
        severity: 'warning',
        witness: id.name,
        message: `${id.name}: GET /v1/duplicity failed: ${errorText(e)}`,
      });
      return;
    }
    for (const item of doc.items as DuplicityProofWire[]) {
      try {
        await duplicityFinding(id, item, add);
      } catch (e) {
        add({
          id: `invalid ${id.name} duplicity list`,
          kind: 'invalid_response',
          severity: 'alert',
          witness: id.name,
          message: `${id.name}: malformed duplicity proof in its list: ${errorText(e)}`,
        });
      }
    }
    if (typeof doc.next !== 'string') return;
    after = doc.next;
  }
}
