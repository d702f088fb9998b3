// The monitor report's input: structural subsets of the monitor's `MonitorState` and `PollReport`,
// so the report renders from plain data and imports nothing of the monitor but the findings' types.
import type { Finding } from './monitor/findings.ts';

export interface ReportAnchor {
  index: number;
  head: string;
}

export interface ReportObservation {
  witness: string;
  anchor: ReportAnchor;
  /** Unix seconds, first seen. */
  seen: number;
}

export interface ReportState {
  witnesses: Record<string, { public_key: string; log_origin: string; checkpoint?: string | undefined }>;
  seeds: Record<string, { observations: readonly ReportObservation[] }>;
}

/** A finding as the monitor reports it: a union by `kind`, each with its evidence's type. */
export type ReportFinding = Finding;

export interface ReportWitnessStatus {
  url: string;
  name?: string | undefined;
  reachable: boolean;
  logSize?: number | undefined;
  anchors: Record<string, number | null>;
}

export interface ReportPoll {
  /** Unix seconds. */
  time: number;
  findings: readonly ReportFinding[];
  witnesses: readonly ReportWitnessStatus[];
}

export interface MonitorReportInput {
  state: ReportState;
  /** This run's polls, oldest first (the last is the current one). May be empty. */
  polls: readonly ReportPoll[];
  /** Unix seconds. */
  generatedAt: number;
  /** Findings shown at most (default 200); the rest are counted. */
  maxFindings?: number;
}
