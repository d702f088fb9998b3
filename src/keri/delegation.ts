/**
 * Delegation across KELs (SPEC §3.5 rule 8). A delegated event (the `dip`, each `drt`) is
 * anchored when an event of the delegator's ACCEPTED KEL carries the seal {i, s, d} of that
 * event; a `-G` couple on the delegated event, when present, must name such an anchoring event
 * by (s, d). The delegator revokes the agent with the digest seal {d: <agent prefix>} (upstream
 * `auths id agent revoke`).
 */
import type { RuleFailure, ParsedEvent } from './verify.ts';
import { hexText } from './event.ts';

/** The seals of an accepted KEL that matter to its delegates. */
export interface SealIndex {
  /** `i|s|d` of each {i,s,d} seal → the anchoring events (s, d). */
  anchors: Map<string, { s: number; d: string }[]>;
  /** `d` of each {d} seal. */
  digests: Set<string>;
}

export const MAX_DELEGATION_DEPTH = 4;

const anchorKey = (i: string, s: string, d: string): string => `${i}|${s}|${d}`;

/** Index the seals of events[0…count). */
export function indexSeals(events: readonly ParsedEvent[], count: number): SealIndex {
  const index: SealIndex = { anchors: new Map(), digests: new Set() };
  for (let j = 0; j < count; j++) {
    const e = events[j]!.event;
    for (const seal of e.a) {
      const names = Object.keys(seal);
      if (names.length === 3 && seal.i !== undefined && seal.s !== undefined && seal.d !== undefined) {
        const key = anchorKey(seal.i, seal.s, seal.d);
        const list = index.anchors.get(key);
        const at = { s: j, d: e.d };
        if (list === undefined) index.anchors.set(key, [at]);
        else list.push(at);
      } else if (names.length === 1 && seal.d !== undefined) {
        index.digests.add(seal.d);
      }
    }
  }
  return index;
}

/**
 * How many of the agent's events are accepted given the delegator's seals: the events before its
 * first delegated event (dip, drt) that no seal anchors. A `-G` couple that names no anchoring
 * event is `source_seal_mismatch`.
 */
export function anchoredCount(
  prefix: string,
  events: readonly ParsedEvent[],
  delegator: SealIndex,
): { count: number; failure: RuleFailure | null } {
  for (let j = 0; j < events.length; j++) {
    const { event: e, attachment } = events[j]!;
    if (e.t !== 'dip' && e.t !== 'drt') continue;
    const anchors = delegator.anchors.get(anchorKey(prefix, hexText(j), e.d));
    if (anchors === undefined) return { count: j, failure: null };
    for (const couple of attachment.sourceSeals) {
      if (!anchors.some((a) => BigInt(a.s) === couple.s && a.d === couple.d)) {
        return {
          count: j,
          failure: {
            reason: 'source_seal_mismatch',
            seq: j,
            detail: `-G names (${couple.s}, ${couple.d}); the delegator anchors this ${e.t} at ${anchors.map((a) => `(${a.s}, ${a.d})`).join(', ')}`,
          },
        };
      }
    }
  }
  return { count: events.length, failure: null };
}
