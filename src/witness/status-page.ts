/**
 * The witness status page (SPEC §6 `GET /` as HTML; what it shows and why: docs/witness.md, "Status
 * page"): gathers the data for one request (the /health body, store reads, the parts' typed status
 * fragments) and renders it with status-page-render.ts.
 */
import type { BuildInfo } from '../release/attestation.ts';
import type { CosignStatus } from '../cosign/part.ts';
import type { KelWitnessStatus } from '../kel-witness/part.ts';
import type { LogWitnessStatus } from '../log-witness/part.ts';
import type { RegistryStatus } from '../registry/part.ts';
import type { WitnessStore } from '../store/types.ts';
import type { CheckpointClock } from './checkpoint-clock.ts';
import type { WitnessHealthBody } from './health.ts';
import { commandBaseUrl, type StatusPageRequest } from './status-page-commands.ts';
import { COUNTS_TTL_MS } from './status-page-data.ts';
import { renderWitnessPage } from './status-page-render.ts';

export { escapeHtml } from '../pages/html.ts';
export { CheckpointClock } from './checkpoint-clock.ts';
export { commandBaseUrl, type StatusPageRequest } from './status-page-commands.ts';
export { COUNTS_TTL_MS, type CosignLogRow, type WitnessPageData } from './status-page-data.ts';
export { renderWitnessPage } from './status-page-render.ts';

/** What the page reads: the store, the checkpoint clock, and the parts' typed status fragments. */
export interface WitnessPageSources {
  store: WitnessStore;
  clock: CheckpointClock;
  /** The cosign part's fragment: known logs, cosigned sizes, request counts. */
  cosign?: (() => CosignStatus | Promise<CosignStatus>) | undefined;
  build?: BuildInfo | undefined;
  /** The registry part's fragment: the KEL source's counts and last reload (SPEC §3.5). */
  registry?: (() => RegistryStatus) | undefined;
  /** The log-witness part's fragment (SPEC §4.1): each peer witness and its lag. */
  logWitnesses?: (() => LogWitnessStatus) | undefined;
  /** The KERI witness part's fragment (SPEC §3.6, role kel): its prefix, OOBI URLs and ledger counts. */
  kelWitness?: (() => Promise<KelWitnessStatus>) | undefined;
  startedAtMs: number;
  now?: () => number;
}

/**
 * The `statusPage` the witness routes call: gathers the data for one request and renders it.
 * `GET /` bypasses the queue and the rate limit, so the expensive reads are bounded: the counts
 * (and the KERI witness fragment) are cached for COUNTS_TTL_MS (and the cosign part shares one read
 * of the cosigned logs).
 */
export function createWitnessStatusPage(src: WitnessPageSources): (health: WitnessHealthBody, req: StatusPageRequest) => Promise<string> {
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
  // The KERI witness fragment reads the ledger's counts (scans): cached the same way.
  let kel: { atMs: number; value: Promise<KelWitnessStatus> } | undefined;
  const readKel = (nowMs: number): Promise<KelWitnessStatus> | null => {
    if (src.kelWitness === undefined) return null;
    if (kel === undefined || nowMs - kel.atMs >= COUNTS_TTL_MS || nowMs < kel.atMs) {
      const entry = { atMs: nowMs, value: src.kelWitness() };
      kel = entry;
      entry.value.catch(() => {
        if (kel === entry) kel = undefined;
      });
    }
    return kel.value;
  };
  return async (h, req) => {
    const nowMs = (src.now ?? Date.now)();
    const [cp, counts, cosign, kelWitness] = await Promise.all([
      src.store.log.checkpoint(),
      readCounts(nowMs),
      src.cosign?.() ?? null,
      readKel(nowMs),
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
      cosignVkeys: h.cosign_vkeys ?? [],
      log: { size, checkpoint: cp?.note ?? null, signedAtMs: signed.atMs, signedExact: signed.exact },
      counts: { seeds: counts.seeds, duplicities: counts.duplicities, anchors: Math.max(0, size - counts.duplicities) },
      cosign,
      kel: src.registry?.().kel,
      logWitnesses: src.logWitnesses?.() ?? null,
      kelWitness,
      baseUrl: base.url,
      hostUsable: base.usable,
      runningDigest: src.build?.body.running_digest,
      nowMs,
      startedAtMs: src.startedAtMs,
    });
  };
}
