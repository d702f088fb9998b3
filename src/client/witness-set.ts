/**
 * Witness sets for the client SDK and CLI, synchronous: the rules, the wire format and the SAID
 * definition are the verifier SDK's (src/verify/witness-set.ts, docs/client.md); this adds the SAID
 * computed with node:crypto's synchronous SHA-256 and reports an invalid set as ClientError
 * `witness_set_invalid`.
 */
import { sha256 } from '../crypto/sha256.ts';
import { VerificationError } from '../verify/errors.ts';
import * as rules from '../verify/witness-set.ts';
import { ClientError } from './errors.ts';
import type { WitnessSet, WitnessSetMember, WitnessSetWire } from '../verify/witness-set.ts';

export { WITNESS_SET_V, MAX_WITNESS_SET_MEMBERS, memberPin, findMember } from '../verify/witness-set.ts';
export type { WitnessSet, WitnessSetMember, WitnessSetWire, WitnessSetMemberWire } from '../verify/witness-set.ts';

function asClientError<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof VerificationError && e.code === 'witness_set_invalid') throw new ClientError('witness_set_invalid', e.message);
    throw e;
  }
}

/** Validate and normalise (sort) a set built in code. */
export function makeWitnessSet(
  threshold: number,
  members: readonly (Omit<WitnessSetMember, 'curve' | 'logOrigin'> & { curve?: 'ed25519'; logOrigin?: string })[],
): WitnessSet {
  return asClientError(() => rules.makeWitnessSet(threshold, members));
}

/** The set's SAID (what anchors carry in `witness_set.said`). */
export function witnessSetSaid(set: WitnessSet): string {
  return rules.saidFromDigest(sha256(rules.witnessSetSaidInput(set)));
}

/** The wire form, `d` filled in. */
export function encodeWitnessSet(set: WitnessSet): WitnessSetWire {
  return rules.encodeWitnessSetWith(set, witnessSetSaid(set));
}

/** Parse a witness set document (strict: unknown fields refused; a present `d` must be the SAID). */
export function parseWitnessSet(doc: unknown): WitnessSet {
  const { set, d } = asClientError(() => rules.parseWitnessSetShape(doc));
  if (d !== undefined) {
    const said = witnessSetSaid(set);
    if (d !== said)
      throw new ClientError('witness_set_invalid', `invalid witness set: d is ${JSON.stringify(d)} but the set's SAID is ${said}`);
  }
  return set;
}
