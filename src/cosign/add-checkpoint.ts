/**
 * The add-checkpoint algorithm (C2SP tlog-witness, SPEC §5), below HTTP.
 *
 * Checks run in the order of SPEC §5's table; the first failure answers:
 *
 *   1  request parses                                   400 malformed_request
 *   2  origin known                                     404 unknown_origin
 *      and its stored state not made under a disjoint   404 origin_key_conflict
 *      log key set (key-binding.ts; SPEC §5 rev 4)
 *   3  signed by a known key of the log, no known key   403 invalid_signature / no_trusted_signature
 *      whose signature fails (0x01 Ed25519 log keys, or 0x06 ML-DSA-44 subtree/v1 ones)
 *      then, whatever `old` says: evidence (below); the request goes on
 *  3a  with an ML-DSA-44 cosign key: no extension       400 ml_dsa_unsignable
 *      lines (and an origin of at most 255 bytes)
 *   4  per-origin quota (token bucket, quota.ts)        429 quota_exceeded (+ retryAfter)
 *   5  old size ≤ checkpoint size                       400 old_size_too_large
 *   6  old size = the size last cosigned (0 if never)   409 (body `<size>\n`)
 *   7  size 0 ⇒ the empty-tree root                     422 invalid_empty_tree
 *   8  old 0 ⇒ empty proof                              422 unexpected_proof
 *   9  consistency proof valid / same size, same root   422 inconsistent
 *  10  cosign, store durably, then answer               200 one line per cosign key, in key order, one T:
 *                                                          Ed25519 cosignature/v1, ML-DSA-44 subtree/v1
 *                                                          over [0, size) with hash = root (SPEC §5.3)
 *      a replay (rev 4): the stored checkpoint text,    200 the stored lines: no signature, no write
 *      `old` = its size, lines of the current cosign
 *      key set, state bound to the current log keys
 *
 * Evidence (SPEC §5, evidence.ts) is kept where the log's signature alone proves misbehaviour
 * against the stored state, whatever `old` says.
 *
 * Checks 6–10 run under a per-origin lock (KeyedLock, src/store/keyed-lock.ts: requests for different origins do not wait for each
 * other) and the store's compare-and-swap on the stored size backs the lock: a failed swap means
 * another writer moved the origin, and the request is re-checked against the new state.
 *
 * The cosignature time is max(now, the last time issued for the origin), stored with the state, so
 * an origin's cosignature times never go backwards, across restarts and clock steps included.
 *
 * The lines are the keyring's Cosigners' (keyring.ts); ML-DSA-44 signatures (≈ 20× an Ed25519 one)
 * are made on the signature pool's worker threads when a pool is given, so that they never hold
 * the event loop; the state is still written, with every
 * line, before the 200.
 */
import type { SignaturePool } from '../anchoring/verify-pool.ts';
import { ProtocolError } from '../errors.ts';
import { NoteError } from '../note/errors.ts';
import { verifyNote, verifyNoteWith, type VerifiedNote } from '../note/signed-note.ts';
import { statementOfCheckpoint } from '../note/subtree-message.ts';
import { parseAddCheckpointRequest, type AddCheckpointRequest } from '../note/tlog-witness.ts';
import type { KeyedLock } from '../store/keyed-lock.ts';
import type { CosignStateStorage, OriginState } from '../store/types.ts';
import { EMPTY_ROOT, hashEqual } from '../tlog/hash.ts';
import { verifyConsistency } from '../tlog/merkle.ts';
import type { CosignRejectionCode } from './errors.ts';
import { verifiedNoteText, type EvidenceKeeper } from './evidence.ts';
import { compareKeySets } from './key-binding.ts';
import type { CosignKeyring } from './keyring.ts';
import type { KnownLog, KnownLogs } from './logs.ts';
import type { OriginQuota } from './quota.ts';
import { reject, type CosignRejection } from './rejection.ts';

export type AddCheckpointOutcome =
  | {
      readonly kind: 'cosigned';
      readonly status: 200;
      readonly origin: string;
      readonly size: number;
      readonly timestamp: number;
      readonly body: string;
    }
  | { readonly kind: 'conflict'; readonly status: 409; readonly origin: string; readonly size: number }
  | CosignRejection<CosignRejectionCode>;

