/**
 * The witnessed own log (SPEC §4.1): this node gets its own checkpoints cosigned by peer
 * witnesses over C2SP tlog-witness, and serves the newest checkpoint a quorum of them cosigned.
 *
 *   const w = await LogWitnessing.open({ log, store, witnesses, intervalMs, alertLagMs, … });
 *   w.start();                 // a round every intervalMs
 *   await w.checkpoint();      // the note GET /log/checkpoint serves
 *   w.health(size);            // /health `log_witnesses` and `warnings`
 *   await w.stop();
 *
 * A round takes the newest checkpoint C and hands it to every witness whose submitter is idle, not
 * backing off and not already holding C (submitter.ts: one request in flight per URL). Every
 * idle witness gets the same C in a round, so they converge on common checkpoints. A cosignature
 * is stored (its lines, the witness's state) before anything uses it; then the newest size
 * cosigned by ≥ quorum configured witnesses above the published one is published (persisted,
 * never decreasing). The served note is the node-signed note of that size plus every line of a
 * configured witness that verifies under its current vkeys; before the first quorum it is the
 * size-0 checkpoint signed at first start (Ed25519 is deterministic: the same bytes). Every
 * signature goes through the log signer's async path, so the witness key may be outside the
 * process (SPEC §1.1): the size-0 note is signed once at open, while the signer is known to be up.
 */
import type { Registry } from 'prom-client';
import { formatTimestamp } from '../encoding/time.ts';
import type { TransparencyLog } from '../log/log.ts';
import { parseNote } from '../note/signed-note.ts';
import { LOG_COSIGNATURES_PER_WITNESS, type LogWitnessState, type LogWitnessStorage, type SignedCheckpoint } from '../store/types.ts';
import { EMPTY_ROOT } from '../tlog/hash.ts';
import { KeyedLock } from '../store/keyed-lock.ts';
import { logWitnessQuorum, type LogWitnessSet } from './config.ts';
import { PeerFailure } from './errors.ts';
import { createLogWitnessMetrics, type LogWitnessLag, type LogWitnessMetrics } from './metrics.ts';
import { httpPeerPost, type PeerPost } from './peer-http.ts';
import { verifiedCosignatures } from './reply.ts';
import { PeerSubmitter, type ExchangeContext, type RequestOutcome } from './submitter.ts';

export const DEFAULT_LOG_WITNESS_INTERVAL_MS = 1_000;
export const DEFAULT_LOG_WITNESS_ALERT_LAG_MS = 10 * 60_000;

/** The logger calls the witnessing makes (a pino logger fits). */
export interface LogWitnessLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface LogWitnessingOptions {
  log: TransparencyLog;
  store: LogWitnessStorage;
  /** The current witnesses file (a Reloadable's snapshot). */
  witnesses: () => LogWitnessSet;
  intervalMs?: number;
  alertLagMs?: number;
  /** Injected for tests; default: fetch, 10 s deadline, 64 KiB cap, no redirects. */
  post?: PeerPost;
  nowMs?: () => number;
  metrics?: Registry;
  logger?: LogWitnessLogger;
}

/** One entry of /health `log_witnesses` (SPEC §4.1). */
export interface LogWitnessHealth {
  url: string;
  cosigned_size: number;
  last_success: string | null;
  lag_entries: number;
  lag_seconds: number;
}

/** One witness row of the status page: the /health entry and the last failure, if any (`code: message`). */
export type LogWitnessRow = LogWitnessHealth & { last_failure: string | null };

/** What each peer answered to a forked checkpoint (the test-only fault hook). */
export interface ForkedCheckpoint {
  note: string;
  replies: { url: string; cosigned: boolean; code: string | undefined; status: number | undefined }[];
}

/** Observed checkpoint sizes and when this process first saw each (for lag_seconds); bounded. */
const MAX_OBSERVATIONS = 1024;

