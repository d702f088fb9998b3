/**
 * Is the store serving? One tracker per process and store, fed by the requests (a store outage
 * reported by the HTTP layer, a successful write) and by a probe, so `/health` tells the truth
 * and the log has one line per outage episode instead of a stack per refused request
 * (docs/operations.md, "Store outages").
 *
 *   up → down   at the first failure: one `error` line naming the store kind and the cause;
 *   down → up   at the first success (a request's write or the probe): one `warn` line with the
 *               outage's length and how many requests it refused.
 *
 * The probe (a trivial query) runs every `probeIntervalMs` (default 5 s) when nothing succeeded
 * in that time, never per request: it notices an outage without traffic and the recovery of an
 * idle store.
 */
import { isStoreUnavailable } from './errors.ts';

export type StoreKind = 'sqlite' | 'postgres' | 'memory';

/** What the tracker logs through (a pino or fastify logger fits). */
export interface StoreHealthLog {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface StoreHealthSnapshot {
  kind: StoreKind;
  state: 'up' | 'down';
  /** ISO time of the last change of state (the start for a store that never failed). */
  since: string;
  /** The cause of the current outage, or null while up. */
  last_error: string | null;
}

export interface StoreHealthOptions {
  probe?: () => Promise<unknown>;
  probeIntervalMs?: number;
  clock?: () => number;
}

export const STORE_PROBE_INTERVAL_MS = 5_000;

export class StoreHealth {
  readonly kind: StoreKind;
  private readonly log: StoreHealthLog;
  private readonly probe: (() => Promise<unknown>) | undefined;
  private readonly probeIntervalMs: number;
  private readonly clock: () => number;
  private down = false;
  private since: number;
  private lastSuccess: number;
  private lastError: string | null = null;
  /** Requests refused during the current outage. */
  private refused = 0;
  private timer: NodeJS.Timeout | undefined;
  private probing = false;

  constructor(kind: StoreKind, log: StoreHealthLog, opts: StoreHealthOptions = {}) {
    this.kind = kind;
    this.log = log;
    this.probe = opts.probe;
    this.probeIntervalMs = opts.probeIntervalMs ?? STORE_PROBE_INTERVAL_MS;
    this.clock = opts.clock ?? Date.now;
    this.since = this.clock();
    this.lastSuccess = this.since;
  }

  get isDown(): boolean {
    return this.down;
  }

  /** A store operation failed. Only an outage (StoreUnavailableError) changes the state; `request` counts a refused request. */
  failed(error: unknown, request = false): void {
    if (!isStoreUnavailable(error)) return;
    if (request) this.refused++;
    this.lastError = error.message;
    if (this.down) return;
    this.down = true;
    this.since = this.clock();
    this.log.error(
      { store: this.kind, cause: error.message },
      `${this.kind} store unavailable: requests that need it get 503 store_unavailable until it recovers (logged once per outage)`,
    );
  }

  /** A store operation succeeded. */
  succeeded(): void {
    const now = this.clock();
    this.lastSuccess = now;
    if (!this.down) return;
    this.down = false;
    const seconds = Math.round((now - this.since) / 100) / 10;
    this.log.warn(
      { store: this.kind, outage_seconds: seconds, refused_requests: this.refused, last_error: this.lastError },
      `${this.kind} store available again after ${seconds} s`,
    );
    this.since = now;
    this.lastError = null;
    this.refused = 0;
  }

  snapshot(): StoreHealthSnapshot {
    return {
      kind: this.kind,
      state: this.down ? 'down' : 'up',
      since: new Date(this.since).toISOString(),
      last_error: this.down ? this.lastError : null,
    };
  }

  /** Probe now (what the timer does); resolves when the probe has reported. */
  async probeNow(): Promise<void> {
    if (this.probe === undefined || this.probing) return;
    this.probing = true;
    try {
      await this.probe();
      this.succeeded();
    } catch (e) {
      this.failed(e);
    } finally {
      this.probing = false;
    }
  }

  start(): void {
    if (this.probe === undefined || this.timer !== undefined) return;
    this.timer = setInterval(() => {
      if (this.down || this.clock() - this.lastSuccess >= this.probeIntervalMs) void this.probeNow();
    }, this.probeIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
