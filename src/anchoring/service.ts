/**
 * The anchor role (SPEC §3): a sequencer with group commit. A request's party signature is checked
 * first (on the verify pool's worker threads, which also sign the cosign message speculatively);
 * then the request waits for the next batch, which decides every waiting request in arrival order
 * inside one transaction of the witness log (src/anchoring/batch.ts) and commits the anchors, their
 * cosignatures, log entries and the new checkpoint together before any reply. Requests that arrive
 * while a batch commits join the next one, so the durable commit (an fsync) is shared.
 *
 * The queue is bounded by the HTTP in-flight limit: a request that is abandoned (its deadline passed
 * and it got 408, or its client went away) while it still waits for a batch is dropped from the
 * queue; it never reaches the store and no reply for it is ever sent. Once its batch has started
 * it commits as usual (a 408 means "outcome unknown"; an identical resend gets the replay).
 */
import type { KeyObject } from 'node:crypto';
import { claimedParty, isCurrentKey, type AcceptancePolicy, type Rejection } from '../anchor/accept.ts';
import { cosignMessage, partyMessage } from '../anchor/messages.ts';
import { verifyPartySignature } from '../anchor/party-signature.ts';
import type { Registry } from '../anchor/registry.ts';
import type { Anchor, DuplicityProof, PartyClaim } from '../anchor/types.ts';
import { ed25519PublicKeyBytes, signEd25519 } from '../crypto/ed25519.ts';
import { encodeHex } from '../encoding/hex.ts';
import type { InclusionBody, TransparencyLog } from '../log/log.ts';
import type { SeedRecord, SignedCheckpoint, WitnessStore } from '../store/types.ts';
import { decideBatch, type Decided, type Pending } from './batch.ts';
import { SeedCache } from './committed-cache.ts';
import { AnchorAbandonedError } from './errors.ts';
import { QuotaWindows } from './quota.ts';
import type { SignaturePool } from './verify-pool.ts';
import { mark, tracing } from './trace.ts';
import { isSigner, type Signer } from '../keys/signer.ts';

/** What a submission came to; src/anchoring/reply.ts encodes it. */
export type SubmitOutcome =
  | { kind: 'cosigned'; record: SeedRecord; replay: boolean; inclusion: InclusionBody; next?: NextCosignature | undefined }
  | { kind: 'duplicity'; proof: DuplicityProof; isNew: boolean }
  | { kind: 'rejected'; rejection: Rejection };

/** The next witness key's cosignature of an anchor during a rotation overlap (SPEC §1.2 `cosignature_next`). */
export interface NextCosignature {
  publicKeyHex: string;
  signature: Uint8Array;
}

/** The witness as its cosignatures name it. */
export interface WitnessIdentity {
  name: string;
  publicKeyHex: string;
}

export interface AnchorServiceOptions extends AcceptancePolicy {
  /** The witness log, made on the store that also keeps the anchor-chain state: both commit in one transaction. */
  log: TransparencyLog<WitnessStore>;
  /**
   * The witness key: in the process (a KeyObject; workers may sign on the verification trip), or
   * outside it (a Signer from src/keys, SPEC §1.1): then workers only verify, and a verified
   * anchor's cosign message is signed here, after verification and before the commit; the
   * signature stays in memory unless the anchor commits. A signer failure fails only that request
   * (503 `signer_unavailable`, nothing committed for it).
   */
  witnessKey: KeyObject | Signer;
  /**
   * The next witness key during a rotation overlap (SPEC §1.2): every 200 body adds its
   * deterministic signature over the same cosign message (`cosignature_next`).
   */
  nextKey?: KeyObject | Signer | undefined;
  /** A witness key was retired (SPEC §1.2): replays and reads carry the current key's signature over the stored message. */
  resignStored?: boolean;
  name: string;
  registry: () => Registry;
  now?: () => number;
  maxBatch?: number;
  /**
   * Verify Ed25519 party signatures on worker threads (the rules are the same; the arithmetic moves
   * off the event loop). When the pool was made with the witness key, a verified anchor's cosign
   * message is signed on the same trip (used only if the anchor is co-signed; dropped otherwise).
   */
  verifyPool?: SignaturePool;
  /** Cache committed seed records and quota windows in memory (default: unless the store declares several writers). */
  cache?: boolean;
  /**
   * Called after each batch that wrote to the log, once it committed (metrics, logs): what it
   * added, the new log size, how many requests the batch decided, and how long its store
   * transaction took (decisions, writes, checkpoint signature and the durable COMMIT).
   */
  onCommit?: (event: CommitEvent) => void;
}

export interface CommitEvent {
  cosigned: number;
  duplicities: DuplicityProof[];
  size: number;
  requests: number;
  seconds: number;
}

/** A function, not an inline test: the signal may abort during an await between two checks. */
const abandoned = (signal: AbortSignal | undefined): boolean => signal?.aborted === true;

