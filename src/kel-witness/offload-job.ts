/**
 * The work a verification worker does for the KERI witness role (SPEC §3.6.2 "Off the event loop"),
 * as pure functions: the same checks the event loop runs inline (checks.ts), so there is one
 * verifier, wherever it runs. No I/O here: src/kel-witness/offload.ts runs these in worker threads
 * (offload-worker.ts) and rebuilds the request's Candidate from the compact result.
 *
 * A submission job is checks 2–3 (parseSubmission) and check 6 (statelessCheck) of one request; for
 * an establishment event that passed, every in-range signature is verified against its own `k`, so
 * the §3.5 verifier's later rules (a rotation's prior-`n` exposures included) are answered from the
 * result. An `ixn`'s signers are the ledger's current keys, unknown to the worker: its signatures
 * are a separate signatures job once the event loop has read them.
 */
import { decodeUtf8, parseStrictJson } from '../encoding/json.ts';
import type { IndexedSignature } from '../keri/attachments.ts';
import type { WitnessAttachments } from '../keri/cesr-attachments.ts';
import { parseEvent, rememberSaid, type KelEvent } from '../keri/event.ts';
import { verifyKelSignature, type KelSignatureVerifier } from '../keri/signatures.ts';
import type { KelKey } from '../keri/types.ts';
import { parseSubmission, statelessCheck, type Candidate } from './checks.ts';
import type { KelOutcome, KelRoute } from './outcome.ts';

/** A parsed event without what the event loop has already (B(e) is the body) or rebuilds only if asked (`canonical`, `a`). */
export type CompactEvent = Omit<KelEvent, 'bytes' | 'canonical' | 'a'>;

export type SubmissionJobResult =
  | { kind: 'outcome'; outcome: KelOutcome }
  | { kind: 'message'; value: Record<string, unknown>; att: WitnessAttachments }
  | {
      kind: 'candidate';
      event: CompactEvent;
      att: WitnessAttachments;
      /** Check 6's outcome (null: passed, the SAID is `event.d`). */
      stateless: KelOutcome | null;
      /** Per `-A` signature, whether it verified under the event's own `k` (establishment events that passed check 6), else null. */
      answers: boolean[] | null;
    };

/** Checks 2–3 and 6 of one request: what a worker does with it. */
export function submissionJob(route: KelRoute, body: Uint8Array, header: string): SubmissionJobResult {
  const parsed = parseSubmission(route, body, header);
  if (parsed.kind === 'message') return parsed;
  if (parsed.kind !== 'candidate') return { kind: 'outcome', outcome: parsed };
  const { c } = parsed;
  const seen = new Map<string, boolean>();
  c.verify = (key, message, signature) => verifyOnce(seen, key, message, signature);
  const stateless = statelessCheck(c);
  const sigs = c.att.controller ?? [];
  const answers = stateless === null && c.e.t !== 'ixn' ? verifyAll(c.e.bytes, c.e.keys, sigs, seen) : null;
  return { kind: 'candidate', event: compact(c.e), att: c.att, stateless, answers };
}

/** What a worker sends back of an event: all but B(e), `canonical` and `a` (the bulk of a large event). */
function compact(e: KelEvent): CompactEvent {
  const { t, v, d, i, s, sn, p, kt, k, keys, nt, n, bt, b, br, ba, c, di, expectedVersion } = e;
  return { t, v, d, i, s, sn, p, kt, k, keys, nt, n, bt, b, br, ba, c, di, expectedVersion };
}

/** verifyKelSignature (the one verifier: strict Ed25519, P-256), once per distinct (key, signature) of one message. */
function verifyOnce(seen: Map<string, boolean>, key: KelKey, message: Uint8Array, signature: Uint8Array): boolean {
  const id = signatureId(key, signature);
  let ok = seen.get(id);
  if (ok === undefined) {
    ok = verifyKelSignature(key, message, signature);
    seen.set(id, ok);
  }
  return ok;
}

/**
 * Each signature verified against `keys[index]` (false for an index out of range), once per
 * distinct signature (`seen`: answers already known for this message).
 */
export function verifyAll(
  message: Uint8Array,
  keys: readonly KelKey[],
  signatures: readonly IndexedSignature[],
  seen = new Map<string, boolean>(),
): boolean[] {
  return signatures.map((s) => {
    const key = keys[s.index];
    return key === undefined ? false : verifyOnce(seen, key, message, s.signature);
  });
}

export const signatureId = (key: KelKey, signature: Uint8Array): string =>
  key.curve + Buffer.from(key.raw).toString('latin1') + Buffer.from(signature).toString('latin1');

/**
 * The verifier that answers for `message` from answers computed elsewhere (answers[j] for
 * signatures[j] under keys[index]); anything else is verified on the spot by verifyKelSignature,
 * so the outcome never depends on where the answers came from.
 */
export function answeringVerifier(
  message: Uint8Array,
  keys: readonly KelKey[],
  signatures: readonly IndexedSignature[],
  answers: readonly (boolean | undefined)[],
): KelSignatureVerifier {
  const known = new Map<string, boolean>();
  signatures.forEach((s, j) => {
    const key = keys[s.index];
    const answer = answers[j];
    if (key !== undefined && answer !== undefined) known.set(signatureId(key, s.signature), answer);
  });
  return (key, m, signature) => {
    const answer = m === message ? known.get(signatureId(key, signature)) : undefined;
    return answer ?? verifyKelSignature(key, m, signature);
  };
}

/**
 * The Candidate of a worker's result: B(e) is the request body (the worker checked they are equal),
 * the SAID is remembered when check 6 passed, establishment signatures answer from the worker, and
 * `canonical` and `a` — read by nothing on the receipt path — are parsed again here only if asked.
 */
export function candidateOf(
  r: Extract<SubmissionJobResult, { kind: 'candidate' }>,
  body: Uint8Array,
  header: string,
): Candidate & { stateless: KelOutcome | null } {
  const text = decodeUtf8(body);
  let full: KelEvent | undefined;
  const reparse = (): KelEvent => (full ??= parseEvent(parseStrictJson(text)));
  const e = { ...r.event, bytes: body } as KelEvent;
  Object.defineProperty(e, 'canonical', { enumerable: true, get: () => reparse().canonical });
  Object.defineProperty(e, 'a', { enumerable: true, get: () => reparse().a });
  if (r.stateless === null) rememberSaid(e, e.d);
  const sigs = r.att.controller ?? [];
  return {
    e,
    text,
    body,
    header,
    att: r.att,
    attachment: r.att.controllerText + r.att.sourceSealText,
    stateless: r.stateless,
    ...(r.answers === null ? {} : { verify: answeringVerifier(body, e.keys, sigs, r.answers) }),
  };
}
