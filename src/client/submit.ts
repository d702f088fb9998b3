/**
 * Submitting an anchor to N witnesses concurrently (SPEC §3.3). Every 200 is verified fully
 * against the witness identity the client pins (from its witness set), and must be for the very
 * anchor submitted, signed by the submitting party's key; every 409 must carry a duplicity proof
 * that verifies offline AND is this party's: the anchor's seed, signed by the anchor's own party
 * key. A 409 with anything else (a proof minted under another key, for another seed) is that
 * witness misbehaving (`invalid_response`), never duplicity: one witness out of N must not be able
 * to freeze a chain. 503/429 are retried honouring Retry-After; timeouts, 408 and other 5xx
 * ("outcome unknown") are retried with the identical request, which the witness answers as a replay.
 */
import { decodeDuplicityProof, encodeDuplicityProof } from '../anchor/codec.ts';
import { samePartyKey } from '../anchor/duplicity.ts';
import { cosignMessage } from '../anchor/messages.ts';
import type { Anchor, DuplicityProof, DuplicityProofWire } from '../anchor/types.ts';
import { decodeHex, encodeHex } from '../encoding/hex.ts';
import { stringifyJson } from '../encoding/json.ts';
import { ClientError } from './errors.ts';
import { httpRequest, joinUrl, parseJsonBody, problemOf, type HttpOptions } from './http.ts';
import { anchorRequest } from './party.ts';
import { verifyDuplicityProof } from '../verify/duplicity.ts';
import { VerificationError, UsageError } from '../verify/errors.ts';
import { verifyFinalized, type FinalityOptions, type FinalityResult, type FinalizedBundle } from '../verify/finalize.ts';
import { decodeResponseAnchor, parseAnchorResponse, verifyPartyPin, verifyWitnessReceipt, type Receipt } from '../verify/receipt.ts';
import { memberPin, type WitnessSet, type WitnessSetMember } from '../verify/witness-set.ts';

export interface WitnessTarget {
  url: string;
  member: WitnessSetMember;
}

export type SubmitOutcome =
  /** Co-signed (or a replay of an earlier co-signing), verified under the pinned key. */
  | { kind: 'cosigned'; replay: boolean; receipt: Receipt; treeSize: number; leafIndex: number }
  /** 409 with a duplicity proof that verifies offline, for this seed, by this anchor's party key: the seed is frozen. */
  | { kind: 'duplicity'; proof: DuplicityProof; wire: DuplicityProofWire }
  /** A problem-details refusal (4xx, or 5xx after the retries). */
  | { kind: 'rejected'; status: number; code: string; detail: string }
  /** A response that does not verify: forged, from another witness, or for another anchor. */
  | { kind: 'invalid_response'; status: number; code: string; reason: string }
  /** No response (network, timeouts) after the retries. */
  | { kind: 'unavailable'; reason: string };

export interface SubmitResult {
  witness: string;
  url: string;
  attempts: number;
  outcome: SubmitOutcome;
}

export type SubmitEvent =
  { type: 'retry'; witness: string; attempt: number; delayMs: number; reason: string } | { type: 'result'; result: SubmitResult };

export interface SubmitOptions extends HttpOptions {
  onEvent?: (e: SubmitEvent) => void;
}

const sameMessage = (a: Anchor, b: Anchor): boolean => Buffer.compare(cosignMessage(a), cosignMessage(b)) === 0;

