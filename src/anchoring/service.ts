/**
 * The anchor role (SPEC §3): checks 2–6 run per request; checks 7–15 run in the sequencer, inside
 * one transaction of the witness log per batch (src/log/log.ts appends the batch's entries and
 * signs the checkpoint; the seed records go into the same store transaction): group commit. Every
 * request that arrives while a batch commits joins the next one, so the durable commit (an fsync)
 * is shared. Within a batch, requests are decided in arrival order against the committed state
 * plus the batch's own earlier decisions, so the outcome never depends on a race. The anchor, its cosignature, its log entry and the new
 * checkpoint commit together before any reply.
 *
 * The queue is bounded by the HTTP in-flight limit: a request that is abandoned (its deadline passed
 * and it got 408, or its client went away) while its anchor still waits for a batch is dropped from
 * the queue; it never reaches the store and no reply for it is ever sent. Once its batch has started
 * it commits as usual (a 408 means "outcome unknown"; an identical resend gets the replay).
 */
import type { KeyObject } from 'node:crypto';
import { checkParty, checkTimestamp, decideAgainstSeed, signatureRejection } from '../anchor/accept.ts';
import type { Rejection, SeedState } from '../anchor/accept.ts';
import { encodeAnchor, encodeDuplicityProof } from '../anchor/codec.ts';
import { duplicityEntry } from '../anchor/duplicity.ts';
import { cosignMessage, partyMessage } from '../anchor/messages.ts';
import { verifyPartySignature } from '../anchor/party-signature.ts';
import type { Ed25519VerifyPool } from '../crypto/verify-pool.ts';
import type { Registry, RegistryParty } from '../anchor/registry.ts';
import type { Anchor, AnchorWire, DuplicityProof, DuplicityProofWire, PartyClaim } from '../anchor/types.ts';
import { ed25519PublicKeyBytes, signEd25519 } from '../crypto/ed25519.ts';
import { encodeHex } from '../encoding/hex.ts';
import { formatTimestamp } from '../encoding/time.ts';
import type { LogBatch } from '../log/batch.ts';
import type { InclusionBody, TransparencyLog } from '../log/log.ts';
import type { PartyUsage, SeedRecord, SignedCheckpoint, StoreTransaction, WitnessStore } from '../store/types.ts';
import { DAY, insertSorted, MINUTE, quotaRetryAfter, type QuotaDefaults } from './quota.ts';
import { SeedCache, UsageCache } from './committed-cache.ts';
import { AnchorAbandonedError } from './errors.ts';

export interface CosignatureBody {
  witness_name: string;
  witness_public_key: string;
  signature: string;
  timestamp: string;
}

export interface AnchorResponse {
  anchor: AnchorWire;
  cosignature: CosignatureBody;
  inclusion: InclusionBody;
  replay: boolean;
}

export type SubmitOutcome =
  | { kind: 'cosigned'; body: AnchorResponse }
  | { kind: 'duplicity'; proof: DuplicityProofWire; isNew: boolean }
  | { kind: 'rejected'; rejection: Rejection };

export interface AnchorServiceOptions {
  /** Anchor-chain state (seed records, quota windows, duplicity proofs). */
  store: WitnessStore;
  /** The witness log, on the same store: each batch's entries commit with its seed records. */
  log: TransparencyLog;
  witnessKey: KeyObject;
  name: string;
  registry: () => Registry;
  allowUnderivedSeeds: boolean;
  quota: QuotaDefaults;
  now?: () => number;
  maxBatch?: number;
  /**
   * Verify Ed25519 party signatures on worker threads (the rules are the same; the arithmetic moves
   * off the event loop). When the pool was made with the witness key, a verified anchor's cosign
   * message is signed on the same trip (used only if the anchor is co-signed; dropped otherwise).
   */
  verifyPool?: Ed25519VerifyPool;
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

interface Pending {
  anchor: Anchor;
  /** The cosign message (log entry) of `anchor`. */
  message: Uint8Array;
  /** Its signature by the witness key, made speculatively with the party-signature check. */
  presigned: Uint8Array | undefined;
  claim: PartyClaim;
  party: RegistryParty;
  now: number;
  resolve: (o: Decided) => void;
  reject: (e: unknown) => void;
  /** The request's abandonment signal and the listener that drops this entry from the queue. */
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

type Decided =
  | { kind: 'cosigned'; record: SeedRecord; replay: boolean; checkpoint: SignedCheckpoint; batch: LogBatch | undefined }
  | { kind: 'duplicity'; proof: DuplicityProof; isNew: boolean }
  | { kind: 'rejected'; rejection: Rejection };

const hex = encodeHex;
/** A function, not an inline test: the signal may abort during an await between two checks. */
const abandoned = (signal: AbortSignal | undefined): boolean => signal?.aborted === true;

export class AnchorService {
  private readonly opts: AnchorServiceOptions;
  private readonly publicKeyHex: string;
  private readonly now: () => number;
  /** Waiting for the next batch, in arrival order (a Set: an abandoned entry leaves in O(1)). */
  private readonly queue = new Set<Pending>();
  private draining = false;
  private readonly seedCache: SeedCache | undefined;
  private readonly usageCache: UsageCache | undefined;

