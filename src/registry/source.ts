/**
 * A KEL source (SPEC §3.5 `--kel-source dir:PATH|git:PATH`) read as a whole: every identifier's
 * KEL as raw events and attachments (src/keri parses and verifies). An identifier whose copy could
 * not even be read or parsed is a RawKel with a `defect` (refused with that reason, its last
 * accepted state kept). A source that cannot be read at all throws KelSourceError
 * `kel_source_unreadable`.
 */
import { sha256Hex } from '../crypto/sha256.ts';
import { defectiveKel, type KelLimits, type KelReason, type RawKel } from '../keri/index.ts';
import { KelSourceError } from './errors.ts';

/** `--kel-source` parsed. */
export interface KelSourceSpec {
  /** `ledger:` (SPEC §3.6.8, role kel): the KERI witness role's ledger; its path is ''. */
  kind: 'dir' | 'git' | 'ledger';
  path: string;
}

export interface KelSourceRead {
  /** Keyed by prefix. */
  kels: Map<string, RawKel>;
  /** Names in the source that are not read (no identifier pattern, bad ref name): for the log. */
  ignored: string[];
}

/** An identifier's copy that never reached verification (not a regular file, bad mode, gap…): refused with `reason`. */
export function unreadableKel(prefix: string, source: string, reason: KelReason, detail: string): RawKel {
  return defectiveKel(prefix, source, 0, sha256Hex(`unreadable\n${reason}\n${detail}`), reason, detail);
}

/**
 * One `--kel-source`. `ledger:` (the witness's own KERI ledger, SPEC §3.6.8) only where the caller
 * has one (`ledger: true`: a witness node); the bridge and the monitor read `dir:` and `git:` only.
 */
export function parseKelSourceSpec(text: string, opts: { ledger?: boolean } = {}): KelSourceSpec {
  if (text === 'ledger:' && opts.ledger === true) return { kind: 'ledger', path: '' };
  const m = /^(dir|git):(.+)$/.exec(text);
  if (m === null) {
    const kinds = opts.ledger === true ? 'dir:PATH, git:PATH or ledger:' : 'dir:PATH or git:PATH';
    throw new KelSourceError('invalid_kel_source', `--kel-source must be ${kinds}, got ${JSON.stringify(text)}`);
  }
  return { kind: m[1] as 'dir' | 'git', path: m[2]! };
}

/** Several `--kel-source` flags (repeatable, SPEC §3.5 rev 4), in flag order. */
export function parseKelSourceSpecs(texts: string | readonly string[], opts: { ledger?: boolean } = {}): KelSourceSpec[] {
  const list = typeof texts === 'string' ? [texts] : texts;
  if (list.length === 0) throw new KelSourceError('invalid_kel_source', '--kel-source: at least one dir:PATH or git:PATH');
  return list.map((t) => parseKelSourceSpec(t, opts));
}

export const describeKelSource = (spec: KelSourceSpec): string => `${spec.kind}:${spec.path}`;

/** The first event's `di` when it is a dip (before any verification: only a hint for messages). */
export function dipDelegator(raw: RawKel): string | null {
  const e0 = raw.events[0];
  if (typeof e0 !== 'object' || e0 === null) return null;
  const { t, di } = e0 as { t?: unknown; di?: unknown };
  return t === 'dip' && typeof di === 'string' ? di : null;
}

export type { KelLimits, KelReason, RawKel };
