/**
 * The KERI witness role's checks of one event without the store (SPEC §3.6.3 checks 6 and 9): the
 * stateless rules, and the §3.5 verifier's rules 2–7 against the accepted event before it; and the
 * ledger row a checked event is stored as.
 */
import { decodeUtf8, isJsonObject, parseStrictJson } from '../encoding/json.ts';
import type { IndexedSignature } from '../keri/attachments.ts';
import { CesrError, keriTimestamp, parseWitnessAttachments, type WitnessAttachments } from '../keri/cesr-attachments.ts';
import { KelError } from '../keri/errors.ts';
import { computeSaid, parseEvent, type KelEvent } from '../keri/event.ts';
import { checkSignatures, type KelSignatureVerifier } from '../keri/signatures.ts';
import { parseTholder, tholderMet } from '../keri/tholder.ts';
import { verifyRange, type ParsedEvent, type WalkState } from '../keri/verify.ts';
import type { KelLedgerEvent } from '../store/types.ts';
import { encodeLedgerState, type LedgerState } from './key-state.ts';
import { invalid, problem, type KelOutcome, type KelRoute } from './outcome.ts';

/** A request's event, parsed (checks 2–3). */
export interface Candidate {
  e: KelEvent;
  text: string;
  body: Uint8Array;
  header: string;
  att: WitnessAttachments;
  /** The `-A` group followed by the `-G` group, as stored. */
  attachment: string;
  /** The signature checks' answers, computed off the event loop (preverify.ts); default: verified here. */
  verify?: KelSignatureVerifier;
  /** Check 6's outcome when a verification worker computed it (offload.ts); default: statelessCheck here. */
  stateless?: KelOutcome | null;
}

const EVENT_TYPES = new Set(['icp', 'rot', 'ixn', 'dip', 'drt']);

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a).equals(Buffer.from(b));
}

/**
 * Checks 2–3 of a POST: the `CESR-ATTACHMENT` header and the body. On POST `/` a message that is
 * no KEL event (`rct`, `rpy`, `qry`, …) comes back as `message` after its JSON parse.
 */
export function parseSubmission(
  route: KelRoute,
  body: Uint8Array,
  header: string | undefined,
): { kind: 'candidate'; c: Candidate } | { kind: 'message'; value: Record<string, unknown>; att: WitnessAttachments } | KelOutcome {
  let att: WitnessAttachments;
  try {
    att = parseWitnessAttachments(header ?? '', route === 'receipts');
  } catch (e) {
    if (e instanceof CesrError) return problem(400, 'malformed_cesr', e.message);
    throw e;
  }
  let value: unknown;
  let text: string;
  try {
    text = decodeUtf8(body);
    value = parseStrictJson(text);
  } catch (e) {
    return problem(400, 'malformed_body', `the body is not a JSON message: ${(e as Error).message}`);
  }
  if (route === 'root' && isJsonObject(value) && !EVENT_TYPES.has(String(value.t))) return { kind: 'message', value, att };
  let e: KelEvent;
  try {
    e = parseEvent(value);
  } catch (err) {
    if (err instanceof KelError) return problem(400, 'malformed_body', err.message);
    throw err;
  }
  if (!sameBytes(e.bytes, body)) return problem(400, 'malformed_body', "the body is not the event's canonical serialization B(e)");
  if (att.sourceSeals.length > 0 && e.t !== 'dip' && e.t !== 'drt') return problem(400, 'malformed_cesr', '-G is only for dip and drt');
  return { kind: 'candidate', c: { e, text, body, header: header ?? '', att, attachment: att.controllerText + att.sourceSealText } };
}

/** An `ixn`'s signers are known only from the ledger: check 6 bounds its signatures by this instead. */
export const MAX_IXN_SIGNATURES = 64;

/** A ledger row's event, parsed again. */
export function parsedStored(row: KelLedgerEvent): KelEvent {
  return parseEvent(JSON.parse(row.event), row.sn);
}