  constructor(opts: AnchorServiceOptions) {
    this.opts = opts;
    this.publicKeyHex = hex(ed25519PublicKeyBytes(opts.witnessKey));
    this.now = opts.now ?? (() => Math.floor(Date.now() / 1000));
    if (opts.cache ?? !opts.store.capabilities.multiWriter) {
      this.seedCache = new SeedCache();
      this.usageCache = new UsageCache();
    }
  }

  /**
   * Requests waiting in the sequencer for the next batch (not counting the batch being committed).
   * Read-only; the node reports it as the `anchor_queue_depth` gauge.
   */
  get queueDepth(): number {
    return this.queue.size;
  }

  /** Sign the size-0 checkpoint on first start. */
  initLog(): Promise<SignedCheckpoint> {
    return this.opts.log.init();
  }

  /**
   * Decide one anchor. `signal` (the request's deadline signal) aborts when the request is
   * abandoned: if the anchor is still queued then, it is dropped and this rejects with
   * AnchorAbandonedError; once its batch started it is decided and committed as usual.
   */
  async submit(anchor: Anchor, claim: PartyClaim, signal?: AbortSignal): Promise<SubmitOutcome> {
    if (abandoned(signal)) throw new AnchorAbandonedError();
    const now = this.now();
    const pre = checkParty(anchor, claim, this.opts.registry());
    if ('outcome' in pre) return { kind: 'rejected', rejection: pre };
    const pool = this.opts.verifyPool;
    const message = cosignMessage(anchor);
    let valid: boolean;
    let presigned: Uint8Array | undefined;
    if (pool !== undefined && anchor.sigParty.curve === 'ed25519') {
      if (pool.signingPublicKey === this.publicKeyHex) {
        ({ valid, signature: presigned } = await pool.verifyAndSign(anchor.sigParty.publicKey, partyMessage(anchor), anchor.sigParty.signature, message));
      } else {
        valid = await pool.verify(anchor.sigParty.publicKey, partyMessage(anchor), anchor.sigParty.signature);
      }
    } else {
      valid = verifyPartySignature(anchor);
    }
    const late = signatureRejection(valid) ?? checkTimestamp(anchor, now);
    if (late !== null) return { kind: 'rejected', rejection: late };
    // The verification may have outlived the request: an abandoned one never joins the queue.
    if (abandoned(signal)) throw new AnchorAbandonedError();
    const decided = await new Promise<Decided>((resolve, reject) => {
      const p: Pending = { anchor, message, presigned, claim, party: pre.party, now, resolve, reject, signal, onAbort: undefined };
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
    if (decided.kind === 'duplicity') return { kind: 'duplicity', proof: encodeDuplicityProof(decided.proof), isNew: decided.isNew };
    if (decided.kind !== 'cosigned') return decided;
    return { kind: 'cosigned', body: await this.responseBody(decided.record, decided.replay, decided.checkpoint, decided.batch) };
  }

  /** The reply to a co-signed anchor; with the batch that committed `checkpoint`, the proof comes from memory. */
  async responseBody(record: SeedRecord, replay: boolean, checkpoint: SignedCheckpoint, batch?: LogBatch): Promise<AnchorResponse> {
    return {
      anchor: encodeAnchor(record.latest),
      cosignature: {
        witness_name: this.opts.name,
        witness_public_key: this.publicKeyHex,
        signature: hex(record.cosignature.signature),
        timestamp: formatTimestamp(record.cosignature.timestamp),
      },
      inclusion: await this.opts.log.inclusionBody(record.cosignature.leafIndex, checkpoint, batch),
      replay,
    };
  }

  /** GET /v1/anchor/{seed}: the latest co-signed anchor with a current inclusion proof. */
  async latest(seedId: Uint8Array): Promise<(Omit<AnchorResponse, 'replay'> & { duplicity: boolean }) | undefined> {
    const record = await this.opts.store.anchors.getSeed(seedId);
    if (record === undefined) return undefined;
    const checkpoint = await this.opts.log.checkpoint();
    if (checkpoint === undefined) return undefined;
    const { anchor, cosignature, inclusion } = await this.responseBody(record, false, checkpoint);
    return { anchor, cosignature, inclusion, duplicity: record.duplicity !== undefined };
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.size > 0) {
        const batch = this.takeBatch(this.opts.maxBatch ?? 512);
        try {
          const started = performance.now();
          const { value, checkpoint, batch: logBatch } = await this.opts.log.transaction((tx, appender) => this.decideBatch(tx, appender, batch));
          const { results, seeds, usage } = value;
          const seconds = (performance.now() - started) / 1000;
          // Committed: only now may the caches learn this batch's state.
          for (const [key, record] of seeds) this.seedCache?.set(key, record ?? null);
          for (const [party, use] of usage) this.usageCache?.set(party, use);
          this.usageCache?.commit();
          if (checkpoint !== undefined) {
            try {
              this.opts.onCommit?.({ cosigned: value.cosigned, duplicities: value.duplicities, size: checkpoint.size, requests: batch.length, seconds });
            } catch {
              // Metrics and logs must never turn a committed batch into failed requests.
            }
          }
          // Co-signed anchors get the checkpoint this batch signed (proofs from the batch's nodes),
          // replays in a batch that appended nothing the latest stored one.
          const cp = checkpoint ?? value.latest;
          const proofs = checkpoint === undefined ? undefined : logBatch;
          batch.forEach((p, i) => {
            const r = results[i]!;
            p.resolve(typeof r === 'function' ? r(cp!, proofs) : r);
          });
        } catch (e) {
          this.usageCache?.rollback(); // the batch may have appended to cached windows
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

  /**
   * Checks 7–15 for each request of the batch, in order, inside the log's transaction: appends go to
   * `log` (signed and stored by the log when this returns), seed records to `tx.anchors`.
   */
  private async decideBatch(
    tx: StoreTransaction,
    log: LogBatch,
    batch: Pending[],
  ): Promise<{
    /** A decision, or one that waits for the checkpoint (and the batch that signed it). */
    results: (Decided | ((cp: SignedCheckpoint, batch: LogBatch | undefined) => Decided))[];
    seeds: Map<string, SeedRecord | undefined>;
    usage: Map<string, PartyUsage>;
    cosigned: number;
    duplicities: DuplicityProof[];
    /** The latest stored checkpoint, read when the batch appended nothing but has replays. */
    latest: SignedCheckpoint | undefined;
  }> {
    const seeds = new Map<string, SeedRecord | undefined>();
    const usage = new Map<string, PartyUsage>();
    const results: (Decided | ((cp: SignedCheckpoint, batch: LogBatch | undefined) => Decided))[] = [];
    const duplicities: DuplicityProof[] = [];
    let cosigned = 0;

    for (const p of batch) {
      const key = hex(p.anchor.seedId);
      if (!seeds.has(key)) {
        const cached = this.seedCache?.get(key);
        seeds.set(key, cached === undefined ? await tx.anchors.getSeed(p.anchor.seedId) : (cached ?? undefined));
      }
      const record = seeds.get(key);
      let use = usage.get(p.party.id);
      if (use === undefined) {
        use = this.usageCache?.get(p.party.id, p.now - MINUTE, p.now - DAY) ?? (await tx.anchors.partyUsage(p.party.id, p.now - MINUTE, p.now - DAY));
        usage.set(p.party.id, use);
      }
      const partyUse = use;
      const seed: SeedState | undefined =
        record === undefined ? undefined : { latest: record.latest, owner: record.owner, ...(record.duplicity ? { duplicity: record.duplicity } : {}) };
      const decision = decideAgainstSeed(p.anchor, p.claim, p.party, {
        seed,
        allowUnderivedSeeds: this.opts.allowUnderivedSeeds,
        quotaRetryAfter: (party, newSeed) => quotaRetryAfter(party, partyUse, newSeed, p.now, this.opts.quota),
      });
      switch (decision.outcome) {
        case 'reject':
          results.push({ kind: 'rejected', rejection: decision });
          break;
        case 'frozen':
          results.push({ kind: 'duplicity', proof: decision.proof, isNew: false });
          break;
        case 'duplicity': {
          const leafIndex = log.append(duplicityEntry(decision.proof));
          await tx.anchors.putDuplicity(decision.proof, leafIndex, p.now);
          seeds.set(key, { ...record!, duplicity: decision.proof });
          duplicities.push(decision.proof);
          results.push({ kind: 'duplicity', proof: decision.proof, isNew: true });
          break;
        }
        case 'replay': {
          const r = record!;
          results.push((checkpoint) => ({ kind: 'cosigned', record: r, replay: true, checkpoint, batch: undefined }));
          break;
        }
        case 'cosign': {
          const message = p.message;
          const signature = p.presigned ?? signEd25519(this.opts.witnessKey, message);
          const leafIndex = log.append(message);
          const next: SeedRecord = {
            seedId: p.anchor.seedId,
            owner: record?.owner ?? p.party.id,
            createdAt: record?.createdAt ?? p.now,
            latest: p.anchor,
            cosignature: { signature, timestamp: p.now, leafIndex },
          };
          await tx.anchors.putSeed(next, decision.newSeed, p.party.id);
          seeds.set(key, next);
          insertSorted(partyUse.anchorTimes, p.now);
          if (decision.newSeed) insertSorted(partyUse.newSeedTimes, p.now);
          cosigned++;
          results.push((checkpoint, proofs) => ({ kind: 'cosigned', record: next, replay: false, checkpoint, batch: proofs }));
          break;
        }
      }
    }

    // The log signs the new head when this returns; a batch that appended nothing answers its
    // replays against the latest stored checkpoint.
    let latest: SignedCheckpoint | undefined;
    if (log.appended === 0 && results.some((r) => typeof r === 'function')) {
      latest = await this.opts.log.checkpoint();
      if (latest === undefined) throw new Error('the log has no checkpoint');
    }
    return { results, seeds, usage, cosigned, duplicities, latest };
  }
}
