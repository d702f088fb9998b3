/**
 * One peer witness's submitter (SPEC §4.1): at most one request in flight to its URL, the
 * witness's last cosigned size and root, and when it may be asked again (Retry-After, backoff).
 *
 * One exchange sends checkpoint C with `old` = the size the witness last cosigned (0 at first) and
 * the consistency proof from the node's own tree. A 409 names the size the witness holds: adopted
 * once within the exchange when this node had that size (≤ its tree size), never followed beyond
 * (a size this node never had, or a second 409 in a row, is `peer_state_conflict`).
 */
import { formatAddCheckpointRequest } from '../note/tlog-witness.ts';
import type { LogCosignatureRecord, LogWitnessState, SignedCheckpoint } from '../store/types.ts';
import { KeyedLock } from '../store/keyed-lock.ts';
import { hashEqual } from '../tlog/hash.ts';
import { parseNote } from '../note/signed-note.ts';
import type { NoteVerifier } from '../note/vkey.ts';
import { PeerFailure } from './errors.ts';
import type { PeerPost } from './peer-http.ts';
import { parseConflictSize, verifiedCosignatures } from './reply.ts';

/** Backoff after a failure: 1 s doubling to 5 min; a Retry-After is honoured up to 1 h. */
export const BACKOFF_BASE_MS = 1_000;
export const BACKOFF_MAX_MS = 5 * 60_000;
export const RETRY_AFTER_MAX_MS = 60 * 60_000;

/** A request's outcome label (metric `log_witness_requests_total{witness,outcome}`). */
export type RequestOutcome =
  'cosigned' | 'conflict' | 'peer_state_conflict' | 'rate_limited' | 'rejected' | 'unavailable' | 'unreachable' | 'invalid_response';

export interface ExchangeContext {
  /** RFC 6962 consistency proof between two sizes of the node's own tree. */
  proof(oldSize: number, newSize: number): Promise<Uint8Array[]>;
  /** The node's newest signed checkpoint. */
  latest(): Promise<SignedCheckpoint | undefined>;
  post: PeerPost;
  /** Counted once per HTTP request. */
  count(outcome: RequestOutcome): void;
  nowMs(): number;
}

export interface ExchangeResult {
  /** The checkpoint the witness cosigned and the lines that verified. */
  record: LogCosignatureRecord;
}

function outcomeOf(status: number): { outcome: RequestOutcome; failure: PeerFailure['code'] } {
  if (status === 429) return { outcome: 'rate_limited', failure: 'peer_rate_limited' };
  if (status >= 500) return { outcome: 'unavailable', failure: 'peer_unavailable' };
  return { outcome: 'rejected', failure: 'peer_rejected' };
}

export class PeerSubmitter {
  readonly url: string;
  verifiers: readonly NoteVerifier[];
  /** What the witness last cosigned (from the store at start, then from its answers). */
  state: LogWitnessState | undefined;
  /** Not asked again before this time (ms). */
  notBeforeMs = 0;
  /** Consecutive failures (the backoff exponent). */
  failures = 0;
  lastFailure: PeerFailure | undefined;
  /** One exchange at a time with this witness. */
  private readonly lock = new KeyedLock<null>();

  constructor(url: string, verifiers: readonly NoteVerifier[], state: LogWitnessState | undefined) {
    this.url = url;
    this.verifiers = verifiers;
    this.state = state;
  }

  /** A request is in flight or queued. */
  get busy(): boolean {
    return this.lock.pending(null) > 0;
  }

  /** Whether the witness already holds checkpoint `cp`. */
  holds(cp: SignedCheckpoint): boolean {
    return this.state !== undefined && this.state.size === cp.size && hashEqual(this.state.root, cp.root);
  }

  /** Run `fn` after every earlier exchange of this submitter (never two requests in flight). */
  run<T>(fn: () => Promise<T>): Promise<T> {
    return this.lock.run(null, fn);
  }

  /** After a success: no backoff. */
  succeeded(state: LogWitnessState): void {
    this.state = state;
    this.failures = 0;
    this.notBeforeMs = 0;
    this.lastFailure = undefined;
  }

  /** After a failure: when to ask again. A state conflict is retried at the next round. */
  failed(f: PeerFailure, nowMs: number): void {
    this.lastFailure = f;
    if (f.code === 'peer_state_conflict') {
      this.notBeforeMs = 0;
      return;
    }
    if (f.code === 'peer_rate_limited' && f.retryAfterMs !== undefined) {
      this.notBeforeMs = nowMs + Math.min(f.retryAfterMs, RETRY_AFTER_MAX_MS);
      return;
    }
    this.notBeforeMs = nowMs + Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.min(this.failures, 20));
    this.failures++;
  }

  /**
   * Send `target` (from `oldSize`, default the witness's last cosigned size). Resolves with the
   * verified cosignature; throws PeerFailure. Does not change this submitter's state.
   */
  async exchange(target: SignedCheckpoint, ctx: ExchangeContext, oldSize = this.state?.size ?? 0): Promise<ExchangeResult> {
    let cp = target;
    let old = oldSize;
    for (let attempt = 1; ; attempt++) {
      if (old > cp.size) throw new PeerFailure('peer_state_conflict', `the witness holds size ${old}, above checkpoint ${cp.size}`);
      const proof = old === 0 || old === cp.size ? [] : await ctx.proof(old, cp.size);
      let reply;
      try {
        reply = await ctx.post(`${this.url}add-checkpoint`, formatAddCheckpointRequest(old, proof, cp.note));
      } catch (e) {
        if (e instanceof PeerFailure) ctx.count(e.code === 'peer_unreachable' ? 'unreachable' : 'invalid_response');
        throw e;
      }
      if (reply.status === 200) {
        let lines: string;
        try {
          lines = verifiedCosignatures(reply.body, parseNote(cp.note).text, this.verifiers);
        } catch (e) {
          ctx.count('invalid_response');
          throw e;
        }
        ctx.count('cosigned');
        return { record: { url: this.url, size: cp.size, root: cp.root, at: Math.floor(ctx.nowMs() / 1000), note: cp.note, lines } };
      }
      if (reply.status === 409) {
        let size: number;
        try {
          size = parseConflictSize(reply.body);
        } catch (e) {
          ctx.count('invalid_response');
          throw e;
        }
        if (attempt > 1) {
          ctx.count('peer_state_conflict');
          throw new PeerFailure('peer_state_conflict', `a second 409 in a row (the witness now says size ${size})`, 409);
        }
        if (size > cp.size) {
          // Sizes up to the node's newest checkpoint are sizes it had: continue from there.
          const latest = await ctx.latest();
          if (latest === undefined || size > latest.size) {
            ctx.count('peer_state_conflict');
            throw new PeerFailure('peer_state_conflict', `the witness claims size ${size}, which this log never had`, 409);
          }
          cp = latest;
        }
        ctx.count('conflict');
        old = size;
        continue;
      }
      const { outcome, failure } = outcomeOf(reply.status);
      ctx.count(outcome);
      const detail = reply.body.slice(0, 200).replace(/[\r\n]+/g, ' ');
      throw new PeerFailure(failure, `HTTP ${reply.status}${detail === '' ? '' : `: ${detail}`}`, reply.status, reply.retryAfterMs);
    }
  }
}