export class AnchorService {
  /** The witness as its replies name it. */
  readonly witness: WitnessIdentity;
  private readonly opts: AnchorServiceOptions;
  private readonly log: TransparencyLog<WitnessStore>;
  private readonly now: () => number;
  /** Waiting for the next batch, in arrival order (a Set: an abandoned entry leaves in O(1)). */
  private readonly queue = new Set<Pending>();
  private draining = false;
  private readonly seedCache: SeedCache | undefined;
  private readonly quota: QuotaWindows;

  constructor(opts: AnchorServiceOptions) {
    this.opts = opts;
    this.log = opts.log;
    const key = opts.witnessKey;
    this.witness = { name: opts.name, publicKeyHex: encodeHex(isSigner(key) ? key.publicKey : ed25519PublicKeyBytes(key)) };
    this.now = opts.now ?? (() => Math.floor(Date.now() / 1000));
    const cache = opts.cache ?? !opts.log.store.capabilities.multiWriter;
    this.seedCache = cache ? new SeedCache() : undefined;
    this.quota = new QuotaWindows(cache);
  }

  /**
   * Requests waiting in the sequencer for the next batch (not counting the batch being committed).
   * Read-only; the node reports it as the `anchor_queue_depth` gauge.
   */
  get queueDepth(): number {
    return this.queue.size;
  }

  /**
   * Decide one anchor. `signal` (the request's deadline signal) aborts when the request is
   * abandoned: if the anchor is still queued then, it is dropped and this rejects with
   * AnchorAbandonedError; once its batch started it is decided and committed as usual.
   */
  async submit(anchor: Anchor, claim: PartyClaim, signal?: AbortSignal): Promise<SubmitOutcome> {
    if (abandoned(signal)) throw new AnchorAbandonedError();
    const now = this.now();
    const registry = this.opts.registry();
    const party = claimedParty(registry, claim);
    // Both messages once per request: check 5 and the replay comparison use the party message, the
    // cosignature and the log entry the cosign message.
    const signed = partyMessage(anchor);
    const message = cosignMessage(anchor);
    // Check 5's arithmetic, spent only on a current key of the claimed party: for any other key the
    // rules refuse at check 2 or 4 and never read the verdict.
    let signatureValid = false;
    let presigned: Uint8Array | undefined;
    if (party !== undefined && isCurrentKey(party, anchor.sigParty)) {
      const pool = this.opts.verifyPool;
      if (pool !== undefined && anchor.sigParty.curve === 'ed25519') {
        const sig = anchor.sigParty;
        if (pool.signingPublicKey === this.witness.publicKeyHex) {
          ({ valid: signatureValid, signature: presigned } = await pool.verifyAndSign(sig.publicKey, signed, sig.signature, message));
        } else {
          signatureValid = await pool.verify(sig.publicKey, signed, sig.signature);
        }
      } else {
        signatureValid = verifyPartySignature(anchor, signed);
      }
    }
    // An external witness key signs a verified anchor's cosign message here (SPEC §1.1); a failure
    // is kept and thrown only if this request turns out to need a new cosignature.
    let signerError: unknown;
    const witnessKey = this.opts.witnessKey;
    if (signatureValid && presigned === undefined && isSigner(witnessKey)) {
      try {
        presigned = await witnessKey.sign(message);
      } catch (e) {
        signerError = e;
      }
    }
    // The verification may have outlived the request: an abandoned one never joins the queue.
    if (abandoned(signal)) throw new AnchorAbandonedError();
    const decided = await new Promise<Decided>((resolve, reject) => {
      const p: Pending = {
        anchor,
        claim,
        signatureValid,
        partyMessage: signed,
        registry,
        party,
        now,
        message,
        presigned,
        signerError,
        resolve,
        reject,
        signal,
        onAbort: undefined,
      };
      if (signal !== undefined) {
        p.onAbort = () => {
          if (this.queue.delete(p)) reject(new AnchorAbandonedError());
        };
        signal.addEventListener('abort', p.onAbort, { once: true });
      }
      this.queue.add(p);
      if (!this.draining) {
        this.draining = true;
        setImmediate(() => void this.drain());
      }
    });
    if (decided.kind === 'signer_failed') throw decided.error;
    if (decided.kind !== 'cosigned') return decided;
    const { checkpoint, batch } = decided;
    const { record, next } = await this.witnessSignatures(decided.record, decided.replay);
    // With the batch that committed `checkpoint`, the proof comes from memory.
    const inclusion = await this.log.inclusionBody(record.cosignature.leafIndex, checkpoint, batch);
    return { kind: 'cosigned', record, replay: decided.replay, inclusion, next };
  }

