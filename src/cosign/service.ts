/**
 * The cosign role below HTTP: C2SP tlog-witness add-checkpoint (SPEC §5).
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
 * Evidence (SPEC §5) is kept only where the log's signature alone proves misbehaviour against the
 * stored state: a checkpoint of size 0 with a root other than the empty-tree root, or of the stored
 * size with another root. A failing consistency proof proves nothing (the client wrote it) and is
 * never evidence. A row holds the checkpoint text with only the log signature lines that verified;
 * rows are deduplicated by SHA-256 of the checkpoint text (one row per checkpoint, however it is
 * signed or sent) and bounded per origin (`evidenceLimit`, oldest evicted first).
 *
 * Checks 6–10 run under a per-origin lock (requests for different origins do not wait for each
 * other) and the store's compare-and-swap on the stored size backs the lock: a failed swap means
 * another writer moved the origin, and the request is re-checked against the new state.
 *
 * The cosignature time is max(now, the last time issued for the origin), stored with the state, so
 * an origin's cosignature times never go backwards, across restarts and clock steps included.
 *
 * ML-DSA-44 signatures (≈ 20× an Ed25519 one) are made on the signature pool's worker threads when
 * a pool is given, so that they never hold the event loop; the state is still written, with every
 * line, before the 200.
 */
import type { KeyObject } from 'node:crypto';
import { isSigner, type Signer } from '../keys/signer.ts';
import { ed25519PublicKeyBytes, signEd25519 } from '../crypto/ed25519.ts';
import { sha256 } from '../crypto/sha256.ts';
import { mlDsa44PublicKeyBytes, signMlDsa44 } from '../crypto/ml-dsa.ts';
import type { SignaturePool } from '../anchoring/verify-pool.ts';
import { encodeBase64 } from '../encoding/base64.ts';
import { ProtocolError } from '../errors.ts';
import { validateName } from '../note/checkpoint.ts';
import { NoteError } from '../note/errors.ts';
import { cosignatureMessage, encodeCosignatureBytes } from '../note/cosignature.ts';
import {
  SIG_TYPE_COSIGNATURE_V1,
  SIG_TYPE_SUBTREE_V1,
  formatNote,
  formatSignatureLine,
  verifyNote,
  verifyNoteWith,
  type NoteKeyType,
} from '../note/signed-note.ts';
import { checkpointStatement, encodeSubtreeSignatureBytes, subtreeMessage } from '../note/subtree-message.ts';
import { computeKeyId } from '../note/key-id.ts';
import type { VerifiedNote } from '../note/signed-note.ts';
import { formatVkey } from '../note/vkey.ts';
import type { Checkpoint } from '../note/checkpoint.ts';
import { EVIDENCE_LIMIT } from '../store/types.ts';
import type { CosignStateStorage, OriginState } from '../store/types.ts';
import { EMPTY_ROOT, hashEqual } from '../tlog/hash.ts';
import { compareKeySets } from './key-binding.ts';
import { verifyConsistency } from '../tlog/merkle.ts';
import { CosignConfigError, type CosignRejectionCode } from './errors.ts';
import type { KnownLog, KnownLogs } from './logs.ts';
import { OriginQuota } from './quota.ts';
import type { AddCheckpointRequest } from './request.ts';
import { parseAddCheckpointRequest } from './request.ts';
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