export class LogWitnessing {
  private readonly log: TransparencyLog;
  private readonly store: LogWitnessStorage;
  private readonly witnesses: () => LogWitnessSet;
  private readonly intervalMs: number;
  private readonly alertLagMs: number;
  private readonly nowMs: () => number;
  private readonly logger: LogWitnessLogger | undefined;
  private readonly stopping = new AbortController();
  private readonly post: PeerPost;
  private readonly metrics: LogWitnessMetrics | undefined;
  private readonly submitters = new Map<string, PeerSubmitter>();
  private readonly stored: Map<string, LogWitnessState>;
  private publishedSize: number | undefined;
  private served: { note: string; size: number; set: LogWitnessSet } | undefined;
  private newest = 0;
  private observed: { size: number; atMs: number }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private roundRunning = false;
  /** One evaluation at a time. */
  private readonly evaluations = new KeyedLock<null>();

  /** The size-0 checkpoint, served before the first quorum (signed at open). */
  private readonly emptyNote: string;

  private constructor(opts: LogWitnessingOptions, states: LogWitnessState[], published: number | undefined, emptyNote: string) {
    this.emptyNote = emptyNote;
    this.log = opts.log;
    this.store = opts.store;
    this.witnesses = opts.witnesses;
    this.intervalMs = opts.intervalMs ?? DEFAULT_LOG_WITNESS_INTERVAL_MS;
    this.alertLagMs = opts.alertLagMs ?? DEFAULT_LOG_WITNESS_ALERT_LAG_MS;
    this.nowMs = opts.nowMs ?? Date.now;
    this.logger = opts.logger;
    this.post = opts.post ?? httpPeerPost({ stop: this.stopping.signal });
    this.stored = new Map(states.map((s) => [s.url, s]));
    this.publishedSize = published;
    this.metrics = opts.metrics === undefined ? undefined : createLogWitnessMetrics(opts.metrics, () => this.lags());
    if (published !== undefined) this.metrics?.published.set(published);
  }

  /** Read the stored state (witnesses, published size) and observe the newest checkpoint. */
  static async open(opts: LogWitnessingOptions): Promise<LogWitnessing> {
    const [states, published, cp, empty] = await Promise.all([
      opts.store.witnessStates(),
      opts.store.published(),
      opts.log.checkpoint(),
      opts.log.signer.signAsync({ size: 0, root: EMPTY_ROOT }),
    ]);
    const w = new LogWitnessing(opts, states, published, empty.note);
    if (cp !== undefined) w.observe(cp.size);
    w.sync();
    return w;
  }

  /** A round now, then every intervalMs. */
  start(): void {
    if (this.timer !== undefined) return;
    void this.round();
    this.timer = setInterval(() => void this.round(), this.intervalMs);
    this.timer.unref();
  }

  /** Stop the rounds, abort requests in flight and wait for the submitters to finish. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort();
    await Promise.all([...this.submitters.values()].map((s) => s.run(() => Promise.resolve())));
    await this.evaluations.run(null, () => Promise.resolve());
  }

  /** The size /log/checkpoint serves (undefined before the first quorum: size 0). */
  get published(): number | undefined {
    return this.publishedSize;
  }

  /** The witnessed checkpoint: the note GET /log/checkpoint serves. */
  async checkpoint(): Promise<string> {
    const set = this.witnesses();
    const size = this.publishedSize;
    if (size === undefined) return this.emptyNote;
    if (this.served?.size === size && this.served.set === set) return this.served.note;
    const cs = await this.store.cosigned(size);
    if (cs === undefined) return this.emptyNote; // unreachable: publish keeps its rows
    const text = parseNote(cs.note).text;
    let note = cs.note;
    for (const w of set.witnesses) {
      const lines = cs.lines.get(w.url);
      if (lines === undefined) continue;
      try {
        note += verifiedCosignatures(lines, text, w.verifiers);
      } catch {
        // a line stored under an earlier configuration of this URL: not served
      }
    }
    if (this.publishedSize === size) this.served = { note, size, set };
    return note;
  }