/** Interpret one POST /v1/anchor response for `anchor` from `member`. No I/O. */
export async function interpretAnchorResponse(
  anchor: Anchor,
  member: WitnessSetMember,
  status: number,
  text: string,
): Promise<SubmitOutcome> {
  const invalid = (code: string, reason: string): SubmitOutcome => ({ kind: 'invalid_response', status, code, reason });
  if (status === 200) {
    try {
      const body = parseAnchorResponse(parseJsonBody(text));
      const returned = decodeResponseAnchor(body.anchor);
      const v = await verifyWitnessReceipt(returned, body, memberPin(member));
      if (!sameMessage(returned, anchor)) return invalid('anchor_mismatch', 'the witness co-signed another anchor than the one submitted');
      // The anchor is the one submitted: pinned to its own party key (the submitter's), signature checked.
      await verifyPartyPin(anchor, { curve: anchor.sigParty.curve, publicKey: anchor.sigParty.publicKey });
      return {
        kind: 'cosigned',
        replay: body.replay === true,
        receipt: { cosignature: body.cosignature, inclusion: body.inclusion },
        treeSize: v.treeSize,
        leafIndex: v.leafIndex,
      };
    } catch (e) {
      if (e instanceof VerificationError || e instanceof ClientError) return invalid(e.code, e.message);
      throw e;
    }
  }
  if (status === 409) {
    let proof: DuplicityProof;
    let wire: DuplicityProofWire;
    try {
      wire = parseJsonBody(text) as DuplicityProofWire;
      proof = decodeDuplicityProof(wire);
    } catch (e) {
      return invalid('duplicity_proof_invalid', `409 body is not a duplicity proof: ${(e as Error).message}`);
    }
    try {
      await verifyDuplicityProof(wire);
    } catch (e) {
      if (!(e instanceof VerificationError)) throw e;
      return invalid('duplicity_proof_invalid', `the duplicity proof does not verify: ${e.message}`);
    }
    if (Buffer.compare(proof.seedId, anchor.seedId) !== 0)
      return invalid('duplicity_proof_foreign', `the duplicity proof is for seed ${encodeHex(proof.seedId)}, not the seed submitted`);
    if (!samePartyKey(proof.anchorA, anchor)) {
      return invalid(
        'duplicity_proof_foreign',
        `the duplicity proof is signed by ${proof.anchorA.sigParty.curve} key ${encodeHex(proof.anchorA.sigParty.publicKey)}, not by the party's key`,
      );
    }
    // Canonical (lowercase) wire form of what was verified, whatever case the witness used.
    return { kind: 'duplicity', proof, wire: encodeDuplicityProof(proof) };
  }
  const problem = problemOf(text);
  return { kind: 'rejected', status, code: problem?.code ?? `http_${status}`, detail: problem?.detail ?? text.slice(0, 200) };
}

/** Submit to every target concurrently; one result per target, in target order. */
export async function submitAnchor(
  anchor: Anchor,
  party: { agent: string; root?: string; scope?: string },
  targets: readonly WitnessTarget[],
  opts: SubmitOptions = {},
): Promise<SubmitResult[]> {
  const body = stringifyJson(anchorRequest(anchor, party));
  return Promise.all(
    targets.map(async (t): Promise<SubmitResult> => {
      let result: SubmitResult;
      try {
        const res = await httpRequest(
          joinUrl(t.url, '/v1/anchor'),
          { method: 'POST', body, contentType: 'application/json', idempotent: true },
          {
            ...opts,
            onRetry: (info) => {
              opts.onEvent?.({ type: 'retry', witness: t.member.name, attempt: info.attempt, delayMs: info.delayMs, reason: info.reason });
            },
          },
        );
        result = {
          witness: t.member.name,
          url: t.url,
          attempts: res.attempts,
          outcome: await interpretAnchorResponse(anchor, t.member, res.status, res.text),
        };
      } catch (e) {
        if (!(e instanceof ClientError)) throw e;
        result = {
          witness: t.member.name,
          url: t.url,
          attempts: (opts.retries ?? 3) + 1,
          outcome: { kind: 'unavailable', reason: e.message },
        };
      }
      opts.onEvent?.({ type: 'result', result });
      return result;
    }),
  );
}

/** Receipts of the co-signed results. */
export function receiptsOf(results: readonly SubmitResult[]): Receipt[] {
  return results.flatMap((r) => (r.outcome.kind === 'cosigned' ? [r.outcome.receipt] : []));
}

