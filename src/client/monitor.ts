/**
 * Monitoring witnesses: one poll of every witness's checkpoint and, for the watched seeds, its
 * latest co-signed anchor, all verified under pinned keys (a witness set, or trust on first use)
 * and party keys from the registry, reported as findings (withholding, disagreement,
 * equivocation, duplicity, forgery, log rollback / split view / inconsistency, …). The state is a
 * JSON value the caller persists; the poll does HTTP only through the injected options, and time
 * is a parameter. Design and the findings table: docs/client.md, "Monitoring"; the checks live in
 * src/client/monitor/.
 */
import type { Registry } from '../anchor/registry.ts';
import { encodeHex } from '../encoding/hex.ts';
import type { HttpOptions } from './http.ts';
import type { WitnessSet } from '../verify/witness-set.ts';
import { checkSeed, scanDuplicities } from './monitor/anchors.ts';
import { checkLog, splitViews, type LogQuorum } from './monitor/checkpoints.ts';
import { crossConsistency, pinnedLogs, readPeers } from './monitor/log-views.ts';
import { SIG_TYPE_ED25519, SIG_TYPE_SUBTREE_V1 } from '../note/signed-note.ts';
import type { NoteVerifier } from '../note/vkey.ts';
import { isCosignerType } from '../verify/note.ts';
import { cosignerQuorum } from '../verify/quorum.ts';
import { crossCheck, darkSeed, withholding } from './monitor/compare.ts';
import type { Finding } from './monitor/findings.ts';
import { identify, type Identified } from './monitor/identify.ts';
import { partyKeys, purgeUnsigned } from './monitor/parties.ts';
import type { MonitorState } from './monitor/state.ts';
import { UsageError } from '../verify/errors.ts';

export { MONITOR_STATE_V, emptyMonitorState, parseMonitorState } from './monitor/state.ts';
export type { MonitorState, Observation, ObservedAnchor, PeerCheckpoint, WitnessRecord } from './monitor/state.ts';
export type { AlertEpisode, AlertState, QueuedAlert } from './monitor/alert-state.ts';
export {
  ALERT_V,
  GIVE_UP_MS,
  RETRY_BASE_MS,
  RETRY_MAX_MS,
  alertId,
  deliverDueAlerts,
  enqueueAlerts,
  nextAlertDue,
  pendingAlerts,
  recordEpisodes,
  retryDelayMs,
} from './monitor/alerts.ts';
export type { AlertDelivery, AlertPayload } from './monitor/alerts.ts';
export { alertSignature, parseWebhook, postAlert } from './monitor/webhook.ts';
export type { Webhook } from './monitor/webhook.ts';
export type { AnchorPairEvidence, CosignedSide, Finding, FindingEvidence, FindingKind, FindingOf } from './monitor/findings.ts';
export { unhandledKind } from './monitor/findings.ts';
export { LOG_EQUIVOCATION_V } from '../verify/log-equivocation.ts';

export interface WitnessStatus {
  url: string;
  name?: string;
  reachable: boolean;
  logSize?: number;
  /** Per watched seed: the latest index this witness co-signed (null: none). */
  anchors: Record<string, number | null>;
}

export interface PollReport {
  time: number;
  findings: Finding[];
  witnesses: WitnessStatus[];
}

export interface MonitorConfig {
  /** Base URLs of the witnesses. */
  witnesses: readonly string[];
  /** Pins keys and log origins; without it, keys are trusted on first use and recorded. */
  witnessSet?: WitnessSet;
  /** Seeds to watch (hex or bytes). */
  seeds: readonly (string | Uint8Array)[];
  /**
   * The parties' keys (SPEC §3.2 registry, `parseRegistry`): an anchor counts only when its party
   * signature verifies under a key listed here; a duplicity proof is the party's only when its key
   * is listed. Required when `seeds` is not empty or `allDuplicities` is set.
   */
  registry?: Registry;
  /** Seconds a witness may be behind before withholding is reported (default 0). */
  withholdingGraceSec?: number;
  /** Also page through every stored duplicity proof of every witness. */
  allDuplicities?: boolean;
  /**
   * SPEC §4.1: cosigner vkeys (type 0x04 cosignature/v1, or 0x06 ML-DSA-44) of which every witness's published
   * GET /log/checkpoint must carry `logQuorum` valid lines (default: all), else `log_unwitnessed`.
   */
  logCosigners?: readonly NoteVerifier[];
  logQuorum?: number;
  /** Pinned log keys (type 0x01, or 0x06 ML-DSA-44; named after the log's origin), before the witness set and trust on first use. */
  logKeys?: readonly NoteVerifier[];
  /** Peers whose monitoring endpoints (GET /<sha256(origin) hex>/checkpoint) are read for every pinned log. */
  peers?: readonly string[];
  /** Report `seed_dark` when a watched seed's newest co-signed anchor is older than this (seconds; default: off). */
  darkAfterSec?: number;
  http?: HttpOptions;
}