/**
 * A ledger row's event, parsed again only if a member other than those the row holds (`t`, `d`,
 * `i`, `sn`) is read: rule 2 of the next event reads only its `d`, and a stored event may be a
 * 64 KiB one that was checked on a verification worker (offload.ts).
 */
export function storedLazily(row: KelLedgerEvent): KelEvent {
  let full: KelEvent | undefined;
  const known: Partial<Record<PropertyKey, unknown>> = { t: row.t, d: row.said, i: row.prefix, sn: row.sn };
  return new Proxy({} as KelEvent, {
    get: (_target, member) =>
      Object.hasOwn(known, member) ? known[member] : (Reflect.get((full ??= parsedStored(row)), member) as unknown),
  });
}

/** Check 6: `v`, SAID, and for establishment events the signatures under their own `k` meet kt. */
export function statelessCheck(c: Candidate): KelOutcome | null {
  const { e } = c;
  const sigs: IndexedSignature[] = c.att.controller ?? [];
  if (e.v !== e.expectedVersion) return invalid('version_mismatch', e.sn, `v is ${e.v}, the event's size needs ${e.expectedVersion}`);
  const said = computeSaid(e);
  if (e.d !== said) return invalid('said_mismatch', e.sn, `d is ${e.d}, the SAID is ${said}`);
  if (e.t === 'ixn') return sigs.length > MAX_IXN_SIGNATURES ? invalid('malformed', e.sn, 'too many signatures') : null;
  if (sigs.length > 2 * Math.max(1, e.keys.length))
    return invalid('malformed', e.sn, `${sigs.length} signatures for ${e.keys.length} key(s)`);
  const kt = parseTholder(e.kt, e.keys.length, 'kt');
  if (typeof kt === 'string') return invalid('threshold_invalid', e.sn, kt);
  if (!kt.weighted && (kt.value < 1 || kt.value > e.keys.length)) return invalid('threshold_invalid', e.sn, 'kt is not satisfiable by k');
  const check = checkSignatures(e.keys, e.bytes, sigs, { met: (indices) => tholderMet(kt, indices), text: kt.text }, null, c.verify);
  if (!check.ok) return invalid('signature_invalid', e.sn, check.detail);
  return null;
}

/** Rules 2–7 for c's event at its sn, `prev` the accepted event at sn − 1 and `prior` the state after it. */
export function verifyAt(
  c: Candidate,
  prev: KelLedgerEvent | undefined,
  prior: LedgerState | null,
): { ok: true; state: WalkState } | { ok: false; outcome: KelOutcome } {
  const { e } = c;
  const events: ParsedEvent[] = [];
  if (prev !== undefined) events[e.sn - 1] = { event: storedLazily(prev), attachment: { signatures: [], sourceSeals: [] } };
  events[e.sn] = { event: e, attachment: { signatures: c.att.controller ?? [], sourceSeals: c.att.sourceSeals } };
  if (prev === undefined && e.sn !== 0) return { ok: false, outcome: invalid('sequence_invalid', e.sn, 'no accepted event precedes it') };
  const r = verifyRange(e.i, events, e.sn, prior, c.verify);
  if (!r.ok) return { ok: false, outcome: invalid(r.reason, r.seq, r.detail) };
  return { ok: true, state: r.states[r.states.length - 1]! };
}

/** The ledger row c's event is stored as, first seen at `nowMs`, unwitnessed. */
export function ledgerRow(c: Candidate, state: LedgerState, nowMs: number): Omit<KelLedgerEvent, 'ordinal'> {
  return {
    prefix: c.e.i,
    sn: c.e.sn,
    said: c.e.d,
    t: c.e.t,
    event: c.text,
    attachment: c.attachment,
    state: 'accepted',
    witnessed: false,
    firstSeen: keriTimestamp(nowMs),
    receipt: null,
    keyState: encodeLedgerState(state),
    leafIndex: null,
  };
}
