/**
 * Who is a party with a KEL source (SPEC §3.5), as one pure function: the registry file's entries,
 * every identifier's KEL evaluation (src/keri, run by the registry source) and the store's highest
 * accepted tips go in; the Registry snapshot the acceptance rules read comes out. An entry with
 * `keys` keeps them: a KEL for the same prefix is still verified (it may be a delegator) but never
 * changes that party's keys (it is *shadowed*, SPEC §3.5 rev 4); an entry without takes the keys of
 * its accepted KEL state; `"delegates": true` adds every agent whose accepted KEL begins with a
 * `dip` delegated by the entry. A party with no accepted state, or whose state is older than the
 * store's tip, is withheld with the reason check 2 answers.
 */
import type { PartyLimits, Registry, RegistryFile, RegistryKey, RegistryParty, WithheldParty } from './registry.ts';

const DID_KERI = 'did:keri:';

/** The accepted key state of one identifier, as the registry reads it (src/keri's KeyState). */
export interface KelStateView {
  s: number;
  d: string;
  keys: readonly { curve: 'ed25519' | 'p256'; raw: Uint8Array }[];
  /**
   * The current keys that may sign an anchor alone (SPEC §3.5 check 4, rev 4): all of them but
   * those whose weight in a weighted kt is "0". Absent: every key.
   */
  anchorKeys?: readonly { curve: 'ed25519' | 'p256'; raw: Uint8Array }[];
  /** The last establishment event's sn (rev 4; rows and states are ordered by it first). */
  estS?: number;
  /** The `dip`'s `di` (a bare prefix), or null for a KEL begun by `icp`. */
  delegator: string | null;
  revoked: boolean;
  abandoned: boolean;
  inception: 'icp' | 'dip';
}

/** One identifier's KEL evaluation (src/keri's KelEvaluation): the state in force is the last accepted one. */
export interface KelView {
  status: 'accepted' | 'pending' | 'invalid';
  state: KelStateView | null;
  reason: string | null;
  detail: string | null;
  /** The `di` of the KEL's first event when it is a `dip` (known even before it is accepted). */
  delegatedBy?: string | null;
}

export interface KelTipView {
  s: number;
  d: string;
  /** Absent on a row written before SPEC revision 4 (compared by s alone). */
  estS?: number;
}

/** Keyed by bare prefix. */
export type KelViews = ReadonlyMap<string, KelView>;

const prefixOf = (id: string): string => id.slice(DID_KERI.length);

/**
 * The tip row is ahead of (or differs at the same place from) the state this process derived:
 * ahead = a higher est_s, or the same est_s and a higher s (SPEC §3.5 rev 4; a recovery has a
 * lower s but a higher est_s). A row or state without est_s is compared by s alone.
 */
function behind(state: KelStateView | null, tip: KelTipView | undefined): boolean {
  if (tip === undefined) return false;
  if (state === null) return true;
  if (tip.estS === undefined || state.estS === undefined) return tip.s > state.s || (tip.s === state.s && tip.d !== state.d);
  if (tip.estS !== state.estS) return tip.estS > state.estS;
  return tip.s > state.s || (tip.s === state.s && tip.d !== state.d);
}

function unusable(prefix: string, view: KelView | undefined, tip: KelTipView | undefined): WithheldParty | undefined {
  if (view === undefined) return { reason: 'unknown', detail: `no KEL for ${prefix} in the KEL source` };
  if (behind(view.state, tip)) {
    return {
      reason: 'behind',
      detail: `the store's accepted tip of ${prefix} (s=${tip!.s}) is newer than this witness's KEL state (${
        view.state === null ? 'none' : `s=${view.state.s}`
      }): the KEL source is behind`,
    };
  }
  if (view.state !== null) return undefined;
  if (view.status === 'pending') return { reason: 'unknown', detail: `the dip of ${prefix} is not yet anchored by its delegator` };
  return { reason: 'unknown', detail: `the KEL of ${prefix} is rejected (${view.reason ?? 'invalid'}) and has no accepted state` };
}

function kelParty(id: string, state: KelStateView, limits: PartyLimits): RegistryParty {
  const keys: RegistryKey[] = (state.anchorKeys ?? state.keys).map((k) => ({ curve: k.curve, publicKey: k.raw }));
  const party: RegistryParty = { id, keys, limits, kel: { revoked: state.revoked, abandoned: state.abandoned } };
  if (state.delegator !== null) party.delegator = DID_KERI + state.delegator;
  return party;
}

/**
 * The registry entries with static `keys` for which the KEL source also holds a KEL (whatever its
 * verdict): their static keys stand and the KEL is shadowed (counted, logged once per change).
 */
export function shadowedParties(file: RegistryFile, kels: KelViews): string[] {
  return file.entries.filter((e) => e.keys !== undefined && kels.has(prefixOf(e.id))).map((e) => e.id);
}

/** The snapshot for one registry file and the KEL source's evaluations (never throws: a shadowed KEL is no error). */
export function registryFromKels(file: RegistryFile, kels: KelViews, tips: ReadonlyMap<string, KelTipView>): Registry {
  const parties = new Map<string, RegistryParty>();
  const withheld = new Map<string, WithheldParty>();
  const delegating = new Map<string, PartyLimits>();
  for (const e of file.entries) {
    const prefix = prefixOf(e.id);
    if (e.keys !== undefined) {
      const party: RegistryParty = { id: e.id, keys: e.keys, limits: e.limits };
      if (e.delegator !== undefined) party.delegator = e.delegator;
      parties.set(e.id, party);
      continue;
    }
    const view = kels.get(prefix);
    const why = unusable(prefix, view, tips.get(prefix));
    if (why !== undefined) withheld.set(e.id, why);
    else parties.set(e.id, kelParty(e.id, view!.state!, e.limits));
    // A root that delegates needs its own accepted KEL (its seals are what anchor the agents).
    if (e.delegates && view?.state != null) delegating.set(prefix, e.limits);
  }
  if (delegating.size > 0) {
    const listed = new Set(file.entries.map((e) => e.id));
    for (const [prefix, view] of kels) {
      const id = DID_KERI + prefix;
      if (listed.has(id)) continue;
      // A delegated agent's KEL begins with its dip: the state's delegator, or (no state yet) the dip's di.
      const delegator = view.state?.delegator ?? view.delegatedBy ?? null;
      const limits = delegator === null ? undefined : delegating.get(delegator);
      if (limits === undefined) continue;
      const why = unusable(prefix, view, tips.get(prefix));
      if (why !== undefined) withheld.set(id, why);
      else parties.set(id, kelParty(id, view.state!, limits));
    }
  }
  return { parties, withheld };
}
