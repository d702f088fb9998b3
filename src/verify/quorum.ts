/**
 * The one quorum rule of SPEC §4.1 *(rev 4)*: a quorum counts WITNESSES, never keys. A witness
 * holds one or more cosigner keys (an Ed25519 cosignature/v1 key, an ML-DSA-44 subtree/v1 key, or
 * both); it casts one vote however many of its lines verify. Every caller counts through here: the
 * SDKs' verifyCosignedCheckpoint (async, src/verify/note.ts; sync, src/client/offline.ts), `verify
 * cosignature`, `monitor --log-quorum` and the node's publishing quorum (src/log-witness).
 *
 * Who a witness is differs by side, the counting does not:
 *  - a client (cosignerQuorum) knows cosigner vkeys: a witness is a cosigner NAME, and its keys are
 *    the vkeys carrying that name;
 *  - the node knows its `--log-witnesses` entries: a witness is one entry (its URL).
 * Either way one public key belongs to one witness (sharedKey): a cosignature/v1 line does not
 * sign the key's name, so a key under two names would let one signer vote twice.
 */
import type { NoteVerifier, VerifiedNote } from '../note/signed-note.ts';
import { encodeHex } from '../encoding/hex.ts';
import { fail } from './errors.ts';

/** One witness: one vote, whichever of its keys signed. */
export interface QuorumWitness<K> {
  /** The cosigner name (client side) or the configured URL (the node). */
  readonly id: string;
  readonly keys: readonly K[];
}

/** How many of `witnesses` must have cosigned. */
export interface QuorumPolicy<K> {
  readonly witnesses: readonly QuorumWitness<K>[];
  /** 1 ≤ quorum ≤ witnesses.length. */
  readonly quorum: number;
}

/** The outcome of counting: the witnesses that voted (policy order) and those that did not. */
export interface QuorumTally<K> {
  readonly met: boolean;
  readonly counted: readonly QuorumWitness<K>[];
  readonly missing: readonly QuorumWitness<K>[];
}

/**
 * The first public key (compared as bytes, whatever its name, key ID or type) held by two
 * witnesses, or by one witness twice; undefined when every key is held once.
 */
export function sharedKey<K extends { readonly publicKey: Uint8Array }>(
  witnesses: readonly QuorumWitness<K>[],
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

/** Count the witnesses for which `voted` holds: each at most once. */
export function tallyQuorum<K>(policy: QuorumPolicy<K>, voted: (w: QuorumWitness<K>) => boolean): QuorumTally<K> {
  const counted: QuorumWitness<K>[] = [];
  const missing: QuorumWitness<K>[] = [];
  for (const w of policy.witnesses) (voted(w) ? counted : missing).push(w);
  return { met: counted.length >= policy.quorum, counted, missing };
}

/**
 * The client-side policy over cosigner keys (`--vkey`, `--log-cosigner`, the SDKs' `cosigners`):
 * keys grouped by name into witnesses (in first-seen order), `quorum` witnesses required, by
 * default all of them. `usage` when one key is given under two names, or `quorum` is not an
 * integer in 1..(number of names).
 */
export function cosignerQuorum(cosigners: readonly NoteVerifier[], quorum: number | undefined): QuorumPolicy<NoteVerifier> {
  const byName = new Map<string, NoteVerifier[]>();
  const byKey = new Map<string, NoteVerifier>();
  for (const c of cosigners) {
    const hex = encodeHex(c.publicKey);
    const seen = byKey.get(hex);
    if (seen !== undefined && seen.name !== c.name)
      fail('usage', `one cosigner key is given under two names (${seen.name}, ${c.name}): it would count as two witnesses`);
    byKey.set(hex, c);
    const keys = byName.get(c.name);
    if (keys === undefined) byName.set(c.name, [c]);
    else keys.push(c);
  }
  const witnesses = [...byName].map(([id, keys]) => ({ id, keys }));
  if (quorum !== undefined && (!Number.isSafeInteger(quorum) || quorum < 1 || quorum > witnesses.length))
    fail('usage', `quorum must be an integer in 1..${witnesses.length} (the number of cosigners: a cosigner's several keys count once)`);
  return { witnesses, quorum: quorum ?? witnesses.length };
}

/**
 * The cosigners of `verified` that count under `policy`: one entry per witness (name) with a
 * verified line by one of its keys, in the note's line order, with the time its first verified line
 * signed. `cosignature_missing` when fewer than `policy.quorum` witnesses cosigned.
 */
export function countedCosigners(verified: VerifiedNote, policy: QuorumPolicy<NoteVerifier>): { name: string; timestamp: bigint }[] {
  const owner = new Map<NoteVerifier, string>();
  for (const w of policy.witnesses) for (const k of w.keys) owner.set(k, w.id);
  const firstLine = new Map<string, { name: string; timestamp: bigint }>();
  for (const v of verified.verified) {
    const id = owner.get(v.verifier);
    if (id !== undefined && !firstLine.has(id)) firstLine.set(id, { name: id, timestamp: v.timestamp ?? 0n });
  }
  const tally = tallyQuorum(policy, (w) => firstLine.has(w.id));
  if (!tally.met)
    fail(
      'cosignature_missing',
      `${tally.counted.length} of ${policy.quorum} required cosignatures (missing: ${tally.missing.map((w) => w.id).join(', ')})`,
    );
  return [...firstLine.values()];
}
