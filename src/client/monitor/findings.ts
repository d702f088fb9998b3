/**
 * What a monitor poll reports: findings (one kind per misbehaviour, docs/client.md's table), each
 * with a stable id for de-duplication, a one-line message and JSON-able evidence.
 */
import { createHash } from 'node:crypto';
import type { AnchorWire, DuplicityProofWire } from '../../anchor/types.ts';
import { ProtocolError } from '../../errors.ts';
import type { LogEquivocationEvidence } from '../../verify/log-equivocation.ts';
import type { CosignatureWire } from '../../verify/receipt.ts';
import type { RotationEntry } from '../../verify/key-rotation.ts';
import type { ObservedAnchor } from './state.ts';

/** Two co-signed anchors for one index of one seed (disagreement, equivocation): one side. */
export interface CosignedSide {
  witness: string;
  anchor: AnchorWire;
  cosignature: CosignatureWire;
}

/** Two co-signed anchors, and the party's duplicity proof when the party signed both. */
export interface AnchorPairEvidence {
  index: number;
  a: CosignedSide;
  b: CosignedSide;
  duplicity_proof?: DuplicityProofWire;
}

/** A key-rotation entry as a witness served it (GET /v1/key-rotation), with its index in the witness's own log. */
export type ServedRotationEntry = RotationEntry & { log_index?: number };

/**
 * Each kind's evidence, as JSON-able data (webhooks, --json, --html). `undefined`: the kind carries
 * none; `X | undefined`: sometimes.
 */
export interface FindingEvidence {
  withholding: { index: number | null; expected: number; by: string; since: number };
  disagreement: AnchorPairEvidence;
  equivocation: AnchorPairEvidence;
  duplicity: { duplicity_proof: DuplicityProofWire };
  forged_anchor: { anchor: AnchorWire; cosignature: CosignatureWire };
  /** What the witness served, not the party's: an excerpt, marked unverified. */
  forged_duplicity: { duplicity_proof: UnverifiedEvidence };
  /** Two signed checkpoint notes. */
  log_rollback: { previous: string; current: string };
  /** The offline-checkable document (`anchor-witness verify log-equivocation`). */
  log_equivocation: LogEquivocationEvidence;
  log_inconsistent: { previous: string; current: string; old_root_from_tiles: string; consistency_proof: string[] };
  log_unwitnessed: { checkpoint: string };
  seed_dark: { index: number; timestamp: string; witness: string; dark_after: number };
  anchor_rollback: { previous: ObservedAnchor; current?: ObservedAnchor };
  tiles_mismatch: undefined;
  invalid_response: { checkpoint: UnverifiedEvidence } | undefined;
  key_changed: undefined;
  unknown_witness: undefined;
  unreachable: undefined;
  /** The verifying key-rotation entry the pin followed (protocol §1.2), with its log index. */
  witness_key_rotated: { entry: ServedRotationEntry };
  /** What the witness served (its shape checked, its signatures not verifying): not followed. */
  witness_key_rotation_invalid: { entry: ServedRotationEntry };
}

export type FindingKind = keyof FindingEvidence;

interface FindingCommon {
  /** Stable identity (same condition, same id), for de-duplication. */
  id: string;
  /** `info`: nothing is wrong (a verified key rotation followed); it is reported, not counted as a finding by the CLI's exit code. */
  severity: 'alert' | 'warning' | 'info';
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
}

/** A finding of one kind, with that kind's evidence (required where the kind always has some). */
export type FindingOf<K extends FindingKind> = FindingCommon & { kind: K } & (undefined extends FindingEvidence[K]
    ? { evidence?: FindingEvidence[K] }
    : { evidence: FindingEvidence[K] });

/** What a poll reports: a union discriminated by `kind` (a `switch` on it is checked exhaustive). */
export type Finding = { [K in FindingKind]: FindingOf<K> }[FindingKind];

/** For the `default` of an exhaustive `switch (finding.kind)`: a kind left out fails to compile. */
export function unhandledKind(f: never): never {
  throw new Error(`unhandled finding kind: ${(f as { kind?: unknown }).kind as string}`);
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
