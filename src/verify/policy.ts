/**
 * A witness policy: which cosignatures make a checkpoint accepted. One rule everywhere (SPEC §4.1
 * *(rev 4)*): a policy counts WITNESSES, never keys. A witness holds one or more cosigner keys (an
 * Ed25519 cosignature/v1 key, an ML-DSA-44 subtree/v1 key, or both) and casts one vote however many
 * of its lines verify.
 *
 * A policy is a threshold over members; a member is a witness or a group, itself a threshold over
 * its members (as torchwood's and Sigsum's policies nest groups): "2 of {A, B, C}", or "all of
 * {2 of the X witnesses, 1 of the Y witnesses}". A witness appears at most once in a group; the
 * same witness may serve in several groups (one vote in each).
 *
 * Users: the node's publishing quorum (src/log-witness: a witness is one `--log-witnesses` entry),
 * and on the client side (./quorum.ts: a witness is a cosigner name) `verify cosignature --quorum`,
 * the SDKs' verifyCosignedCheckpoint and `monitor --log-quorum`. Pure: no I/O, no node: import.
 */
import { encodeHex } from '../encoding/hex.ts';
import { usage } from './errors.ts';

/** One witness: one vote, whichever of its keys signed. */
export interface PolicyWitness<K> {
  readonly kind: 'witness';
  /** The cosigner name (client side) or the configured URL (the node). */
  readonly id: string;
  readonly keys: readonly K[];
}

/** `threshold` of `members` must be satisfied. */
export interface PolicyGroup<K> {
  readonly kind: 'group';
  readonly id: string;
  /** 1 ≤ threshold ≤ members.length. */
  readonly threshold: number;
  readonly members: readonly PolicyMember<K>[];
}

export type PolicyMember<K> = PolicyWitness<K> | PolicyGroup<K>;

/** The outcome of counting: the witnesses that voted and those that did not (each once, policy order). */
export interface PolicyTally<K> {
  readonly met: boolean;
  readonly counted: readonly PolicyWitness<K>[];
  readonly missing: readonly PolicyWitness<K>[];
}

/** A witness of the policy. */
export function witness<K>(id: string, keys: readonly K[]): PolicyWitness<K> {
  return { kind: 'witness', id, keys };
}

/** A group of the policy. */
export function group<K>(id: string, threshold: number, members: readonly PolicyMember<K>[]): PolicyGroup<K> {
  return { kind: 'group', id, threshold, members };
}

export class Policy<K> {
  readonly root: PolicyGroup<K>;
  /** Every witness once, in first-seen (depth-first) order. */
  readonly witnesses: readonly PolicyWitness<K>[];

  /** Throws VerificationError `usage`: a threshold outside 1..members, an empty group, a member twice in a group. */
  constructor(root: PolicyGroup<K>) {
    const witnesses: PolicyWitness<K>[] = [];
    const seen = new Set<PolicyWitness<K>>();
    const check = (g: PolicyGroup<K>): void => {
      if (g.members.length === 0) usage(`group ${g.id} has no members`);
      if (!Number.isSafeInteger(g.threshold) || g.threshold < 1 || g.threshold > g.members.length)
        usage(`group ${g.id}: the threshold must be an integer in 1..${g.members.length}`);
      const ids = new Set<string>();
      for (const m of g.members) {
        if (ids.has(m.id)) usage(`group ${g.id} lists ${m.id} twice: it would count twice`);
        ids.add(m.id);
        if (m.kind === 'group') check(m);
        else if (!seen.has(m)) {
          seen.add(m);
          witnesses.push(m);
        }
      }
    };
    check(root);
    this.root = root;
    this.witnesses = witnesses;
  }

  /** `threshold` of the witnesses `members` (the flat policy every current caller uses). */
  static threshold<K>(threshold: number, members: readonly PolicyWitness<K>[]): Policy<K> {
    return new Policy(group('quorum', threshold, members));
  }

  /** The top-level threshold. */
  get threshold(): number {
    return this.root.threshold;
  }

  /**
   * Count the witnesses for which `voted` holds, each once (asked once per witness, however many
   * groups list it), and whether the policy is met.
   */
  tally(voted: (w: PolicyWitness<K>) => boolean): PolicyTally<K> {
    const votes = new Map<PolicyWitness<K>, boolean>();
    for (const w of this.witnesses) votes.set(w, voted(w));
    const satisfied = (m: PolicyMember<K>): boolean =>
      m.kind === 'witness' ? votes.get(m) === true : m.members.filter(satisfied).length >= m.threshold;
    return {
      met: satisfied(this.root),
      counted: this.witnesses.filter((w) => votes.get(w) === true),
      missing: this.witnesses.filter((w) => votes.get(w) !== true),
    };
  }
}

/**
 * The first public key (compared as bytes, whatever its name, key ID or type) held by two
 * witnesses, or by one witness twice; undefined when every key is held once. A cosignature/v1 line
 * does not sign the key's name, so a key under two witnesses would let one signer vote twice.
 */
export function sharedKey<K extends { readonly publicKey: Uint8Array }>(
  witnesses: readonly { readonly id: string; readonly keys: readonly K[] }[],
): { key: K; first: string; second: string } | undefined {
  const owners = new Map<string, string>();
  for (const w of witnesses)
    for (const key of w.keys) {
      const hex = encodeHex(key.publicKey);
      const first = owners.get(hex);
      if (first !== undefined) return { key, first, second: w.id };
      owners.set(hex, w.id);
    }
  return undefined;
}
