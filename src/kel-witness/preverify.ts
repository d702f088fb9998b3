/**
 * Signature checks off the event loop (SPEC §3.6.2): before its transaction, every Ed25519
 * signature of a request's `-A` group (of at least MIN_OFFLOADED signatures) is verified on the node's signature pool (worker threads)
 * against the key it names — the event's own `k` for establishment events, the committed current
 * keys for an `ixn`. The §3.5 verifier then runs as always, with those answers: a signature it asks
 * about that was not verified beforehand (a P-256 key, or keys that changed since the read) is
 * verified on the spot by verifyKelSignature, so the outcome never depends on the pool. Large
 * requests and P-256 signatures go to the role's verification workers instead (offload.ts).
 */
import { signatureCounters, verifyKelSignature, type KelSignatureVerifier } from '../keri/signatures.ts';
import type { IndexedSignature } from '../keri/attachments.ts';
import type { KelKey } from '../keri/types.ts';
import type { KelLedgerEvent } from '../store/kel-ledger.ts';
import { MAX_IXN_SIGNATURES, type Candidate } from './checks.ts';
import { decodeLedgerState } from './key-state.ts';
import type { KelOffload } from './offload.ts';
import type { KelOutcome } from './outcome.ts';

/**
 * Fewer signatures than this are verified on the event loop: one Ed25519 check costs less there than
 * the trip to a worker (measured: a lone controller's single-signature ixns ran 10–20 % slower
 * through the pool), while events with many signatures — the costly and hostile ones — leave it.
 */
export const MIN_OFFLOADED = 2;

/** What is needed of the signature pool (src/anchoring/verify-pool.ts): the strict Ed25519 verifier's answer. */
export interface SignatureWorkers {
  verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean>;
}

const id = (key: Uint8Array, signature: Uint8Array): string =>
  Buffer.from(key).toString('latin1') + Buffer.from(signature).toString('latin1');

/** Verify `signatures` over `message` on the workers; the verifier that answers from them for this message. */
export async function preverify(
  workers: SignatureWorkers,
  message: Uint8Array,
  keys: readonly KelKey[],
  signatures: readonly IndexedSignature[],
): Promise<KelSignatureVerifier> {
  const distinct = new Map<string, { key: KelKey; signature: Uint8Array }>();
  for (const s of signatures) {
    const key = keys[s.index];
    if (key?.curve === 'ed25519') distinct.set(id(key.raw, s.signature), { key, signature: s.signature });
  }
  const answers = new Map<string, boolean>();
  await Promise.all(
    [...distinct].map(async ([k, { key, signature }]) => {
      answers.set(k, await workers.verify(key.raw, message, signature));
    }),
  );
  return (key, m, signature) => {
    const known = m === message ? answers.get(id(key.raw, signature)) : undefined;
    if (known === undefined) return verifyKelSignature(key, m, signature);
    signatureCounters.verified++;
    return known;
  };
}

const P256_CODES: ReadonlySet<string> = new Set(['E', 'F', '2E', '2F']);

/**
 * The verifier for a request's event, or undefined when nothing is worth sending (no workers, or
 * more signatures than check 6 allows: it refuses those without verifying), or 503 when the
 * verification workers are at capacity. An event a verification worker parsed has its answers
 * already (offload.ts). An `ixn`'s keys are the current keys of the committed `tip`: when one of
 * those it names is a P-256 key, its signatures go to a verification worker (the signature pool
 * verifies Ed25519 only); the tip is read when the signatures are at least MIN_OFFLOADED or one
 * carries a P-256 code (keripy's `E`/`F`/`2E`/`2F`).
 */
export async function candidateVerifier(
  workers: SignatureWorkers | undefined,
  c: Candidate,
  tip: (prefix: string) => Promise<KelLedgerEvent | undefined>,
  offload?: Pick<KelOffload, 'size' | 'signatures'>,
): Promise<KelSignatureVerifier | KelOutcome | undefined> {
  if (c.verify !== undefined || (c.stateless !== undefined && c.stateless !== null)) return c.verify; // a worker's answers, or its refusal
  const sigs = c.att.controller ?? [];
  const { e } = c;
  if (sigs.length > (e.t === 'ixn' ? MAX_IXN_SIGNATURES : 2 * Math.max(1, e.keys.length))) return undefined;
  const offloading = offload !== undefined && offload.size > 0;
  const many = workers !== undefined && sigs.length >= MIN_OFFLOADED;
  if (!many && !(offloading && (e.t !== 'ixn' || sigs.some((s) => P256_CODES.has(s.code))))) return undefined;
  let keys = e.keys;
  if (e.t === 'ixn') {
    const held = await tip(e.i);
    if (held === undefined) return undefined;
    keys = decodeLedgerState(held.keyState).keys;
  }
  if (offloading && sigs.some((s) => keys[s.index]?.curve === 'p256')) return offload.signatures(e.bytes, keys, sigs);
  return many ? preverify(workers, e.bytes, keys, sigs) : undefined;
}
