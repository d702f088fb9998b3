/**
 * The anchor role's metrics (docs/operations.md): the queue, the group commits, what they logged,
 * and the own log's size. Registered whatever the roles (a node without the anchor role reports
 * zeros), as they always were.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export type AnchorMetrics = ReturnType<typeof createAnchorMetrics>;

export function createAnchorMetrics(registry: Registry, anchorQueueDepth: () => number) {
  return {
    // Read at scrape time. At most --max-in-flight: an abandoned request's anchor leaves the queue.
    queueDepth: new Gauge({
      name: 'anchor_queue_depth',
      help: 'POST /v1/anchor requests waiting in the sequencer for the next group commit',
      registers: [registry],
      collect() {
        this.set(anchorQueueDepth());
      },
    }),
    cosigned: new Counter({ name: 'anchors_cosigned_total', help: 'Anchors co-signed and logged', registers: [registry] }),
    duplicities: new Counter({ name: 'duplicities_total', help: 'Duplicity proofs stored (seeds frozen)', registers: [registry] }),
    logSize: new Gauge({ name: 'log_size', help: "Size of the witness's own log", registers: [registry] }),
    // Group commit: how many POST /v1/anchor requests share one durable commit, and how long the
    // batch's store transaction holds the sequencer (it runs on the event loop, fsync included).
    batchRequests: new Histogram({
      name: 'anchor_batch_requests',
      help: 'Requests decided per committed anchor batch (group commit)',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
      registers: [registry],
    }),
    batchSeconds: new Histogram({
      name: 'anchor_batch_seconds',
      help: 'Store transaction time per committed anchor batch, COMMIT (fsync) included',
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
      registers: [registry],
    }),
  };
}