/** What the algorithm works with (CosignService assembles it). */
export interface AddCheckpointContext {
  /** The witness name: the key name of the cosignature lines. */
  readonly name: string;
  readonly store: CosignStateStorage;
  readonly keyring: CosignKeyring;
  /** The current known-logs snapshot (read once per request). */
  readonly logs: () => KnownLogs;
  /** Clock, milliseconds since the epoch. */
  readonly now: () => number;
  readonly evidence: EvidenceKeeper;
  readonly quota: OriginQuota;
  /** Per-origin lock of checks 6–10. */
  readonly lock: KeyedLock;
  /** Log signatures verified on worker threads (same rules) when given. */
  readonly verifyPool: SignaturePool | undefined;
}

/** How many times a request is re-checked after losing a compare-and-swap to another writer. */
const MAX_CAS_ATTEMPTS = 5;

/** Handle one add-checkpoint request body. Store failures (StoreUnavailableError) propagate. */
export async function addCheckpoint(ctx: AddCheckpointContext, body: Uint8Array | string): Promise<AddCheckpointOutcome> {
  // 1. parse
  let req: AddCheckpointRequest;
  try {
    req = parseAddCheckpointRequest(body);
  } catch (e) {
    if (e instanceof ProtocolError) return reject(400, 'malformed_request', e.message, undefined);
    throw e;
  }
  const { checkpoint } = req;
  // 2. origin known
  const log = ctx.logs().get(checkpoint.origin);
  if (log === undefined) return reject(404, 'unknown_origin', 'unknown log: this witness does not cosign for that origin', undefined);
  const origin = log.origin;
  // ... and not a state made under other log keys (read here: evidence needs it after check 3)
  const state = await ctx.store.getOrigin(origin);
  if (keyConflict(state, log)) return keyConflictRejection(origin);
  // 3. signatures
  let verified: VerifiedNote;
  try {
    const pool = ctx.verifyPool;
    verified =
      pool === undefined
        ? verifyNote(req.note, log.verifiers)
        : await verifyNoteWith(req.note, log.verifiers, (c) =>
            c.algorithm === 'ed25519'
              ? pool.verify(c.publicKey, c.message, c.signature)
              : pool.verifyMlDsa44(c.publicKey, c.message, c.signature),
          );
  } catch (e) {
    if (e instanceof NoteError && e.code === 'invalid_signature')
      return reject(403, 'invalid_signature', `invalid signature: ${e.message}`, origin);
    if (e instanceof NoteError && e.code === 'unverified_note') {
      return reject(403, 'no_trusted_signature', 'invalid signature: no signature by a known key of the log', origin);
    }
    throw e;
  }
  // Evidence: the validly signed checkpoint against the stored state, whatever `old` says.
  const kept = await ctx.evidence.keep(origin, checkpoint, verified, state);
  // 3a. an ML-DSA-44 cosignature cannot cover extension lines (nor an origin over 255 bytes)
  if (ctx.keyring.hasMlDsaKey) {
    try {
      statementOfCheckpoint(ctx.name, checkpoint, 1);
    } catch (e) {
      if (e instanceof NoteError) return reject(400, 'ml_dsa_unsignable', `checkpoint cannot be ML-DSA-44 cosigned: ${e.message}`, origin);
      throw e;
    }
  }
  // 4. quota
  const retryAfter = ctx.quota.take(origin, log.qpd, ctx.now());
  if (retryAfter !== null) {
    return reject(429, 'quota_exceeded', `quota of ${log.qpd} requests per day exceeded for this log`, origin, retryAfter);
  }
  // 5. old ≤ new
  if (req.oldSize > checkpoint.size) {
    return reject(400, 'old_size_too_large', `old size ${req.oldSize} is larger than the checkpoint size ${checkpoint.size}`, origin);
  }
  return ctx.lock.run(origin, () => commit(ctx, log, req, verified, kept));
}

/**
 * Checks 6–10 under the origin's lock. `kept`: the checkpoint is already evidence; if not, it is
 * checked again against each fresh state (the state may have moved to its size meanwhile).
 */