export interface CosignServiceOptions {
  store: CosignStateStorage;
  /** The witness name: the key name of the cosignature lines. */
  name: string;
  /**
   * One or more private keys, Ed25519 (cosignature/v1 lines) or ML-DSA-44 (subtree/v1 lines), each
   * a distinct key; one line per key, in this order.
   */
  /** Ed25519 or ML-DSA-44 keys in the process, or external Ed25519 Signers (src/keys, SPEC §1.1). */
  cosignKeys: readonly (KeyObject | Signer)[];
  /** The current known-logs snapshot (read once per request). */
  logs: () => KnownLogs;
  /** Clock, milliseconds since the epoch (default Date.now). */
  now?: () => number;
  /** Called after a new evidence row is stored (for logs and metrics); not for a known one. */
  onEvidence?: (origin: string, reason: string) => void;
  /** Called when storing evidence evicted `count` older rows of the origin. */
  onEvidenceEvicted?: (origin: string, count: number) => void;
  /** Evidence rows kept per origin (default EVIDENCE_LIMIT, 1 000). */
  evidenceLimit?: number | undefined;
  /**
   * Verify the log signatures and make the ML-DSA-44 signatures on worker threads (same rules); the
   * pool should hold the ML-DSA-44 cosign keys (SignaturePool's `mlDsaKeys`).
   */
  verifyPool?: SignaturePool | undefined;
}

interface CosignSigner {
  readonly type: NoteKeyType;
  /** In the process; undefined for an external key (`external`). */
  readonly key: KeyObject | undefined;
  readonly external: Signer | undefined;
  readonly publicKey: Uint8Array;
  readonly keyId: number;
  readonly vkey: string;
}

/** The signer of one cosign key: its type from the key's algorithm. Throws CosignConfigError. */
function cosignSigner(name: string, keyOrSigner: KeyObject | Signer, i: number): CosignSigner {
  if (isExternalSigner(keyOrSigner)) {
    if (keyOrSigner.algorithm !== 'ed25519')
      throw new CosignConfigError('invalid_cosign_key', `cosign key ${i + 1}: an external cosign key is Ed25519`);
    const publicKey = keyOrSigner.publicKey;
    const type = SIG_TYPE_COSIGNATURE_V1;
    return {
      type,
      key: undefined,
      external: keyOrSigner,
      publicKey,
      keyId: computeKeyId(name, type, publicKey),
      vkey: formatVkey(name, type, publicKey),
    };
  }
  const key = keyOrSigner;
  let type: NoteKeyType;
  let publicKey: Uint8Array;
  try {
    if (key.type !== 'private') throw new Error('not a private key');
    if (key.asymmetricKeyType === 'ml-dsa-44') {
      type = SIG_TYPE_SUBTREE_V1;
      publicKey = mlDsa44PublicKeyBytes(key);
    } else {
      type = SIG_TYPE_COSIGNATURE_V1;
      publicKey = ed25519PublicKeyBytes(key);
    }
  } catch (e) {
    throw new CosignConfigError(
      'invalid_cosign_key',
      `cosign key ${i + 1}: not an Ed25519 or ML-DSA-44 private key (${(e as Error).message})`,
    );
  }
  return { type, key, external: undefined, publicKey, keyId: computeKeyId(name, type, publicKey), vkey: formatVkey(name, type, publicKey) };
}

/** A Signer (src/keys) rather than a KeyObject. */
export const isExternalSigner = isSigner;

/** A FIFO lock per key; a key's entry is dropped when its queue drains. */
class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const result = prev.then(fn, fn);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    try {
      return await result;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

/** How many times a request is re-checked after losing a compare-and-swap to another writer. */
const MAX_CAS_ATTEMPTS = 5;

export class CosignService {
  readonly name: string;
  private readonly store: CosignStateStorage;
  private readonly signers: readonly CosignSigner[];
  /** SHA-256 of the cosign vkeys, one per line: which key set made a state's stored lines. */
  private readonly cosignerSet: Uint8Array;
  private readonly logs: () => KnownLogs;
  private readonly now: () => number;
  private readonly onEvidence: ((origin: string, reason: string) => void) | undefined;
  private readonly onEvidenceEvicted: ((origin: string, count: number) => void) | undefined;
  private readonly evidenceLimit: number;
  private readonly verifyPool: SignaturePool | undefined;
  private readonly quota = new OriginQuota();
  private readonly lock = new KeyedLock();

