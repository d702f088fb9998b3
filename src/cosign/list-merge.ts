/**
 * What one read of one log list changes (SPEC §5.5), in three pure steps the importer
 * (list-import.ts) runs with the store's answers in between; `planListImport` runs them at once.
 *
 *   scanList         known origins (logs file, imported): an entry whose vkey is not one of the
 *                    origin's keys is a conflict, reported, the rest of the list still applies (vkey
 *                    text compared, no key check); a changed qpd of an origin's own list is
 *                    followed. Unknown origins become candidates, in list order, without the
 *                    entries whose vkey is cached as invalid (skipped before maxNew applies).
 *   classifyCandidate  a candidate with a stored state (an origin the operator removed from the
 *                    logs file) is a conflict unless every key it is listed with is one of the keys
 *                    that state is bound to (SPEC §5 rev 4: a list never re-imports it under other keys).
 *   finishListImport only the candidates this read imports (at most maxNew, and maxOrigins in all)
 *                    have their keys checked (rev 4); each is added with the union of its entries'
 *                    keys and the smallest of their qpd values (clamped to maxQpd).
 */
import type { NoteVerifier } from '../note/vkey.ts';
import type { StoredOriginKeys } from '../store/types.ts';
import type { LogListSkipCode } from './errors.ts';
import { normalizeVkeyText } from './key-binding.ts';
import { addVerifier, type LogKeyResult } from './log-keys.ts';
import type { LogListEntry, SkippedListEntry } from './log-list.ts';

/** A log known before this read, seen from a list. */
export interface KnownListLog {
  /** Its vkeys (normalized: as formatVkey writes them); undefined for a disabled logs-file entry. */
  readonly vkeys: readonly string[] | undefined;
  /** Where it comes from: undefined for the logs file, else the list source it was imported from. */
  readonly source: string | undefined;
  readonly qpd: number | undefined;
}

/** The known logs by origin (a Map fits; the importer passes a view over its records). */
export interface KnownListLogs {
  get(origin: string): KnownListLog | undefined;
}

export interface ListLimits {
  /** Imported qpd values are clamped to this. */
  readonly maxQpd: number;
  /** New origins one read may add. */
  readonly maxNew: number;
  /** Imported origins the node may hold in all. */
  readonly maxOrigins: number;
}

export interface ListScanInput {
  readonly source: string;
  readonly entries: readonly LogListEntry[];
  /** Every log the node knows: the logs file's (disabled ones included) and the imported ones. */
  readonly known: KnownListLogs;
  readonly maxQpd: number;
  /** A vkey's cached check result (undefined: never checked). */
  readonly cached?: ((vkey: string) => LogKeyResult | undefined) | undefined;
}

/** An origin unknown to the node's configuration and imports: its usable entries, in list order. */
export interface ListCandidate {
  readonly origin: string;
  readonly entries: LogListEntry[];
}

export interface ListScan {
  readonly qpdChanges: { origin: string; qpd: number }[];
  readonly conflicts: ListConflict[];
  /** Entries skipped because their vkey is cached as invalid. */
  readonly skipped: SkippedListEntry[];
  /** Unknown origins, in list order. */
  readonly candidates: ListCandidate[];
  /** Distinct origins the list names in usable entries. */
  readonly origins: number;
}

export interface NewListLog {
  readonly origin: string;
  readonly verifiers: readonly NoteVerifier[];
  readonly qpd: number;
}

export interface ListConflict {
  readonly line: number;
  readonly origin: string;
  readonly vkey: string;
}

export interface ListImportPlan {
  /** Origins to import, in list order. */
  readonly added: NewListLog[];
  /** Imported origins whose qpd changes. */
  readonly qpdChanges: { origin: string; qpd: number }[];
  readonly conflicts: ListConflict[];
  /** Entries skipped for their key (the parser skips the others). */
  readonly skipped: SkippedListEntry[];
  /** New origins left for a later read by maxNew. */
  readonly deferred: number;
  /** New origins refused because the node holds maxOrigins imported origins. */
  readonly overLimit: number;
  /** Distinct origins the list names in usable entries. */
  readonly origins: number;
  /** vkeys whose key was checked by this read (cached ones excluded). */
  readonly checked?: number;
}

export function scanList(input: ListScanInput): ListScan {
  const { source, known } = input;
  const conflicts: ListConflict[] = [];
  const skipped: SkippedListEntry[] = [];
  const candidates = new Map<string, ListCandidate>();
  const listedQpd = new Map<string, number>();
  const origins = new Set<string>();
  for (const e of input.entries) {
    const k = known.get(e.origin);
    if (k !== undefined) {
      if (k.vkeys === undefined) continue; // disabled in the logs file: nothing to check
      origins.add(e.origin);
      if (!k.vkeys.includes(e.vkey) && !k.vkeys.includes(normalizeVkeyText(e.vkey))) {
        conflicts.push({ line: e.line, origin: e.origin, vkey: e.vkey });
        continue;
      }
      if (k.source === source) listedQpd.set(e.origin, Math.min(listedQpd.get(e.origin) ?? e.qpd, e.qpd));
      continue;
    }
    const r = input.cached?.(e.vkey);
    if (r !== undefined && !r.ok) {
      skipped.push({ line: e.line, origin: e.origin, code: r.code, message: r.message });
      continue;
    }
    origins.add(e.origin);
    let c = candidates.get(e.origin);
    if (c === undefined) {
      c = { origin: e.origin, entries: [] };
      candidates.set(e.origin, c);
    }
    c.entries.push(e);
  }
  const qpdChanges: { origin: string; qpd: number }[] = [];
  for (const [origin, qpd] of listedQpd) {
    const clamped = Math.min(qpd, input.maxQpd);
    if (clamped !== known.get(origin)!.qpd) qpdChanges.push({ origin, qpd: clamped });
  }
  return { qpdChanges, conflicts, skipped, candidates: [...candidates.values()], origins: origins.size };
}

