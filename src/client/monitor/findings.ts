/**
 * What a monitor poll reports: findings (one kind per misbehaviour, docs/client.md's table), each
 * with a stable id for de-duplication, a one-line message and JSON-able evidence.
 */
import { createHash } from 'node:crypto';
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

/** SPEC §6.2: at most this much of a response that did not verify goes into evidence. */
export const UNVERIFIED_EVIDENCE_BYTES = 4096;

/** What a response that did not verify contributes to evidence (webhooks, --json, --html). */
export interface UnverifiedEvidence {
  /** Always true: nothing here was verified; it is what the witness sent, not proof of anything. */
  unverified: true;
  /** The body's full length (bytes) and SHA-256 (hex). */
  bytes: number;
  sha256: string;
  /** Its first ≤ 4 KiB (whole UTF-8 characters), as a JSON string. */
  excerpt: string;
  truncated: boolean;
}

/** At most 4 KiB of an unverified body, as a string, marked unverified (SPEC §6.2 *(rev 4)*). */
export function unverifiedEvidence(body: string | Uint8Array): UnverifiedEvidence {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
  let end = Math.min(bytes.length, UNVERIFIED_EVIDENCE_BYTES);
  // Cut before a partial UTF-8 character (continuation bytes are 10xxxxxx).
  if (end < bytes.length) while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return {
    unverified: true,
    bytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    excerpt: bytes.subarray(0, end).toString('utf8'),
    truncated: end < bytes.length,
  };
}
