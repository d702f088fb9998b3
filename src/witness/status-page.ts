/**
 * The witness status page (SPEC §6 `GET /` as HTML; what it shows and why: docs/witness.md, "Status
 * page"): gathers the data for one request (store reads, the cosign role's known logs and request
 * counters) and renders it with status-page-render.ts.
 */
import type { Registry } from 'prom-client';
import type { BuildInfo } from '../release/attestation.ts';
import type { CosignRole } from '../cosign/role.ts';
import type { WitnessStore } from '../store/types.ts';
import type { CheckpointClock } from './checkpoint-clock.ts';
import type { LogWitnessing } from '../log-witness/witnessing.ts';
import { commandBaseUrl, type StatusPageRequest } from './status-page-commands.ts';
import { COUNTS_TTL_MS, type CosignLogRow, type WitnessPageData } from './status-page-data.ts';
import { renderWitnessPage } from './status-page-render.ts';

export { escapeHtml } from '../pages/html.ts';
export { CheckpointClock } from './checkpoint-clock.ts';
export { commandBaseUrl, type StatusPageRequest } from './status-page-commands.ts';
export { COUNTS_TTL_MS, type CosignLogRow, type WitnessPageData } from './status-page-data.ts';
export { renderWitnessPage } from './status-page-render.ts';

const MAX_LOG_ROWS = 200;

/** add-checkpoint outcomes that reached the quota check (SPEC §5 check 4) and took a token. */
const COUNTED = new Set(['cosigned', 'conflict', 'old_size_too_large', 'invalid_empty_tree', 'unexpected_proof', 'inconsistent']);

async function requestCounts(metrics: Registry | undefined): Promise<Map<string, { counted: number; refused: number }>> {
  const out = new Map<string, { counted: number; refused: number }>();
  const metric = metrics?.getSingleMetric('cosign_add_checkpoint_total');
  if (metric === undefined) return out;
  for (const v of (await metric.get()).values) {
    const origin = v.labels.origin;
    const outcome = v.labels.outcome;
    if (typeof origin !== 'string' || typeof outcome !== 'string') continue;
    const e = out.get(origin) ?? { counted: 0, refused: 0 };
    if (COUNTED.has(outcome)) e.counted += v.value;
    if (outcome === 'quota_exceeded') e.refused += v.value;
    out.set(origin, e);
  }
  return out;
}

export interface WitnessPageSources {
  store: WitnessStore;
  clock: CheckpointClock;
  cosign?: CosignRole | undefined;
  /** The node's metrics registry (the cosign role's request counters). */
  metrics?: Registry | undefined;
  build?: BuildInfo | undefined;
  /** The witnessed own log (SPEC §4.1): each peer witness and its lag. */
  logWitnessing?: LogWitnessing | undefined;
  startedAtMs: number;
  now?: () => number;
}

interface HealthShape {
  witness_name: string;
  roles: string[];
  version: string;
  log: { origin: string };
  keys: { witness: string; log_vkey: string; cosign_vkey: string | null };
}

/**
 * The `statusPage` the witness routes call: gathers the data for one request and renders it.
 * `GET /` bypasses the queue and the rate limit, so the expensive reads are bounded: the counts
 * are cached for COUNTS_TTL_MS, and concurrent requests share one read of the cosigned logs.
 */
export function createWitnessStatusPage(
  src: WitnessPageSources,
): (health: Record<string, unknown>, req: StatusPageRequest) => Promise<string> {
  let counts: { atMs: number; value: Promise<{ seeds: number; duplicities: number }> } | undefined;
  const readCounts = (nowMs: number): Promise<{ seeds: number; duplicities: number }> => {
    if (counts === undefined || nowMs - counts.atMs >= COUNTS_TTL_MS || nowMs < counts.atMs) {
      const entry = { atMs: nowMs, value: src.store.anchors.counts() };
      counts = entry;
      entry.value.catch(() => {
        if (counts === entry) counts = undefined; // do not cache a failure
      });
    }
    return counts.value;
  };
  let logsInFlight: Promise<WitnessPageData['cosign']> | undefined;
  const readLogs = async (cosignRole: CosignRole): Promise<WitnessPageData['cosign']> => {
    const requests = await requestCounts(src.metrics);
    const known = [...cosignRole.logs.current().values()].sort((a, b) => (a.origin < b.origin ? -1 : a.origin > b.origin ? 1 : 0));
    const logs = await Promise.all(
      known.slice(0, MAX_LOG_ROWS).map(async (l): Promise<CosignLogRow> => {
        const state = await src.store.cosign.getOrigin(l.origin);
        const r = requests.get(l.origin) ?? { counted: 0, refused: 0 };
        return {
          origin: l.origin,
          source: l.source,
          size: state?.size ?? null,
          lastCosigned: state?.lastTime ?? null,
          qpd: l.qpd,
          counted: r.counted,
          refused: r.refused,
        };
      }),
    );
    return { logs, total: known.length };
  };
  const sharedLogs = (cosignRole: CosignRole): Promise<WitnessPageData['cosign']> => {
    logsInFlight ??= readLogs(cosignRole).finally(() => {
      logsInFlight = undefined;
    });
    return logsInFlight;
  };
  return async (health, req) => {
    const h = health as unknown as HealthShape;
    const nowMs = (src.now ?? Date.now)();
    const [cp, counts, cosign] = await Promise.all([
      src.store.log.checkpoint(),
      readCounts(nowMs),
      src.cosign === undefined ? null : sharedLogs(src.cosign),
    ]);
    const size = cp?.size ?? 0;
    const signed = src.clock.signedAt(size, nowMs);
    const base = commandBaseUrl(req);
    return renderWitnessPage({
      name: h.witness_name,
      roles: h.roles,
      version: h.version,
      witnessKeyHex: h.keys.witness,
      logOrigin: h.log.origin,
      logVkey: h.keys.log_vkey,
      cosignVkeys: src.cosign?.healthInfo().cosignVkeys ?? (h.keys.cosign_vkey === null ? [] : [h.keys.cosign_vkey]),
      log: { size, checkpoint: cp?.note ?? null, signedAtMs: signed.atMs, signedExact: signed.exact },
      counts: { seeds: counts.seeds, duplicities: counts.duplicities, anchors: Math.max(0, size - counts.duplicities) },
      cosign,
      logWitnesses:
        src.logWitnessing === undefined
          ? null
          : { published: src.logWitnessing.published ?? 0, witnesses: src.logWitnessing.witnessRows() },
      baseUrl: base.url,
      hostUsable: base.usable,
      runningDigest: src.build?.body.running_digest,
      nowMs,
      startedAtMs: src.startedAtMs,
    });
  };
}