/**
 * A candidate against its stored state row, if any: `new` when it has none (or an empty one), or
 * when every key it is listed with is one the state is bound to; else its entries with other keys,
 * as conflicts (the origin is not imported).
 */
export function classifyCandidate(c: ListCandidate, stored: StoredOriginKeys | undefined): 'new' | ListConflict[] {
  if (stored === undefined || !stored.cosigned) return 'new';
  const keys = stored.keys ?? [];
  const out = c.entries
    .filter((e) => !keys.includes(e.vkey) && !keys.includes(normalizeVkeyText(e.vkey)))
    .map((e) => ({ line: e.line, origin: c.origin, vkey: e.vkey }));
  return out.length === 0 ? 'new' : out;
}

/** How many new origins this read may import: `total` in all, `now` by this read (maxNew). */
export function importRoom(limits: ListLimits, importedCount: number): { total: number; now: number } {
  const total = Math.max(0, limits.maxOrigins - importedCount);
  return { total, now: Math.min(total, limits.maxNew) };
}

/** The vkeys to check for the selected candidates (each once). */
export function candidateVkeys(selected: readonly ListCandidate[]): string[] {
  return [...new Set(selected.flatMap((c) => c.entries.map((e) => e.vkey)))];
}

/**
 * The plan of a read: `selected` are the candidates this read imports (at most room.now, of the
 * first `examined` candidates; the others were conflicts), `keys` their checked vkeys.
 */
export function finishListImport(input: {
  readonly scan: ListScan;
  readonly selected: readonly ListCandidate[];
  readonly conflicts: readonly ListConflict[];
  readonly examined: number;
  readonly keys: ReadonlyMap<string, LogKeyResult>;
  readonly room: { total: number; now: number };
  readonly maxQpd: number;
  readonly checked?: number;
}): ListImportPlan {
  const { scan, keys } = input;
  const skipped = [...scan.skipped];
  const added: NewListLog[] = [];
  for (const c of input.selected) {
    const verifiers: NoteVerifier[] = [];
    let qpd: number | undefined;
    for (const e of c.entries) {
      const r = keys.get(e.vkey);
      if (r === undefined) throw new Error(`finishListImport: vkey of line ${e.line} was not checked`);
      if (!r.ok) {
        skipped.push({ line: e.line, origin: c.origin, code: r.code, message: r.message });
        continue;
      }
      if (!verifiers.some((v) => v.vkey === r.verifier.vkey)) {
        const why = addVerifier(verifiers, r.verifier);
        if (why !== null) {
          skipped.push({ line: e.line, origin: c.origin, code: 'ambiguous_key' satisfies LogListSkipCode, message: why });
          continue;
        }
      }
      qpd = Math.min(qpd ?? e.qpd, e.qpd);
    }
    if (verifiers.length > 0) added.push({ origin: c.origin, verifiers, qpd: Math.min(qpd!, input.maxQpd) });
  }
  skipped.sort((a, b) => a.line - b.line);
  const rest = scan.candidates.length - input.examined;
  // What room allows beyond maxNew waits for the next read; the rest is over the node's limit.
  const deferred = Math.min(rest, Math.max(0, input.room.total - input.selected.length));
  return {
    added,
    qpdChanges: scan.qpdChanges,
    conflicts: [...scan.conflicts, ...input.conflicts].sort((a, b) => a.line - b.line),
    skipped,
    deferred,
    overLimit: rest - deferred,
    origins: scan.origins,
    ...(input.checked === undefined ? {} : { checked: input.checked }),
  };
}

export interface ListImportInput {
  readonly source: string;
  readonly entries: readonly LogListEntry[];
  readonly known: KnownListLogs;
  /** How many known origins were imported from lists (counted against maxOrigins). */
  readonly importedCount: number;
  readonly limits: ListLimits;
  /** Check one vkey (resolveLogKey, or a caching wrapper). */
  readonly resolve: (vkey: string) => LogKeyResult;
  readonly cached?: ((vkey: string) => LogKeyResult | undefined) | undefined;
  /** Stored state rows of origins the node no longer names (removed from the logs file). */
  readonly stored?: ReadonlyMap<string, StoredOriginKeys> | undefined;
}

/** The three steps at once, with the stored rows given (tests; the importer reads them in chunks). */
export function planListImport(input: ListImportInput): ListImportPlan {
  const { limits } = input;
  const scan = scanList({ ...input, maxQpd: limits.maxQpd });
  const room = importRoom(limits, input.importedCount);
  const selected: ListCandidate[] = [];
  const conflicts: ListConflict[] = [];
  let examined = 0;
  for (const c of scan.candidates) {
    if (selected.length >= room.now) break;
    examined++;
    const r = classifyCandidate(c, input.stored?.get(c.origin));
    if (r === 'new') selected.push(c);
    else conflicts.push(...r);
  }
  const vkeys = candidateVkeys(selected);
  const keys = new Map(vkeys.map((v) => [v, input.resolve(v)]));
  return finishListImport({ scan, selected, conflicts, examined, keys, room, maxQpd: limits.maxQpd, checked: vkeys.length });
}
