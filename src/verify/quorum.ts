/**
 * The client side of the witness policy (./policy.ts; SPEC §4.1 *(rev 4)*: a quorum counts
 * WITNESSES, never keys). A client knows cosigner vkeys (`--vkey`, `--log-cosigner`, the SDKs'
 * `cosigners`): a witness is a cosigner NAME, its keys the vkeys carrying that name, and one key
 * listed under two names is a usage error (a cosignature/v1 line does not sign the name, so one
 * signer would vote twice). Users: the SDKs' verifyCosignedCheckpoint (src/verify/note.ts, also
 * exported by src/client/index.ts), `verify cosignature --quorum` and `monitor --log-quorum`.
 */
import type { NoteVerifier, VerifiedNote } from '../note/signed-note.ts';
import { encodeHex } from '../encoding/hex.ts';
import { fail, usage } from './errors.ts';
import { Policy, witness, type PolicyWitness } from './policy.ts';

/**
 * The policy over cosigner keys: keys grouped by name into witnesses (in first-seen order),
 * `quorum` witnesses required, by default all of them. `usage` when one key is given under two
 * names, or `quorum` is not an integer in 1..(number of names).
 */
export function cosignerQuorum(cosigners: readonly NoteVerifier[], quorum: number | undefined): Policy<NoteVerifier> {
  const byName = new Map<string, NoteVerifier[]>();
  const byKey = new Map<string, NoteVerifier>();
  for (const c of cosigners) {
    const hex = encodeHex(c.publicKey);
    const seen = byKey.get(hex);
    if (seen !== undefined && seen.name !== c.name)
      usage(`one cosigner key is given under two names (${seen.name}, ${c.name}): it would count as two witnesses`);
    byKey.set(hex, c);
    const keys = byName.get(c.name);
    if (keys === undefined) byName.set(c.name, [c]);
    else keys.push(c);
  }
  const witnesses = [...byName].map(([id, keys]) => witness(id, keys));
  if (quorum !== undefined && (!Number.isSafeInteger(quorum) || quorum < 1 || quorum > witnesses.length))
    usage(`quorum must be an integer in 1..${witnesses.length} (the number of cosigners: a cosigner's several keys count once)`);
  return Policy.threshold(quorum ?? witnesses.length, witnesses);
}

/**
 * The cosigners of `verified` that count under `policy`: one entry per witness (name) with a
 * verified line by one of its keys, in the note's line order, with the time its first verified line
 * signed. `cosignature_missing` when the policy is not met.
 */
export function countedCosigners(verified: VerifiedNote, policy: Policy<NoteVerifier>): { name: string; timestamp: bigint }[] {
  const owner = new Map<NoteVerifier, PolicyWitness<NoteVerifier>>();
  for (const w of policy.witnesses) for (const k of w.keys) owner.set(k, w);
  const firstLine = new Map<PolicyWitness<NoteVerifier>, { name: string; timestamp: bigint }>();
  for (const v of verified.verified) {
    const w = owner.get(v.verifier);
    if (w !== undefined && !firstLine.has(w)) firstLine.set(w, { name: w.id, timestamp: v.timestamp ?? 0n });
  }
  const tally = policy.tally((w) => firstLine.has(w));
  if (!tally.met)
    fail(
      'cosignature_missing',
      `${tally.counted.length} of ${policy.threshold} required cosignatures (missing: ${tally.missing.map((w) => w.id).join(', ')})`,
    );
  return [...firstLine.values()];
}
