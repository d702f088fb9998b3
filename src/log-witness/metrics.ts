/**
 * Metrics of the witnessed own log (SPEC §4.1), on the node's registry:
 *
 *   log_witness_requests_total{witness,outcome}   counter; witness = the configured URL; outcome =
 *                                                 cosigned | conflict | peer_state_conflict |
 *                                                 rate_limited | rejected | unavailable |
 *                                                 unreachable | invalid_response
 *   log_witness_lag_entries{witness}              gauge, newest tree size − size the witness cosigned
 *   log_witness_lag_seconds{witness}              gauge, how long the witness has been behind
 *   log_witness_published_size                    gauge, the size /log/checkpoint serves
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export interface LogWitnessLag {
  url: string;
  entries: number;
  seconds: number;
}

export interface LogWitnessMetrics {
  readonly requests: Counter<'witness' | 'outcome'>;
  readonly published: Gauge;
}

export function createLogWitnessMetrics(registry: Registry, lags: () => LogWitnessLag[]): LogWitnessMetrics {
  const registers = [registry];
  new Gauge({
    name: 'log_witness_lag_entries',
    help: "Entries of the node's own log a peer witness has not cosigned yet",
    labelNames: ['witness'],
    registers,
    collect() {
      this.reset();
      for (const l of lags()) this.set({ witness: l.url }, l.entries);
    },
  });
  new Gauge({
    name: 'log_witness_lag_seconds',
    help: "Seconds a peer witness has been behind the node's newest checkpoint (0 when it holds it)",
    labelNames: ['witness'],
    registers,
    collect() {
      this.reset();
      for (const l of lags()) this.set({ witness: l.url }, l.seconds);
    },
  });
  return {
    requests: new Counter({
      name: 'log_witness_requests_total',
      help: 'add-checkpoint requests sent to peer witnesses of the own log, by witness and outcome',
      labelNames: ['witness', 'outcome'],
      registers,
    }),
    published: new Gauge({
      name: 'log_witness_published_size',
      help: 'Size of the witnessed checkpoint served at /log/checkpoint',
      registers,
    }),
  };
}