  constructor(opts: CosignServiceOptions) {
    try {
      validateName(opts.name);
    } catch (e) {
      throw new CosignConfigError('invalid_name', `witness name: ${(e as Error).message}`);
    }
    if (opts.cosignKeys.length === 0) throw new CosignConfigError('invalid_cosign_key', 'at least one cosign key is required');
    const seen = new Set<string>();
    this.signers = opts.cosignKeys.map((key, i): CosignSigner => {
      const signer = cosignSigner(opts.name, key, i);
      const hex = Buffer.from(signer.publicKey).toString('hex');
      if (seen.has(hex))
        throw new CosignConfigError('invalid_cosign_key', `cosign key ${i + 1}: the same key twice (each cosigner needs a distinct key)`);
      seen.add(hex);
      return signer;
    });
    this.cosignerSet = sha256(new TextEncoder().encode(this.signers.map((s) => s.vkey).join('\n')));
    this.name = opts.name;
    this.store = opts.store;
    this.logs = opts.logs;
    this.now = opts.now ?? Date.now;
    this.onEvidence = opts.onEvidence;
    this.onEvidenceEvicted = opts.onEvidenceEvicted;
    const limit = opts.evidenceLimit ?? EVIDENCE_LIMIT;
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new CosignConfigError('invalid_evidence_limit', `evidence limit ${limit}: a positive integer is required`);
    this.evidenceLimit = limit;
    this.verifyPool = opts.verifyPool;
  }

  /** The cosigner vkeys (type 0x04 or 0x06), one per cosign key, in line order. */
  get vkeys(): string[] {
    return this.signers.map((s) => s.vkey);
  }

  /** The vkey of the first Ed25519 (type 0x04) cosign key, if any: `/health` `cosign_vkey`. */
  get ed25519Vkey(): string | undefined {
    return this.signers.find((s) => s.type === SIG_TYPE_COSIGNATURE_V1)?.vkey;
  }

  /**
   * The ML-DSA-44 cosign keys, in `--cosign-key` order (for sign-subtree, SPEC §5.4: which of
   * them signed a checkpoint, by name and key ID, and their public keys to verify it).
   */
  get mlDsaCosigners(): readonly { readonly keyId: number; readonly publicKey: Uint8Array; readonly vkey: string }[] {
    return this.signers.filter((s) => s.type === SIG_TYPE_SUBTREE_V1).map(({ keyId, publicKey, vkey }) => ({ keyId, publicKey, vkey }));
  }

  /**
   * A subtree/v1 line by the ML-DSA-44 cosign key with `keyId`, under the witness name, over
   * `subtree` at `timestamp` (0 for sign-subtree), signed on the worker pool when there is one.
   * Throws NoteError `invalid_subtree_message` for fields the format refuses.
   */
  async subtreeLine(
    keyId: number,
    subtree: { origin: string; start: bigint; end: bigint; hash: Uint8Array },
    timestamp: bigint | number = 0,
  ): Promise<string> {
    const signer = this.signers.find((s) => s.type === SIG_TYPE_SUBTREE_V1 && s.keyId === keyId);
    if (signer?.key === undefined) throw new Error(`no ML-DSA-44 cosign key with key ID ${keyId.toString(16).padStart(8, '0')}`);
    const message = subtreeMessage({ name: this.name, timestamp, ...subtree });
    const pool = this.verifyPool;
    const signature = pool === undefined ? signMlDsa44(signer.key, message) : await pool.signMlDsa44(signer.key, message);
    return formatSignatureLine({ name: this.name, keyId, signature: encodeSubtreeSignatureBytes(timestamp, signature) });
  }

  /** Whether an ML-DSA-44 cosign key is configured (then extension lines are refused, SPEC §5.3). */
  get hasMlDsaKey(): boolean {
    return this.signers.some((s) => s.type === SIG_TYPE_SUBTREE_V1);
  }

