/**
 * Indexed signatures against an event's signing keys (SPEC §3.5 "Bounded work per event", rules 5
 * and 6). The key's type decides the algorithm, whatever the signature code says: Ed25519 through
 * the product's one strict verifier, P-256 (ECDSA-SHA256, r ‖ s) with high S accepted, for KEL
 * event signatures only.
 *
 * The index rules are keripy's: an index beyond the signing keys refuses the event (and so does a
 * dual-index code's ondex beyond the prior `n` of a rotation, which keripy ignores); each index
 * counts once however many signatures it carries, and an invalid signature at an index does not
 * stop a later valid one at the same index from counting. Work is bounded: the caller refuses
 * more than 2 × |keys| signatures (rule 1), and signatures are verified only until the thresholds
 * are met (kt, and for rot/drt the prior nt), skipping any that could add nothing.
 */
import { verifyEd25519 } from '../crypto/ed25519.ts';
import { verifyP256AllowingHighS } from '../crypto/p256.ts';
import type { IndexedSignature, SignatureCode } from './attachments.ts';
import { keyCommitment } from './said.ts';
import type { KelKey } from './types.ts';

/** Counts of verifications performed, for tests and benchmarks (incremental verification is observable). */
export const signatureCounters = { verified: 0 };

export function verifyKelSignature(key: KelKey, message: Uint8Array, signature: Uint8Array): boolean {
  signatureCounters.verified++;
  return key.curve === 'ed25519' ? verifyEd25519(key.raw, message, signature) : verifyP256AllowingHighS(key.raw, message, signature);
}

/** How `checkSignatures` checks one signature: verifyKelSignature, or answers computed beforehand off the event loop. */
export type KelSignatureVerifier = (key: KelKey, message: Uint8Array, signature: Uint8Array) => boolean;

/** SPEC §3.5: more attached signatures than this many per signing key is `malformed`. */
export const MAX_SIGNATURES_PER_KEY = 2;

/** Codes whose second index (ondex) is written out: 2A and 2E (2B and 2F are current-only, their ondex ignored). */
const EXPLICIT_ONDEX: ReadonlySet<SignatureCode> = new Set(['2A', '2E']);

/** A threshold over indices (kt over key indices, nt over prior `n` indices), and how to name it in a detail. */
export interface Threshold {
  met(indices: ReadonlySet<number>): boolean;
  text: string;
}

/** The simple (unweighted) threshold: at least `t` distinct indices. */
export const atLeast = (t: number): Threshold => ({ met: (indices) => indices.size >= t, text: String(t) });

/** For a rot/drt: the prior next-key commitments and the threshold the exposed ones must meet. */
export interface PriorNext {
  n: readonly string[];
  nt: Threshold;
}

export type SignatureCheck =
  { ok: true; verified: ReadonlySet<number>; exposed: ReadonlySet<number> } | { ok: false; rule: 5 | 6; detail: string };

/**
 * Rules 5 and 6 for one event: `keys` sign it under `kt`; for a rot/drt, `prior` is the prior
 * `n` with its threshold. A signature whose index is out of range of `keys` (or, on a rotation,
 * whose written ondex is out of range of the prior `n`) fails rule 5 before anything is verified.
 */
export function checkSignatures(
  keys: readonly KelKey[],
  message: Uint8Array,
  signatures: readonly IndexedSignature[],
  kt: Threshold,
  prior: PriorNext | null,
  verify: KelSignatureVerifier = verifyKelSignature,
): SignatureCheck {
  for (const sig of signatures) {
    if (sig.index >= keys.length) {
      return { ok: false, rule: 5, detail: `a ${sig.code} signature at index ${sig.index}, the event has ${keys.length} signing key(s)` };
    }
    if (prior !== null && sig.ondex !== null && EXPLICIT_ONDEX.has(sig.code) && sig.ondex >= prior.n.length) {
      return {
        ok: false,
        rule: 5,
        detail: `a ${sig.code} signature with ondex ${sig.ondex}, the prior n has ${prior.n.length} commitment(s)`,
      };
    }
  }
  const verified = new Set<number>();
  const exposed = new Set<number>();
  const commitments = new Map<number, string>();
  const commitmentOf = (index: number): string => {
    let c = commitments.get(index);
    if (c === undefined) {
      c = keyCommitment(keys[index]!.qb64);
      commitments.set(index, c);
    }
    return c;
  };
  /** The prior `n` index a valid `sig` would expose, or null. Single-index codes expose their index. */
  const exposes = (sig: IndexedSignature): number | null => {
    if (prior === null || sig.ondex === null || exposed.has(sig.ondex)) return null;
    return prior.n[sig.ondex] === commitmentOf(sig.index) ? sig.ondex : null;
  };
  const done = (): boolean => kt.met(verified) && (prior === null || prior.nt.met(exposed));
  for (const sig of signatures) {
    if (done()) break;
    const exposure = exposes(sig);
    const counts = !verified.has(sig.index) && !kt.met(verified);
    if (!counts && exposure === null) continue; // it could add nothing: not verified
    if (!verify(keys[sig.index]!, message, sig.signature)) continue;
    verified.add(sig.index);
    if (exposure !== null) exposed.add(exposure);
  }
  if (!kt.met(verified)) return { ok: false, rule: 5, detail: `${verified.size} index(es) with a verified signature, kt is ${kt.text}` };
  if (prior !== null && !prior.nt.met(exposed)) {
    return {
      ok: false,
      rule: 6,
      detail: `${exposed.size} prior next-key commitment(s) exposed by verified signatures, prior nt is ${prior.nt.text}`,
    };
  }
  return { ok: true, verified, exposed };
}
