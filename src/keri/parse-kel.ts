/**
 * Rule 1 for one source's copy of a KEL (SPEC §3.5 "Verification" 1, "Bounded work per event"):
 * its shape (its defect, no events, one attachment per event), each event and attachment parsed,
 * at most MAX_SIGNATURES_PER_KEY signatures per signing key; and, for incremental verification,
 * how many leading events are those of an earlier verified copy (same JSON value, same attachment).
 */
import { parseAttachment } from './attachments.ts';
import { KelError } from './errors.ts';
import { parseEvent } from './event.ts';
import { MAX_SIGNATURES_PER_KEY } from './signatures.ts';
import type { RawKel } from './types.ts';
import type { ParsedEvent, RuleFailure, WalkState } from './verify.ts';

/** Events that passed rules 1–7, with the state after each. */
export interface VerifiedKel {
  events: readonly ParsedEvent[];
  /** Each event's JSON value as the source gave it (to recognise unchanged events cheaply). */
  values: readonly unknown[];
  attachments: readonly string[];
  states: readonly WalkState[];
}

export function failure(reason: RuleFailure['reason'], seq: number | null, detail: string): { ok: false } & RuleFailure {
  return { ok: false, reason, seq, detail };
}

/** Rule 1 for the source as a whole: its defect, no events, one attachment per event. */
export function checkShape(raw: RawKel): RuleFailure | null {
  if (raw.defect !== undefined) return { reason: raw.defect.reason, seq: null, detail: raw.defect.detail };
  if (raw.events.length === 0) return { reason: 'malformed', seq: null, detail: 'no events' };
  if (raw.attachments.length !== raw.events.length) {
    return {
      reason: 'malformed',
      seq: null,
      detail: `${raw.events.length} events but ${raw.attachments.length} attachments (one per event)`,
    };
  }
  return null;
}

/**
 * Rule 1 for events[from…]: each event and attachment parses, and carries at most
 * MAX_SIGNATURES_PER_KEY × its signing keys signatures (its own `k`, or for an ixn the last
 * establishment event's; `keyCount` is that of the state before `from`, null without one).
 */
export function parseEvents(
  raw: RawKel,
  from: number,
  keyCount: number | null,
): { ok: true; events: ParsedEvent[] } | ({ ok: false } & RuleFailure) {
  const events: ParsedEvent[] = [];
  for (let j = from; j < raw.events.length; j++) {
    try {
      const event = parseEvent(raw.events[j], j);
      const attachment = parseAttachment(raw.attachments[j]!, j);
      if (attachment.sourceSeals.length > 0 && event.t !== 'dip' && event.t !== 'drt') {
        return failure('malformed', j, `attachment: a -G source seal on a ${event.t}`);
      }
      if (event.t !== 'ixn') keyCount = event.keys.length;
      // An ixn with no establishment event before it is refused by rule 3 (not_inception).
      if (keyCount !== null && attachment.signatures.length > MAX_SIGNATURES_PER_KEY * keyCount) {
        return failure(
          'malformed',
          j,
          `attachment: ${attachment.signatures.length} signatures for ${keyCount} signing key(s) (at most ${MAX_SIGNATURES_PER_KEY} per key)`,
        );
      }
      events.push({ event, attachment });
    } catch (err) {
      if (err instanceof KelError) return failure(err.code, err.seq, err.message);
      throw err;
    }
  }
  return { ok: true, events };
}

/** Deep equality of two parsed JSON values (member order aside: parseEvent does not depend on it). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  let members = 0;
  for (const k in ao) {
    members++;
    if (!Object.hasOwn(bo, k) || !sameJson(ao[k], bo[k])) return false;
  }
  for (const k in bo) if (Object.hasOwn(bo, k)) members--;
  return members === 0;
}

/**
 * How many leading events of the source are those of `kel`: the same JSON value and the same
 * attachment, so an unchanged event is neither parsed nor verified again.
 */
export function commonPrefix(kel: VerifiedKel | null, raw: RawKel): number {
  if (kel === null) return 0;
  const n = Math.min(kel.values.length, raw.events.length);
  let j = 0;
  while (j < n && raw.attachments[j] === kel.attachments[j] && sameJson(raw.events[j], kel.values[j])) j++;
  return j;
}