  /** One round: the newest checkpoint to every idle witness not holding it. */
  async round(): Promise<void> {
    if (this.roundRunning || this.stopping.signal.aborted) return;
    this.roundRunning = true;
    try {
      const cp = await this.log.checkpoint();
      if (cp === undefined) return;
      this.observe(cp.size);
      const now = this.nowMs();
      for (const s of this.sync()) {
        if (s.busy || now < s.notBeforeMs || s.holds(cp)) continue;
        void s.run(() => this.submit(s, cp));
      }
    } catch (e) {
      this.logger?.warn({ err: (e as Error).message }, 'log witnesses: round failed (store); retried at the next round');
    } finally {
      this.roundRunning = false;
    }
  }

  /** /health `log_witnesses` (configured witnesses, file order) and `warnings`. */
  health(): { log_witnesses: LogWitnessHealth[]; warnings: string[] } {
    const lags = this.lags();
    const warnings: string[] = [];
    const entries = this.sync().map((s, i): LogWitnessHealth => {
      const lag = lags[i]!;
      if (lag.seconds * 1000 > this.alertLagMs)
        warnings.push(
          `log witness ${s.url} has not cosigned the last ${lag.entries} entries for ${lag.seconds} s (alert lag ${Math.round(this.alertLagMs / 1000)} s)${s.lastFailure === undefined ? '' : `; last failure ${s.lastFailure.code}: ${s.lastFailure.message}`}`,
        );
      return {
        url: s.url,
        cosigned_size: s.state?.size ?? 0,
        last_success: s.state === undefined ? null : formatTimestamp(s.state.at),
        lag_entries: lag.entries,
        lag_seconds: lag.seconds,
      };
    });
    return { log_witnesses: entries, warnings };
  }

  /** Per configured witness, for the status page: the submitter's view. */
  witnessRows(): LogWitnessRow[] {
    const h = this.health().log_witnesses;
    return this.sync().map((s, i) => ({
      ...h[i]!,
      last_failure: s.lastFailure === undefined ? null : `${s.lastFailure.code}: ${s.lastFailure.message}`,
    }));
  }

  /**
   * TEST-ONLY fault hook (reached only through the programmatic node API's test option, never a
   * flag or variable): sign a second checkpoint of the newest size with another root, i.e. a fork
   * of the log, and offer it to every witness as an ordinary round would. Nothing is recorded.
   */
  async forkForTest(): Promise<ForkedCheckpoint> {
    const cp = await this.log.checkpoint();
    const size = cp?.size ?? 0;
    const root = Uint8Array.from(cp?.root ?? EMPTY_ROOT, (b) => b ^ 0xff);
    const forked: SignedCheckpoint = await this.log.signer.signAsync({ size, root });
    const replies = await Promise.all(
      this.sync().map((s) =>
        s.run(async () => {
          try {
            await s.exchange(forked, this.context(s));
            return { url: s.url, cosigned: true, code: undefined, status: 200 };
          } catch (e) {
            if (!(e instanceof PeerFailure)) throw e;
            return { url: s.url, cosigned: false, code: e.code, status: e.status };
          }
        }),
      ),
    );
    return { note: forked.note, replies };
  }

  // ---------------------------------------------------------------- internals

  private isStopping(): boolean {
    return this.stopping.signal.aborted;
  }

  /** The submitters of the configured witnesses, in file order (created or updated from the file). */
  private sync(): PeerSubmitter[] {
    return this.witnesses().witnesses.map((w) => {
      let s = this.submitters.get(w.url);
      if (s === undefined) {
        s = new PeerSubmitter(w.url, w.verifiers, this.stored.get(w.url));
        this.submitters.set(w.url, s);
      } else s.verifiers = w.verifiers;
      return s;
    });
  }

  private context(s: PeerSubmitter): ExchangeContext {
    return {
      proof: (a, b) => this.log.consistencyProof(a, b),
      latest: () => this.log.checkpoint(),
      post: this.post,
      count: (outcome: RequestOutcome) => this.metrics?.requests.inc({ witness: s.url, outcome }),
      nowMs: this.nowMs,
    };
  }

