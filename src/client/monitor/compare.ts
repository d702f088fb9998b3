/**
 * Comparing witnesses on a seed: different heads at one index among the observations
 * (equivocation by one witness, disagreement between two, with the party's duplicity proof when
 * one key signed both), witnesses behind the highest co-signed index (withholding), and a seed
 * whose newest co-signed anchor is older than the watch gap (dark).
 */
import { makeDuplicityProof } from '../../anchor/duplicity.ts';
import { encodeDuplicityProof } from '../../anchor/codec.ts';
import { encodeHex } from '../../encoding/hex.ts';
import { parseTimestamp } from '../../encoding/time.ts';
import { decodeResponseAnchor } from '../../verify/receipt.ts';
import { short, type AddFinding, type AnchorPairEvidence } from './findings.ts';
import { partyDuplicity, type PartyKeys } from './parties.ts';
import { headOf, sameBytes, type MonitorState } from './state.ts';

/** Different heads (as bytes) at one index among the observations of a seed. */
export async function crossCheck(seed: string, state: MonitorState, parties: PartyKeys, add: AddFinding): Promise<void> {
  const obs = state.seeds[seed]?.observations ?? [];
  for (let i = 0; i < obs.length; i++) {
    for (let j = i + 1; j < obs.length; j++) {
      const a = obs[i]!;
      const b = obs[j]!;
      const ha = headOf(a.anchor);
      const hb = headOf(b.anchor);
      if (a.anchor.index !== b.anchor.index || ha === undefined || hb === undefined || sameBytes(ha, hb)) continue;
      const [x, y, hx, hy] = Buffer.compare(ha, hb) < 0 ? [a, b, ha, hb] : [b, a, hb, ha];
      const same = x.witness === y.witness;
      const evidence: AnchorPairEvidence = {
        index: x.anchor.index,
        a: { witness: x.witness, anchor: x.anchor, cosignature: x.cosignature },
        b: { witness: y.witness, anchor: y.anchor, cosignature: y.cosignature },
      };
      let proofNote = 'the two anchors are signed by different party keys (no duplicity proof)';
      try {
        const proof = makeDuplicityProof(decodeResponseAnchor(x.anchor), decodeResponseAnchor(y.anchor));
        if ((await partyDuplicity(proof, parties)).valid) {
          evidence.duplicity_proof = encodeDuplicityProof(proof);
          proofNote = 'the party signed both: duplicity proof attached (verifies offline)';
        }
      } catch {
        // different party keys: the co-signed anchors are the evidence
      }
      add({
        id: `${same ? 'equivocation' : 'disagreement'} ${seed} ${x.anchor.index} ${encodeHex(hx)} ${encodeHex(hy)} ${x.witness} ${y.witness}`,
        kind: same ? 'equivocation' : 'disagreement',
        severity: 'alert',
        seed,
        witness: same ? x.witness : `${x.witness},${y.witness}`,
        message: same
          ? `${x.witness} co-signed two heads at index ${x.anchor.index} of seed ${short(seed)}…: ${short(encodeHex(hx))}… and ${short(encodeHex(hy))}…; ${proofNote}`
          : `witnesses disagree on seed ${short(seed)}… index ${x.anchor.index}: ${x.witness} co-signed head ${short(encodeHex(hx))}…, ${y.witness} co-signed ${short(encodeHex(hy))}…; ${proofNote}`,
        evidence,
      });
    }
  }
}

export function withholding(
  seed: string,
  state: MonitorState,
  current: Map<string, Map<string, number | null>>,
  now: number,
  grace: number,
  add: AddFinding,
): void {
  let best = -1;
  let bestBy = '';
  for (const [name, w] of Object.entries(state.witnesses).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const seen = w.anchors[seed]?.anchor.index;
    if (seen !== undefined && seen > best) {
      best = seen;
      bestBy = name;
    }
  }
  if (best < 0) return;
  for (const [name, perSeed] of current) {
    if (!perSeed.has(seed)) continue;
    const index = perSeed.get(seed) as number | null;
    const record = state.witnesses[name]!;
    if (index !== null && index >= best) {
      Reflect.deleteProperty(record.behind, seed);
      continue;
    }
    const since = record.behind[seed] ?? now;
    record.behind[seed] = since;
    if (now - since < grace) continue;
    add({
      id: `withholding ${name} ${seed} ${index ?? 'none'} ${best}`,
      subject: `${name} ${seed}`,
      kind: 'withholding',
      severity: 'alert',
      witness: name,
      seed,
      message: `${name} is behind on seed ${short(seed)}…: ${index === null ? 'no anchor' : `index ${index}`} while ${bestBy} co-signed index ${best} (behind for ${now - since} s)`,
      evidence: { index, expected: best, by: bestBy, since },
    });
  }
}

/**
 * `seed_dark` (upstream's watch gap): the seed's newest co-signed anchor — the highest index any
 * witness co-signed, as recorded (party-signed anchors only) — carries a timestamp more than
 * `darkAfter` seconds before `now`. A seed no witness has co-signed is not dark (nothing to date).
 */
export function darkSeed(seed: string, state: MonitorState, now: number, darkAfter: number, add: AddFinding): void {
  let newest: { witness: string; index: number; timestamp: string } | undefined;
  for (const [name, w] of Object.entries(state.witnesses).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const a = w.anchors[seed]?.anchor;
    if (a !== undefined && (newest === undefined || a.index > newest.index))
      newest = { witness: name, index: a.index, timestamp: a.timestamp };
  }
  if (newest === undefined) return;
  let at: number;
  try {
    at = parseTimestamp(newest.timestamp);
  } catch {
    return;
  }
  const age = now - at;
  if (age <= darkAfter) return;
  add({
    id: `seed_dark ${seed}`,
    kind: 'seed_dark',
    severity: 'warning',
    seed,
    message: `seed ${short(seed)}… is dark: its newest co-signed anchor (index ${newest.index}, at ${newest.witness}) is dated ${newest.timestamp}, ${age} s ago (more than --dark-after ${darkAfter} s)`,
    evidence: { index: newest.index, timestamp: newest.timestamp, witness: newest.witness, dark_after: darkAfter },
  });
}