  /**
   * SPEC §1.2: the next key's signature over the stored cosign message during an overlap, and after
   * a completed rotation the current key's over a stored (older key's) one. Stored at first need
   * (store.putWitnessCosignature, durable before the reply) and served from the store after that,
   * so a replay or a read answers the first 200's bytes even while that key's signer is away.
   */
  private async witnessSignatures(record: SeedRecord, stored: boolean): Promise<{ record: SeedRecord; next?: NextCosignature }> {
    const { nextKey, resignStored } = this.opts;
    if (nextKey === undefined && !(resignStored === true && stored)) return { record };
    const store = this.log.store;
    const leaf = record.cosignature.leafIndex;
    const message = cosignMessage(record.latest);
    const cosignature = async (key: KeyObject | Signer, publicKeyHex: string, primary?: Uint8Array): Promise<Uint8Array> => {
      const kept = await store.witnessCosignature(leaf, publicKeyHex);
      if (kept !== undefined) return kept;
      const signature = isSigner(key) ? await key.sign(message) : signEd25519(key, message);
      // The record's own cosignature (this key co-signed the anchor) needs no second copy.
      if (primary !== undefined && Buffer.compare(primary, signature) === 0) return signature;
      return store.putWitnessCosignature(leaf, publicKeyHex, signature);
    };
    const rec =
      resignStored === true && stored
        ? {
            ...record,
            cosignature: {
              ...record.cosignature,
              signature: await cosignature(this.opts.witnessKey, this.witness.publicKeyHex, record.cosignature.signature),
            },
          }
        : record;
    if (nextKey === undefined) return { record: rec };
    const publicKeyHex = encodeHex(isSigner(nextKey) ? nextKey.publicKey : ed25519PublicKeyBytes(nextKey));
    return { record: rec, next: { publicKeyHex, signature: await cosignature(nextKey, publicKeyHex) } };
  }

  /** GET /v1/anchor/{seed}: the latest co-signed anchor with a current inclusion proof. */
  async latest(seedId: Uint8Array): Promise<{ record: SeedRecord; inclusion: InclusionBody; next?: NextCosignature } | undefined> {
    const stored = await this.log.store.anchors.getSeed(seedId);
    if (stored === undefined) return undefined;
    const checkpoint = await this.log.checkpoint();
    if (checkpoint === undefined) return undefined;
    const { record, next } = await this.witnessSignatures(stored, true);
    return { record, inclusion: await this.log.inclusionBody(record.cosignature.leafIndex, checkpoint), next };
  }

  /** The stored duplicity proof of a seed. */
  duplicity(seedId: Uint8Array): Promise<DuplicityProof | undefined> {
    return this.log.store.anchors.getDuplicity(seedId);
  }

  /** Stored duplicity proofs in seed order, `after` exclusive. */
  duplicities(after: Uint8Array | undefined, limit: number): Promise<DuplicityProof[]> {
    return this.log.store.anchors.listDuplicities(after, limit);
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.size > 0) {
        const batch = this.takeBatch(this.opts.maxBatch ?? 512);
        const quota = this.quota.batch();
        try {
          const started = performance.now();
          const {
            value,
            checkpoint,
            batch: logBatch,
          } = await this.log.transaction(async (tx, appender) => {
            const decisions = await decideBatch(
              {
                witnessKey: isSigner(this.opts.witnessKey) ? undefined : this.opts.witnessKey,
                policy: this.opts,
                seedCache: this.seedCache,
                quota,
              },
              tx,
              appender,
              batch,
            );
            // A batch that appended nothing answers its replays against the latest stored checkpoint.
            let latest: SignedCheckpoint | undefined;
            if (appender.appended === 0 && decisions.results.some((r) => typeof r === 'function')) {
              latest = await this.log.checkpoint();
              if (latest === undefined) throw new Error('the log has no checkpoint');
            }
            return { ...decisions, latest };
          });
          const seconds = (performance.now() - started) / 1000;
          if (tracing()) mark('batch_commit', started, batch.length);
          const answering = tracing() ? performance.now() : 0;
          // Committed: only now may the caches learn this batch's state.
          for (const [key, record] of value.seeds) this.seedCache?.set(key, record ?? null);
          quota.committed();
          if (checkpoint !== undefined) {
            try {
              this.opts.onCommit?.({
                cosigned: value.cosigned,
                duplicities: value.duplicities,
                size: checkpoint.size,
                requests: batch.length,
                seconds,
              });
            } catch {
              // Metrics and logs must never turn a committed batch into failed requests.
            }
          }
          // Co-signed anchors get the checkpoint this batch signed (proofs from the batch's nodes),
          // replays in a batch that appended nothing the latest stored one.
          const cp = checkpoint ?? value.latest;
          const proofs = checkpoint === undefined ? undefined : logBatch;
          batch.forEach((p, i) => {
            const r = value.results[i]!;
            p.resolve(typeof r === 'function' ? r(cp!, proofs) : r);
          });
          if (answering !== 0) mark('batch_answer', answering, batch.length);
        } catch (e) {
          quota.failed();
          for (const p of batch) p.reject(e);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  /** Move up to `max` of the oldest queued requests into a batch; from here on they are decided. */
  private takeBatch(max: number): Pending[] {
    const batch: Pending[] = [];
    for (const p of this.queue) {
      if (batch.length >= max) break;
      this.queue.delete(p);
      if (p.onAbort !== undefined) p.signal?.removeEventListener('abort', p.onAbort);
      batch.push(p);
    }
    return batch;
  }
}
