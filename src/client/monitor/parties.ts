/**
 * The parties' keys (SPEC §3.2 registry) as the monitor uses them: an anchor counts only when its
 * party signature verifies under a registered key, a duplicity proof is the party's only when its
 * key is registered, and a state written before these checks is cleaned of what they reject. The
 * signatures are checked by the one verifier core (src/verify), as everywhere in the client.
 */
import { encodeDuplicityProof } from '../../anchor/codec.ts';
import { keyFingerprint, type Registry } from '../../anchor/registry.ts';
import type { Anchor, AnchorWire, DuplicityProof } from '../../anchor/types.ts';
import { encodeHex } from '../../encoding/hex.ts';
import { verifyDuplicityProof } from '../../verify/duplicity.ts';
import { VerificationError } from '../../verify/errors.ts';
import { decodeResponseAnchor, verifyPartySignature } from '../../verify/receipt.ts';
import type { MonitorState } from './state.ts';

/** The party keys (registry), by keyFingerprint → party id. */
export type PartyKeys = ReadonlyMap<string, string>;

export function partyKeys(registry: Registry | undefined): PartyKeys {
  const keys = new Map<string, string>();
  for (const p of registry?.parties.values() ?? []) for (const k of p.keys) keys.set(keyFingerprint(k.curve, k.publicKey), p.id);
  return keys;
}

/** Why an anchor is not the party's (undefined: it is: a registered key, and the signature verifies). */
export async function notThePartys(anchor: Anchor, parties: PartyKeys): Promise<string | undefined> {
  const sp = anchor.sigParty;
  if (!parties.has(keyFingerprint(sp.curve, sp.publicKey)))
    return `its party key ${sp.curve}:${encodeHex(sp.publicKey)} is not a key of any party in the registry`;
  if (!(await verifyPartySignature(anchor)))
    return `its party signature does not verify under the registered key of ${parties.get(keyFingerprint(sp.curve, sp.publicKey))}`;
  return undefined;
}

/** A duplicity proof is the party's when it verifies offline and its (one) key is a registered party key. */
export async function partyDuplicity(
  proof: DuplicityProof,
  parties: PartyKeys,
): Promise<{ valid: true; party: string } | { valid: false; reason: string }> {
  try {
    await verifyDuplicityProof(encodeDuplicityProof(proof));
  } catch (e) {
    if (e instanceof VerificationError) return { valid: false, reason: e.message };
    throw e;
  }
  const sp = proof.anchorA.sigParty;
  const party = parties.get(keyFingerprint(sp.curve, sp.publicKey));
  if (party === undefined)
    return {
      valid: false,
      reason: `it verifies, but is not signed by a key of any party in the registry (${sp.curve}:${encodeHex(sp.publicKey)})`,
    };
  return { valid: true, party };
}

/**
 * Drop from the state every anchor the registry does not vouch for (a state written before the
 * monitor checked party signatures may hold a forged high-water mark or observation).
 */
export async function purgeUnsigned(state: MonitorState, parties: PartyKeys): Promise<void> {
  const ok = async (w: AnchorWire): Promise<boolean> => {
    try {
      return (await notThePartys(decodeResponseAnchor(w), parties)) === undefined;
    } catch {
      return false;
    }
  };
  for (const record of Object.values(state.witnesses)) {
    for (const [seed, o] of Object.entries(record.anchors)) if (!(await ok(o.anchor))) Reflect.deleteProperty(record.anchors, seed);
  }
  for (const entry of Object.values(state.seeds)) {
    const kept = [];
    for (const o of entry.observations) if (await ok(o.anchor)) kept.push(o);
    entry.observations = kept;
  }
}
