/**
 * KEL duplicity proofs (SPEC §3.6.4): two valid events a witness saw at one (prefix, sn), with the
 * history needed to check them offline, and the own-log entries of witnessed events and stored
 * proofs (§3.6.6). Pure: building and checking never touch the store or the network.
 */
import { canonicalize } from '../encoding/jcs.ts';
import { isJsonObject } from '../encoding/json.ts';
import { parseAttachment } from '../keri/attachments.ts';
import { KelError } from '../keri/errors.ts';
import { parseEvent } from '../keri/event.ts';
import { verifyRange, type ParsedEvent } from '../keri/verify.ts';

export const PROOF_TYPE = 'anchor-witness/kel-duplicity/v1';
export const EVENT_ENTRY_TYPE = 'auths-anchor/kel-event/v1';
export const DUPLICITY_ENTRY_TYPE = 'auths-anchor/kel-duplicity-entry/v1';
/** The history is left out (null) above this many bytes of JCS. */
export const MAX_PROOF_HISTORY_BYTES = 1024 * 1024;

export interface ProofEvent {
  event: Record<string, unknown>;
  attachment: string;
}

export interface KelDuplicityProof {
  v: typeof PROOF_TYPE;
  witness: string;
  prefix: string;
  sn: number;
  a: ProofEvent;
  b: ProofEvent;
  first_seen: 'a' | 'b';
  kel: ProofEvent[] | null;
}

const utf8 = new TextEncoder();

/** Two conflicting events (`first` accepted earlier), `a` the byte-wise lower SAID. */
export function buildProof(
  witness: string,
  prefix: string,
  sn: number,
  first: ProofEvent,
  second: ProofEvent,
  history: ProofEvent[],
): KelDuplicityProof {
  const firstLower = String(first.event.d) < String(second.event.d);
  const kel = utf8.encode(canonicalize(history)).length > MAX_PROOF_HISTORY_BYTES ? null : history;
  return {
    v: PROOF_TYPE,
    witness,
    prefix,
    sn,
    a: firstLower ? first : second,
    b: firstLower ? second : first,
    first_seen: firstLower ? 'a' : 'b',
    kel,
  };
}

/** The own-log entry of a witnessed event (JCS). */
export function eventEntry(
  witness: string,
  e: { i: string; s: string; t: string; d: string },
  nowMs: number,
  superseded?: string[],
): Uint8Array {
  const entry: Record<string, unknown> = {
    v: EVENT_ENTRY_TYPE,
    witness,
    i: e.i,
    s: e.s,
    t: e.t,
    d: e.d,
    dt: `${new Date(nowMs).toISOString().slice(0, 19)}Z`,
  };
  if (superseded !== undefined && superseded.length > 0) entry.superseded = superseded;
  return utf8.encode(canonicalize(entry));
}

/** The own-log entry of a stored proof (JCS). */
export function duplicityEntry(proof: KelDuplicityProof): Uint8Array {
  return utf8.encode(
    canonicalize({
      v: DUPLICITY_ENTRY_TYPE,
      witness: proof.witness,
      i: proof.prefix,
      s: proof.sn.toString(16),
      a: proof.a.event.d,
      b: proof.b.event.d,
      first_seen: proof.first_seen,
    }),
  );
}

function parsed(p: ProofEvent, seq: number): ParsedEvent {
  return { event: parseEvent(p.event, seq), attachment: parseAttachment(p.attachment, seq) };
}

function proofEvent(v: unknown, where: string): ProofEvent {
  if (!isJsonObject(v) || !isJsonObject(v.event) || typeof v.attachment !== 'string')
    throw new Error(`${where} must be {"event": {...}, "attachment": "..."}`);
  return { event: v.event, attachment: v.attachment };
}

/**
 * Check a proof offline (SPEC §3.6.4 "Offline verification"). `kel` replaces the proof's history
 * (its first sn events are used). Returns null when the proof holds, else why not.
 */
export function checkProof(value: unknown, kel?: ProofEvent[]): string | null {
  try {
    if (!isJsonObject(value) || value.v !== PROOF_TYPE) return `not a ${PROOF_TYPE} document`;
    const prefix = value.prefix;
    const sn = value.sn;
    if (typeof prefix !== 'string' || typeof sn !== 'number' || !Number.isSafeInteger(sn) || sn < 0) return 'prefix and sn are required';
    const a = proofEvent(value.a, 'a');
    const b = proofEvent(value.b, 'b');
    let history: ProofEvent[];
    if (kel !== undefined) {
      if (kel.length < sn) return `--kel has ${kel.length} events, the proof needs ${sn}`;
      history = kel.slice(0, sn);
    } else {
      if (!Array.isArray(value.kel)) return 'the proof carries no history (kel is null): give it with --kel';
      history = value.kel.map((x, j) => proofEvent(x, `kel[${j}]`));
    }
    // 1. the history: exactly sn events passing rules 1–7
    if (history.length !== sn) return `the history has ${history.length} events, the proof is at sn ${sn}`;
    const past = history.map((h, j) => parsed(h, j));
    if (sn > 0) {
      const r = verifyRange(prefix, past, 0, null);
      if (!r.ok) return `the history fails: ${r.reason} at ${String(r.seq)}: ${r.detail}`;
    }
    // 2. and 3. each event alone after the history
    const pa = parsed(a, sn);
    const pb = parsed(b, sn);
    for (const [name, p] of [
      ['a', pa],
      ['b', pb],
    ] as const) {
      if (p.event.i !== prefix) return `${name}.i is not the prefix`;
      if (p.event.s !== sn.toString(16)) return `${name}.s is not hex(sn)`;
      const r = verifyRange(prefix, [...past, p], 0, null);
      if (!r.ok) return `${name} fails: ${r.reason}: ${r.detail}`;
    }
    if (!(pa.event.d < pb.event.d)) return 'a.d must be byte-wise lower than b.d';
    // 4. same type, not a delegated establishment event
    if (pa.event.t !== pb.event.t) return `a is ${pa.event.t}, b is ${pb.event.t}: not duplicity`;
    if (pa.event.t === 'drt' || pa.event.t === 'dip') return `${pa.event.t} conflicts are not duplicity proofs`;
    return null;
  } catch (e) {
    if (e instanceof KelError) return `${e.code}: ${e.message}`;
    return (e as Error).message;
  }
}