  private async submit(s: PeerSubmitter, cp: SignedCheckpoint): Promise<void> {
    if (this.stopping.signal.aborted) return;
    try {
      const { record } = await s.exchange(cp, this.context(s));
      await this.store.recordCosignature(record); // durable before it is used
      const state = { url: record.url, size: record.size, root: record.root, at: record.at };
      this.stored.set(s.url, state);
      s.succeeded(state);
      if (record.size === this.publishedSize) this.served = undefined;
      await this.evaluate();
    } catch (e) {
      if (e instanceof PeerFailure) {
        s.failed(e, this.nowMs());
        if (this.isStopping()) return;
        const msg =
          e.code === 'peer_state_conflict'
            ? 'log witness: peer state conflict, not followed; retried at the next round'
            : 'log witness: submission failed; backing off';
        this.logger?.warn({ witness: s.url, code: e.code, detail: e.message, retry_in_ms: Math.max(0, s.notBeforeMs - this.nowMs()) }, msg);
        return;
      }
      s.failed(new PeerFailure('peer_unavailable', `local failure: ${(e as Error).message}`), this.nowMs());
      this.logger?.warn({ witness: s.url, err: (e as Error).message }, 'log witness: could not record the cosignature; retried later');
    }
  }

  /** Publish the newest size above the published one that a quorum of configured witnesses cosigned. */
  private evaluate(): Promise<void> {
    return this.evaluations
      .run(null, async () => {
        const set = this.witnesses();
        const sizes = await this.store.cosignedSizes(this.publishedSize ?? -1, LOG_COSIGNATURES_PER_WITNESS);
        for (const size of sizes) {
          const cs = await this.store.cosigned(size);
          if (cs === undefined) continue;
          const text = parseNote(cs.note).text;
          // One vote per configured witness, whatever number of its lines verify (SPEC §4.1).
          const tally = logWitnessQuorum(set).tally((w) => {
            const lines = cs.lines.get(w.id);
            if (lines === undefined) return false;
            try {
              verifiedCosignatures(lines, text, w.keys);
              return true;
            } catch {
              return false; // not a cosignature under the current configuration
            }
          });
          if (!tally.met) continue;
          const count = tally.counted.length;
          const before = this.publishedSize;
          this.publishedSize = await this.store.publish(size);
          this.served = undefined;
          this.metrics?.published.set(this.publishedSize);
          if (before !== this.publishedSize)
            this.logger?.info(
              { size: this.publishedSize, cosigners: count, quorum: set.quorum },
              'log witnesses: witnessed checkpoint published',
            );
          return;
        }
      })
      .catch((e: unknown) => {
        this.logger?.warn({ err: (e as Error).message }, 'log witnesses: publishing failed; retried after the next cosignature');
      });
  }

  private observe(size: number): void {
    this.newest = Math.max(this.newest, size);
    const last = this.observed.at(-1);
    if (last === undefined || last.size < size) this.observed.push({ size, atMs: this.nowMs() });
    if (this.observed.length > MAX_OBSERVATIONS) {
      // Drop what every witness holds; else thin out the middle (lag_seconds stays a lower bound).
      const min = Math.min(...[...this.submitters.values()].map((s) => s.state?.size ?? -1));
      this.observed = this.observed.filter((o, i) => i === this.observed.length - 1 || o.size > min);
      if (this.observed.length > MAX_OBSERVATIONS)
        this.observed = this.observed.filter((_o, i) => i % 2 === 0 || i === this.observed.length - 1);
    }
  }

  private lags(): LogWitnessLag[] {
    const now = this.nowMs();
    return this.sync().map((s) => {
      const held = s.state?.size ?? -1;
      const entries = Math.max(0, this.newest - Math.max(held, 0));
      if (held >= this.newest) return { url: s.url, entries: 0, seconds: 0 };
      const first = this.observed.find((o) => o.size > held);
      return { url: s.url, entries, seconds: first === undefined ? 0 : Math.max(0, Math.floor((now - first.atMs) / 1000)) };
    });
  }
}