/** Finality of `anchor` from submission results (plus receipts gathered earlier). */
export async function finalityOf(
  anchor: Anchor,
  set: WitnessSet,
  results: readonly SubmitResult[],
  earlier: readonly Receipt[] = [],
  opts: FinalityOptions = {},
): Promise<{ result: FinalityResult; bundle: FinalizedBundle }> {
  const receipts = mergeReceipts([...earlier, ...receiptsOf(results)]);
  return { result: await verifyFinalized(anchor, set, receipts, opts), bundle: { anchor, witnessSet: set, receipts } };
}

/** One receipt per witness name (the later one wins). */
export function mergeReceipts(receipts: readonly Receipt[]): Receipt[] {
  const by = new Map<string, Receipt>();
  for (const r of receipts) by.set(r.cosignature.witness_name, r);
  return [...by.values()];
}

export interface HealthInfo {
  name: string;
  publicKey: Uint8Array;
  logOrigin: string;
  logSize: number;
}

/** GET /health: the identity a witness claims (untrusted: used to route, never to verify). */
export async function fetchHealth(url: string, opts: HttpOptions = {}): Promise<HealthInfo> {
  const res = await httpRequest(joinUrl(url, '/health'), {}, opts);
  if (res.status !== 200) throw new ClientError('http_failed', `${url}/health: HTTP ${res.status}`);
  const doc = parseJsonBody(res.text) as {
    witness_name?: unknown;
    keys?: { witness?: unknown };
    log?: { origin?: unknown; size?: unknown };
  };
  if (typeof doc.witness_name !== 'string' || typeof doc.keys?.witness !== 'string' || typeof doc.log?.origin !== 'string') {
    throw new ClientError('http_failed', `${url}/health: not an anchor-witness health body`);
  }
  let publicKey: Uint8Array;
  try {
    publicKey = decodeHex(doc.keys.witness, 32);
  } catch {
    throw new ClientError('http_failed', `${url}/health: keys.witness is not 32 bytes of hex`);
  }
  return { name: doc.witness_name, publicKey, logOrigin: doc.log.origin, logSize: typeof doc.log.size === 'number' ? doc.log.size : 0 };
}

/**
 * Map witness URLs to members of the set. A URL that is a member's `url` maps to it directly;
 * any other is matched by the key its /health claims (the claim only routes; every response is
 * then verified under the member's pinned key). Without URLs, the members' own `url`s are used.
 * URLs whose /health cannot be read are returned as `unreachable` (a submission can still be
 * final without them); a URL whose key is not a member is an error.
 */
export async function resolveTargets(
  set: WitnessSet,
  urls: readonly string[],
  opts: HttpOptions = {},
): Promise<{ targets: WitnessTarget[]; unreachable: { url: string; reason: string }[] }> {
  if (urls.length === 0) {
    const withUrl = set.members.filter((m) => m.url !== undefined);
    if (withUrl.length === 0) throw new UsageError('no witness URLs: give --witness URL… or put "url" in the witness set members');
    return { targets: withUrl.map((m) => ({ url: m.url!, member: m })), unreachable: [] };
  }
  const norm = (u: string): string => u.replace(/\/+$/, '');
  const unreachable: { url: string; reason: string }[] = [];
  const found = await Promise.all(
    urls.map(async (url): Promise<WitnessTarget | undefined> => {
      const byUrl = set.members.find((m) => m.url !== undefined && norm(m.url) === norm(url));
      if (byUrl !== undefined) return { url, member: byUrl };
      let h: HealthInfo;
      try {
        h = await fetchHealth(url, opts);
      } catch (e) {
        unreachable.push({ url, reason: (e as Error).message });
        return undefined;
      }
      const member = set.members.find((m) => Buffer.compare(m.publicKey, h.publicKey) === 0);
      if (member === undefined)
        throw new ClientError('unknown_witness', `${url} (${h.name}, key ${encodeHex(h.publicKey)}) is not a member of the witness set`);
      return { url, member };
    }),
  );
  const targets = found.filter((t) => t !== undefined);
  const seen = new Set<string>();
  for (const t of targets) {
    if (seen.has(t.member.name)) throw new UsageError(`two URLs reach witness ${t.member.name}`);
    seen.add(t.member.name);
  }
  return { targets, unreachable };
}
