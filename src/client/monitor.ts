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
import { ClientError } from './errors.ts';
import type { HttpOptions } from './http.ts';
import type { WitnessSet } from './witness-set.ts';
import { checkSeed, scanDuplicities } from './monitor/anchors.ts';
import { checkLog, splitViews } from './monitor/checkpoints.ts';
import { crossCheck, withholding } from './monitor/compare.ts';
import type { Finding } from './monitor/findings.ts';
import { identify, type Identified } from './monitor/identify.ts';
import { partyKeys, purgeUnsigned } from './monitor/parties.ts';
import type { MonitorState } from './monitor/state.ts';

export { MONITOR_STATE_V, emptyMonitorState, parseMonitorState } from './monitor/state.ts';
export type { MonitorState, Observation, ObservedAnchor, WitnessRecord } from './monitor/state.ts';
export type { Finding, FindingKind } from './monitor/findings.ts';
export { LOG_EQUIVOCATION_V } from './monitor/checkpoints.ts';

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
    throw new ClientError(
      'usage',
      "watching seeds or duplicities needs the parties' keys: give the registry (SPEC §3.2) the witnesses use",
    );
  }
  const parties = partyKeys(config.registry);
  if (config.registry !== undefined) purgeUnsigned(state, parties);
  const current = new Map<string, Map<string, number | null>>(); // witness → seed → index
  const identified: Identified[] = [];
  const statuses = await Promise.all(
    config.witnesses.map(async (url): Promise<WitnessStatus> => {
      const status: WitnessStatus = { url, reachable: false, anchors: {} };
      const id = await identify(url, config.witnessSet, state, http, add, parties);
      if (id === undefined) return status;
      identified.push(id);
      status.name = id.name;
      status.reachable = true;
      const record = state.witnesses[id.name]!;
      status.logSize = await checkLog(id, record, http, add);
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
  splitViews(identified, state, add);
  for (const seed of seeds) {
    crossCheck(seed, state, parties, add);
    withholding(seed, state, current, now, config.withholdingGraceSec ?? 0, add);
  }
  return { time: now, findings, witnesses: statuses };
}
