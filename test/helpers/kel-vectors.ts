/**
 * The KELs of research/upstream-kel.md §4 as whole logs, from the shared vector file
 * test/keri/vectors/upstream-kel.json (keripy 1.3.4 fixtures of auths-dev/auths at 53313e20, the
 * delegator's signatures derived there, and the derived continuation B3): real signed events, for
 * the registry's source and HTTP tests.
 *
 *   ROOT  [icp, ixn(seal dip), ixn2(seal drt), ixn3(revocation seal {d: AGENT})]   key: seed 00/0
 *   AGENT [dip, drt]                  dip key: seed 11/0 (DNLzxb3A…), drt key: seed 11/1 (DHV5Y_zY…)
 *   MULTI [icp(3 keys, kt 2), rot(2 keys)]   (B1 "rot_remove"): icp keys 00/0..2, rot keys 00/3, 00/4
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface VectorEvent {
  event: Record<string, unknown>;
  attachment: string;
}

interface VectorFile {
  seeds: Record<string, { seed: string; key: string }>;
  rot_remove: Record<'icp' | 'icp_att' | 'rot' | 'rot_att', string>;
  delegation: Record<'delegator_icp' | 'delegator_icp_att' | 'delegator_ixn' | 'delegator_ixn_att' | 'dip' | 'dip_att', string>;
  continuation: Record<'drt' | 'drt_att' | 'ixn2' | 'ixn2_att' | 'ixn3' | 'ixn3_att', string>;
}

const V = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'keri', 'vectors', 'upstream-kel.json'), 'utf8')) as VectorFile;
const ev = (json: string, attachment: string): VectorEvent => ({ event: JSON.parse(json) as Record<string, unknown>, attachment });

export const ROOT_EVENTS: readonly VectorEvent[] = [
  ev(V.delegation.delegator_icp, V.delegation.delegator_icp_att),
  ev(V.delegation.delegator_ixn, V.delegation.delegator_ixn_att),
  ev(V.continuation.ixn2, V.continuation.ixn2_att),
  ev(V.continuation.ixn3, V.continuation.ixn3_att),
];
export const AGENT_EVENTS: readonly VectorEvent[] = [
  ev(V.delegation.dip, V.delegation.dip_att),
  ev(V.continuation.drt, V.continuation.drt_att),
];
export const MULTI_EVENTS: readonly VectorEvent[] = [
  ev(V.rot_remove.icp, V.rot_remove.icp_att),
  ev(V.rot_remove.rot, V.rot_remove.rot_att),
];

export const ROOT_PREFIX = ROOT_EVENTS[0]!.event.i as string;
export const AGENT_PREFIX = AGENT_EVENTS[0]!.event.i as string;
export const MULTI_PREFIX = MULTI_EVENTS[0]!.event.i as string;

/** Ed25519 seeds (hex) of the keys above (keripy Salter, research §4 B). */
export const SEEDS = {
  /** ROOT's key, and MULTI's icp key 0. */
  s00_0: V.seeds['00/0']!.seed,
  /** MULTI's rot key 0. */
  s00_3: V.seeds['00/3']!.seed,
  /** AGENT's dip key. */
  s11_0: V.seeds['11/0']!.seed,
  /** AGENT's drt key. */
  s11_1: V.seeds['11/1']!.seed,
};

/** A `dir:` document of the first `n` events. */
export function kelDocument(prefix: string, events: readonly VectorEvent[], n = events.length): string {
  const some = events.slice(0, n);
  return JSON.stringify({ prefix, events: some.map((e) => e.event), attachments: some.map((e) => e.attachment) });
}
