/**
 * The key state a verified KEL ends in (SPEC §3.5 "The accepted state is …"), as the registry and
 * the KERI witness role read it: the verifier's walk state (src/keri/verify.ts) without what only
 * the next event's checks need.
 */
import { nonZeroWeights, tholderValue } from './tholder.ts';
import type { KeyState } from './types.ts';
import type { WalkState } from './verify.ts';

export function keyStateOf(prefix: string, w: WalkState, revoked: boolean): KeyState {
  const anchoring = nonZeroWeights(w.kt);
  return {
    prefix,
    s: w.s,
    d: w.d,
    estS: w.estS,
    estD: w.estD,
    keys: w.keys,
    anchorKeys: w.keys.filter((_, j) => anchoring[j] !== false),
    kt: tholderValue(w.kt),
    n: w.n,
    nt: tholderValue(w.nt),
    delegator: w.delegator,
    revoked,
    abandoned: w.abandoned,
    transferable: w.transferable,
    inception: w.inception,
  };
}
