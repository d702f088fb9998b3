/**
 * What a monitor poll reports: findings (one kind per misbehaviour, docs/client.md's table), each
 * with a stable id for de-duplication, a one-line message and JSON-able evidence.
 */
import { ProtocolError } from '../../errors.ts';

export type FindingKind =
  | 'withholding'
  | 'disagreement'
  | 'equivocation'
  | 'duplicity'
  | 'forged_anchor'
  | 'forged_duplicity'
  | 'log_rollback'
  | 'log_equivocation'
  | 'log_inconsistent'
  | 'log_unwitnessed'
  | 'seed_dark'
  | 'anchor_rollback'
  | 'tiles_mismatch'
  | 'invalid_response'
  | 'key_changed'
  | 'unknown_witness'
  | 'unreachable';

export interface Finding {
  /** Stable identity (same condition, same id), for de-duplication. */
  id: string;
  kind: FindingKind;
  severity: 'alert' | 'warning';
  /** One line for humans. */
  message: string;
  witness?: string;
  /** The witness's base URL, when the finding is about one witness. */
  url?: string;
  seed?: string;
  /**
   * What the finding is about, for alert episodes (default: `id`): a condition whose details move
   * while it holds (a withholding witness falling further behind) keeps one subject.
   */
  subject?: string;
  /** JSON-able evidence (signed notes, co-signed anchors, proofs). */
  evidence?: Record<string, unknown>;
}

/** Where the checks report (the poll keeps the first finding of each id). */
export type AddFinding = (f: Finding) => void;

/** A seed or hash, shortened for a message. */
export const short = (hex: string): string => hex.slice(0, 16);
export const errorText = (e: unknown): string =>
  e instanceof ProtocolError ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e);