  /** Handle one add-checkpoint request body. Store failures (StoreUnavailableError) propagate. */
  async addCheckpoint(body: Uint8Array | string): Promise<AddCheckpointOutcome> {
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
    const log = this.logs().get(checkpoint.origin);
    if (log === undefined) return reject(404, 'unknown_origin', 'unknown log: this witness does not cosign for that origin', undefined);
    const origin = log.origin;
    // ... and not a state made under other log keys (read here: evidence needs it after check 3)
    const state = await this.store.getOrigin(origin);
    if (keyConflict(state, log)) return keyConflictRejection(origin);
    // 3. signatures
    let verified: VerifiedNote;
    try {
      const pool = this.verifyPool;
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
    const kept = await this.keepEvidence(origin, req, verified, state);
    // 3a. an ML-DSA-44 cosignature cannot cover extension lines (nor an origin over 255 bytes)
    if (this.hasMlDsaKey) {
      try {
        checkpointStatement(this.name, req.note.text, 1);
      } catch (e) {
        if (e instanceof NoteError)
          return reject(400, 'ml_dsa_unsignable', `checkpoint cannot be ML-DSA-44 cosigned: ${e.message}`, origin);
        throw e;
      }
    }
    // 4. quota
    const retryAfter = this.quota.take(origin, log.qpd, this.now());
    if (retryAfter !== null) {
      return reject(429, 'quota_exceeded', `quota of ${log.qpd} requests per day exceeded for this log`, origin, retryAfter);
    }
    // 5. old ≤ new
    if (req.oldSize > checkpoint.size) {
      return reject(400, 'old_size_too_large', `old size ${req.oldSize} is larger than the checkpoint size ${checkpoint.size}`, origin);
    }
    return this.lock.run(origin, () => this.commit(log, req, verified, kept));
  }

  /**
   * Checks 6–10 under the origin's lock. `kept`: the checkpoint is already evidence; if not, it is
   * checked again against each fresh state (the state may have moved to its size meanwhile).
   */
  private async commit(log: KnownLog, req: AddCheckpointRequest, verified: VerifiedNote, kept: boolean): Promise<AddCheckpointOutcome> {
    const { checkpoint, oldSize, proof } = req;
    const origin = log.origin;
    const logKeys = log.verifiers.map((v) => v.vkey);
    for (let attempt = 1; ; attempt++) {
      const state = await this.store.getOrigin(origin);
      if (keyConflict(state, log)) return keyConflictRejection(origin);
      if (!kept) kept = await this.keepEvidence(origin, req, verified, state);
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
      if (state !== undefined && this.isReplay(state, req, logKeys)) {
        return { kind: 'cosigned', status: 200, origin, size: state.size, timestamp: state.lastTime, body: state.cosignatures };
      }
      // 10. cosign, persist, answer
      const timestamp = Math.max(Math.floor(this.now() / 1000), state?.lastTime ?? 0);
      const text = req.note.text;
      const lines = (await Promise.all(this.signers.map((s) => this.cosignLine(s, text, timestamp)))).join('');
      const next: OriginState = {
        origin,
        size: checkpoint.size,
        root: checkpoint.rootHash,
        checkpoint: formatNote({ text, signatures: verified.verified.map((v) => v.signature) }),
        cosignatures: lines,
        lastTime: timestamp,
        logKeys,
        cosignerSet: this.cosignerSet,
      };
      if (await this.store.updateOrigin(storedSize, next)) {
        return { kind: 'cosigned', status: 200, origin, size: checkpoint.size, timestamp, body: lines };
      }
      if (attempt >= MAX_CAS_ATTEMPTS) {
        const now = await this.store.getOrigin(origin);
        return { kind: 'conflict', status: 409, origin, size: now?.size ?? 0 };
      }
    }
  }

  /**
   * Whether a request (that passed checks 1–9) is a replay answered from `state`: the stored
   * checkpoint text (so the same size and root: the stored lines sign exactly this text), `old` =
   * that size, lines made by the current cosign key set and a state bound to the current log keys
   * (else it is signed anew, which also records both).
   */
  private isReplay(state: OriginState, req: AddCheckpointRequest, logKeys: readonly string[]): boolean {
    const c = this.cosignerSet;
    return (
      req.oldSize === state.size &&
      req.checkpoint.size === state.size &&
      hashEqual(req.checkpoint.rootHash, state.root) &&
      // The stored note is its text, a blank line, signature lines; a text has no blank line.
      state.checkpoint.startsWith(req.note.text + '\n') &&
      state.cosignerSet !== undefined &&
      state.cosignerSet.length === c.length &&
      hashEqual(state.cosignerSet, c) &&
      compareKeySets(state.logKeys, logKeys, true) === 'same'
    );
  }

  /** One cosignature line of `signer` over the checkpoint text at `timestamp`. */
  private async cosignLine(signer: CosignSigner, text: string, timestamp: number): Promise<string> {
    if (signer.type === SIG_TYPE_COSIGNATURE_V1) {
      // An external key's failure rejects with its SignerError (503 signer_unavailable) before anything is stored.
      const message = cosignatureMessage(text, timestamp);
      const signature = signer.external !== undefined ? await signer.external.sign(message) : signEd25519(signer.key!, message);
      return formatSignatureLine({ name: this.name, keyId: signer.keyId, signature: encodeCosignatureBytes(timestamp, signature) });
    }
    const { origin, start, end, hash } = checkpointStatement(this.name, text, timestamp);
    return this.subtreeLine(signer.keyId, { origin, start, end, hash }, timestamp);
  }

  /**
   * Keep the checkpoint as evidence, durably, when its log signature alone proves misbehaviour
   * against `state` (see `misbehaviour`). True when it is evidence (stored now or already).
   */
  private async keepEvidence(
    origin: string,
    req: AddCheckpointRequest,
    verified: VerifiedNote,
    state: OriginState | undefined,
  ): Promise<boolean> {
    const reason = misbehaviour(req.checkpoint, state);
    if (reason === undefined) return false;
    const text = req.note.text;
    const { added, evicted } = await this.store.recordEvidence(
      {
        origin,
        hash: sha256(new TextEncoder().encode(text)),
        note: formatNote({ text, signatures: verified.verified.map((v) => v.signature) }),
        reason,
        at: Math.floor(this.now() / 1000),
      },
      this.evidenceLimit,
    );
    if (added) this.onEvidence?.(origin, reason);
    if (evicted > 0) this.onEvidenceEvicted?.(origin, evicted);
    return true;
  }

  /** The latest cosigned checkpoint of an origin with its cosignature lines (a signed note), if any. */
  async latest(origin: string): Promise<{ note: string; size: number } | undefined> {
    const state = await this.store.getOrigin(origin);
    if (state === undefined) return undefined;
    return { note: state.checkpoint + state.cosignatures, size: state.size };
  }

  /** Forget quota buckets of origins that are not in `logs` (call after a reload). */
  pruneQuota(logs: KnownLogs): void {
    this.quota.retain((o) => logs.has(o));
  }
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

/**
 * Why a validly signed checkpoint proves by itself that its log misbehaved, given the stored state
 * of the origin; undefined when it does not. A checkpoint above the stored size never does here:
 * only a consistency proof could show it, and a failing one may just be wrong.
 */
export function misbehaviour(checkpoint: Checkpoint, state: OriginState | undefined): string | undefined {
  if (checkpoint.size === 0 && !hashEqual(checkpoint.rootHash, EMPTY_ROOT)) return 'size 0 with a root other than the empty-tree root';
  if (state !== undefined && checkpoint.size === state.size && !hashEqual(checkpoint.rootHash, state.root)) {
    return `size ${state.size} was cosigned with root ${encodeBase64(state.root)}; the log signed another root for it`;
  }
  return undefined;
}
