/**
 * Indexed signatures against an event's signing keys (SPEC §3.5 rules 5 and 6). The key's type
 * decides the algorithm, whatever the signature code says: Ed25519 through the product's one
 * strict verifier, P-256 (ECDSA-SHA256, r ‖ s) with high S accepted, for KEL event signatures
 * only. A signature counts at most once per index: only the first one of an index is tried.
 */
import { verifyEd25519 } from '../crypto/ed25519.ts';
import { verifyP256AllowingHighS } from '../crypto/p256.ts';
import type { IndexedSignature } from './attachments.ts';
import { keyCommitment } from './said.ts';
import type { KelKey } from './types.ts';

/** Counts of verifications performed, for tests and benchmarks (incremental verification is observable). */
export const signatureCounters = { verified: 0 };

export function verifyKelSignature(key: KelKey, message: Uint8Array, signature: Uint8Array): boolean {
  signatureCounters.verified++;
  return key.curve === 'ed25519' ? verifyEd25519(key.raw, message, signature) : verifyP256AllowingHighS(key.raw, message, signature);
}

/**
 * The signatures that verify over `message` under keys[index]. Only the first signature of each
 * index is tried (a signature counts at most once per index), so an attachment costs at most one
 * verification per key however many signatures it lists.
 */
export function verifiedSignatures(
  keys: readonly KelKey[],
  message: Uint8Array,
  signatures: readonly IndexedSignature[],
): IndexedSignature[] {
  const tried = new Set<number>();
  const out: IndexedSignature[] = [];
  for (const sig of signatures) {
    const key = keys[sig.index];
    if (key === undefined || tried.has(sig.index)) continue;
    tried.add(sig.index);
    if (verifyKelSignature(key, message, sig.signature)) out.push(sig);
  }
  return out;
}

/**
 * Rule 6: how many distinct prior next-key commitments the verified signatures reveal. A
 * signature of a current-only code counts for none; otherwise, with j its ondex, it counts j once
 * when the commitment to the text of keys[index] equals priorNext[j].
 */
export function revealedCommitments(keys: readonly KelKey[], verified: readonly IndexedSignature[], priorNext: readonly string[]): number {
  const counted = new Set<number>();
  for (const sig of verified) {
    if (sig.ondex === null || counted.has(sig.ondex)) continue;
    const committed = priorNext[sig.ondex];
    if (committed !== undefined && keyCommitment(keys[sig.index]!.qb64) === committed) counted.add(sig.ondex);
  }
  return counted.size;
}