async function commit(
  ctx: AddCheckpointContext,
  log: KnownLog,
  req: AddCheckpointRequest,
  verified: VerifiedNote,
  kept: boolean,
): Promise<AddCheckpointOutcome> {
  const { checkpoint, oldSize, proof } = req;
  const origin = log.origin;
  const logKeys = log.verifiers.map((v) => v.vkey);
  for (let attempt = 1; ; attempt++) {
    const state = await ctx.store.getOrigin(origin);
    if (keyConflict(state, log)) return keyConflictRejection(origin);
    if (!kept) kept = await ctx.evidence.keep(origin, checkpoint, verified, state);
    const storedSize = state?.size ?? 0;
    // 6. old size = stored size
    if (oldSize !== storedSize) return { kind: 'conflict', status: 409, origin, size: storedSize };
    // 7. size 0 ⇒ empty-tree root
    if (checkpoint.size === 0 && !hashEqual(checkpoint.rootHash, EMPTY_ROOT)) {
      return reject(422, 'invalid_empty_tree', 'checkpoint of size 0 with a root other than the empty-tree root', origin);
    }
    // 8. old 0 ⇒ no proof
    if (oldSize === 0 && proof.length > 0) return reject(422, 'unexpected_proof', 'old size 0 needs an empty consistency proof', origin);
    // 9. consistency
    const oldRoot = state?.root ?? EMPTY_ROOT;
    if (!verifyConsistency(oldSize, checkpoint.size, oldRoot, checkpoint.rootHash, proof)) {
      if (oldSize === checkpoint.size && hashEqual(oldRoot, checkpoint.rootHash)) {
        // The checkpoint is the cosigned one; only the (superfluous) proof is wrong.
        return reject(422, 'inconsistent', 'bad consistency proof: the proof between equal sizes must be empty', origin);
      }
      const detail =
        oldSize === checkpoint.size
          ? `bad consistency proof: size ${oldSize} was cosigned with a different root`
          : `bad consistency proof from size ${oldSize} to ${checkpoint.size}`;
      return reject(422, 'inconsistent', detail, origin);
    }
    // 10. a replay of the stored checkpoint: its stored lines, no signature, no write (SPEC §5 rev 4)
    if (state !== undefined && isReplay(ctx.keyring.digest, state, req, logKeys)) {
      return { kind: 'cosigned', status: 200, origin, size: state.size, timestamp: state.lastTime, body: state.cosignatures };
    }
    // 10. cosign, persist, answer
    const timestamp = Math.max(Math.floor(ctx.now() / 1000), state?.lastTime ?? 0);
    const lines = await ctx.keyring.cosignCheckpoint(req.note.text, timestamp, checkpoint);
    const next: OriginState = {
      origin,
      size: checkpoint.size,
      root: checkpoint.rootHash,
      checkpoint: verifiedNoteText(verified),
      cosignatures: lines,
      lastTime: timestamp,
      logKeys,
      cosignerSet: ctx.keyring.digest,
    };
    if (await ctx.store.updateOrigin(storedSize, next)) {
      return { kind: 'cosigned', status: 200, origin, size: checkpoint.size, timestamp, body: lines };
    }
    if (attempt >= MAX_CAS_ATTEMPTS) {
      const now = await ctx.store.getOrigin(origin);
      return { kind: 'conflict', status: 409, origin, size: now?.size ?? 0 };
    }
  }
}

/**
 * Whether a request (that passed checks 1–9) is a replay answered from `state`: the stored
 * checkpoint text (so the same size and root: the stored lines sign exactly this text), `old` =
 * that size, lines made by the current cosign key set (`cosignerSet`, the keyring's digest) and a
 * state bound to the current log keys (else it is signed anew, which also records both).
 */
function isReplay(cosignerSet: Uint8Array, state: OriginState, req: AddCheckpointRequest, logKeys: readonly string[]): boolean {
  return (
    req.oldSize === state.size &&
    req.checkpoint.size === state.size &&
    hashEqual(req.checkpoint.rootHash, state.root) &&
    // The stored note is its text, a blank line, signature lines; a text has no blank line.
    state.checkpoint.startsWith(req.note.text + '\n') &&
    state.cosignerSet !== undefined &&
    state.cosignerSet.length === cosignerSet.length &&
    hashEqual(state.cosignerSet, cosignerSet) &&
    compareKeySets(state.logKeys, logKeys, true) === 'same'
  );
}

/** A cosigned state made under a log key set disjoint from the log's keys now (SPEC §5 rev 4). */
function keyConflict(state: OriginState | undefined, log: KnownLog): boolean {
  if (state === undefined || state.logKeys === undefined) return false;
  return (
    compareKeySets(
      state.logKeys,
      log.verifiers.map((v) => v.vkey),
      true,
    ) === 'conflict'
  );
}

function keyConflictRejection(origin: string): CosignRejection<CosignRejectionCode> {
  return reject(
    404,
    'origin_key_conflict',
    'unknown log: this witness cosigned that origin under other log keys (operator: anchor-witness cosign forget)',
    origin,
  );
}
