/**
 * The cosign role's own tally of add-checkpoint outcomes, per origin: cosigned, conflict (409) and
 * refusals by code. It is where an outcome is recorded: the `cosign_add_checkpoint_total` metric is
 * fed from it, and the status page reads it (never the metrics registry, which an operator's
 * scrape setup may share, reset or replace). Bounded: the origin is a known log's or
 * `_unknown` (never a client string), the codes a closed union.
 */
import type { AddCheckpointOutcome } from './add-checkpoint.ts';
import type { CosignRejectionCode } from './errors.ts';
import { UNKNOWN_ORIGIN_LABEL, type CosignMetrics } from './metrics.ts';

export interface OriginOutcomes {
  cosigned: number;
  conflict: number;
  refused: Partial<Record<CosignRejectionCode, number>>;
}

export interface OutcomeCounts {
  /** Outcomes per origin since start (`_unknown`: requests that named no known log). */
  of(origin: string): Readonly<OriginOutcomes> | undefined;
}

export class OutcomeTally implements OutcomeCounts {
  readonly #byOrigin = new Map<string, OriginOutcomes>();
  readonly #metrics: CosignMetrics | undefined;

  constructor(metrics?: CosignMetrics) {
    this.#metrics = metrics;
  }

  /** Count one request's outcome (and feed the metrics). */
  record(outcome: AddCheckpointOutcome): void {
    const origin = outcome.origin ?? UNKNOWN_ORIGIN_LABEL;
    let t = this.#byOrigin.get(origin);
    if (t === undefined) this.#byOrigin.set(origin, (t = { cosigned: 0, conflict: 0, refused: {} }));
    if (outcome.kind === 'cosigned') t.cosigned++;
    else if (outcome.kind === 'conflict') t.conflict++;
    else t.refused[outcome.code] = (t.refused[outcome.code] ?? 0) + 1;
    if (this.#metrics === undefined) return;
    this.#metrics.requests.inc({ origin, outcome: outcome.kind === 'rejected' ? outcome.code : outcome.kind });
    if (outcome.kind === 'cosigned') this.#metrics.size.set({ origin }, outcome.size);
  }

  of(origin: string): Readonly<OriginOutcomes> | undefined {
    return this.#byOrigin.get(origin);
  }
}