const seedHex = (s: string | Uint8Array): string => (typeof s === 'string' ? s.toLowerCase() : encodeHex(s));

/** One poll of every witness; mutates `state` (persist it afterwards). */
export async function monitorPoll(config: MonitorConfig, state: MonitorState, now: number): Promise<PollReport> {
  const findings: Finding[] = [];
  const add = (f: Finding): void => {
    if (!findings.some((x) => x.id === f.id)) findings.push(f);
  };
  const http = config.http ?? {};
  const seeds = [...new Set(config.seeds.map(seedHex))];
  if ((seeds.length > 0 || config.allDuplicities === true) && config.registry === undefined) {
    throw new UsageError(
      "watching seeds or duplicities needs the parties' keys: give the registry (docs/protocol.md §3.2) the witnesses use",
    );
  }
  const witnessed = logQuorumOf(config);
  checkLogKeys(config);
  const parties = partyKeys(config.registry);
  if (config.registry !== undefined) await purgeUnsigned(state, parties);
  const current = new Map<string, Map<string, number | null>>(); // witness → seed → index
  const identified: Identified[] = [];
  const statuses = await Promise.all(
    config.witnesses.map(async (url): Promise<WitnessStatus> => {
      const status: WitnessStatus = { url, reachable: false, anchors: {} };
      const id = await identify(url, config.witnessSet, state, http, add, parties, config.logKeys);
      if (id === undefined) return status;
      identified.push(id);
      status.name = id.name;
      status.reachable = true;
      const record = state.witnesses[id.name]!;
      status.logSize = await checkLog(id, record, http, add, witnessed);
      const perSeed = new Map<string, number | null>();
      current.set(id.name, perSeed);
      await Promise.all(
        seeds.map(async (seed) => {
          const index = await checkSeed(id, record, seed, state, http, add, now);
          if (index !== undefined) perSeed.set(seed, index);
          if (index !== undefined) status.anchors[seed] = index;
        }),
      );
      if (config.allDuplicities === true) await scanDuplicities(id, http, add);
      return status;
    }),
  );
  const logs = pinnedLogs(config.logKeys ?? [], config.witnessSet, state, identified);
  const peerViews = await readPeers(config.peers ?? [], logs, http, add);
  await crossConsistency(peerViews, logs, http, add);
  splitViews(identified, state, add, peerViews);
  for (const seed of seeds) {
    await crossCheck(seed, state, parties, add);
    withholding(seed, state, current, now, config.withholdingGraceSec ?? 0, add);
    if (config.darkAfterSec !== undefined) darkSeed(seed, state, now, config.darkAfterSec, add);
  }
  // A finding about one witness names its URL too (alerts carry it).
  const urls = new Map(identified.map((id) => [id.name, id.url]));
  for (const f of findings) if (f.url === undefined && f.witness !== undefined && urls.has(f.witness)) f.url = urls.get(f.witness)!;
  return { time: now, findings, witnesses: statuses };
}

/** The quorum every published checkpoint needs (SPEC §4.1), checked once per poll (`usage` when unusable). */
function logQuorumOf(config: MonitorConfig): LogQuorum | undefined {
  const cosigners = config.logCosigners ?? [];
  if (cosigners.length === 0) {
    if (config.logQuorum !== undefined) throw new UsageError('a log quorum needs the cosigners (--log-cosigner VKEY…)');
    return undefined;
  }
  if (cosigners.some((c) => !isCosignerType(c.type)))
    throw new UsageError('log cosigners must be cosignature/v1 (type 0x04) or subtree/v1 (type 0x06, ML-DSA-44) vkeys');
  try {
    cosignerQuorum(cosigners, config.logQuorum);
  } catch (e) {
    throw new UsageError(`--log-quorum: ${(e as Error).message}`);
  }
  return { cosigners, ...(config.logQuorum !== undefined ? { quorum: config.logQuorum } : {}) };
}

/** Pinned log keys are Ed25519 log keys (type 0x01) and agree with the witness set. */
function checkLogKeys(config: MonitorConfig): void {
  for (const k of config.logKeys ?? []) {
    if (k.type !== SIG_TYPE_ED25519 && k.type !== SIG_TYPE_SUBTREE_V1)
      throw new UsageError(`--log-vkey ${k.vkey}: a log key must be type 0x01 (Ed25519) or 0x06 (ML-DSA-44)`);
    const member = config.witnessSet?.members.find((m) => m.logOrigin === k.name);
    if (member !== undefined && encodeHex(member.publicKey) !== encodeHex(k.publicKey))
      throw new UsageError(`--log-vkey ${k.vkey}: the witness set pins another key for log ${k.name}`);
  }
}
