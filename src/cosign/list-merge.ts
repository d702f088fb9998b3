/**
 * What one read of one log list changes (SPEC §5.5), as a pure function of the list, the logs the
 * node knows and the limits. The importer (list-import.ts) stores the plan and rebuilds the view.
 *
 *  - An origin unknown to the node is added with the union of its entries' keys and the smallest of
 *    their qpd values (clamped to maxQpd), at most maxNew per read and maxOrigins imported in all;
 *    the others wait (`deferred`, `overLimit`).
 *  - A known origin (logs file or imported) never loses or gains a key: an entry whose vkey is not
 *    one of its keys is a conflict, reported; the rest of the list still applies.
 *  - An imported origin follows a changed qpd, from the list it was imported from only (two lists
 *    with different values would otherwise take turns).
 */
import type { NoteVerifier } from '../note/vkey.ts';
import type { LogListSkipCode } from './errors.ts';
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

export interface ListImportInput {
  readonly source: string;
  readonly entries: readonly LogListEntry[];
  /** Every log the node knows: the logs file's (disabled ones included) and the imported ones. */
  readonly known: KnownListLogs;
  /** How many known origins were imported from lists (counted against maxOrigins). */
  readonly importedCount: number;
  /** The parsed keys of the vkeys `vkeysToResolve` named. */
  readonly keys: ReadonlyMap<string, LogKeyResult>;
  readonly limits: ListLimits;
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
}

/** The vkeys of a list that must be parsed: those not already a key of their (known) origin. */
export function vkeysToResolve(entries: readonly LogListEntry[], known: KnownListLogs): string[] {
  const out = new Set<string>();
  for (const e of entries) {
    const k = known.get(e.origin);
    if (k !== undefined && (k.vkeys === undefined || k.vkeys.includes(e.vkey))) continue;
    out.add(e.vkey);
  }
  return [...out];
}

interface Candidate {
  readonly origin: string;
  readonly verifiers: NoteVerifier[];
  qpd: number;
}

export function planListImport(input: ListImportInput): ListImportPlan {
  const { source, known, keys, limits } = input;
  const conflicts: ListConflict[] = [];
  const skipped: SkippedListEntry[] = [];
  const candidates = new Map<string, Candidate>();
  const listedQpd = new Map<string, number>();
  const origins = new Set<string>();
  const skip = (e: LogListEntry, code: LogListSkipCode, message: string): void => {
    skipped.push({ line: e.line, origin: e.origin, code, message });
  };

  for (const e of input.entries) {
    const k = known.get(e.origin);
    if (k !== undefined && k.vkeys === undefined) continue; // disabled in the logs file: nothing to check
    let vkey = e.vkey;
    if (k === undefined || !k.vkeys!.includes(vkey)) {
      const r = keys.get(vkey);
      if (r === undefined) throw new Error(`planListImport: vkey of line ${e.line} was not resolved`);
      if (!r.ok) {
        skip(e, r.code, r.message);
        continue;
      }
      vkey = r.verifier.vkey;
      if (k === undefined) {
        origins.add(e.origin);
        let c = candidates.get(e.origin);
        if (c === undefined) {
          c = { origin: e.origin, verifiers: [], qpd: e.qpd };
          candidates.set(e.origin, c);
        }
        if (c.verifiers.some((v) => v.vkey === vkey)) {
          c.qpd = Math.min(c.qpd, e.qpd);
          continue;
        }
        const why = addVerifier(c.verifiers, r.verifier);
        if (why !== null) skip(e, 'ambiguous_key', why);
        else c.qpd = Math.min(c.qpd, e.qpd);
        continue;
      }
      if (!k.vkeys!.includes(vkey)) {
        origins.add(e.origin);
        conflicts.push({ line: e.line, origin: e.origin, vkey: e.vkey });
        continue;
      }
    }
    origins.add(e.origin);
    if (k.source === source) listedQpd.set(e.origin, Math.min(listedQpd.get(e.origin) ?? e.qpd, e.qpd));
  }

  const qpdChanges: { origin: string; qpd: number }[] = [];
  for (const [origin, qpd] of listedQpd) {
    const clamped = Math.min(qpd, limits.maxQpd);
    if (clamped !== known.get(origin)!.qpd) qpdChanges.push({ origin, qpd: clamped });
  }

  const room = Math.max(0, limits.maxOrigins - input.importedCount);
  const fresh = [...candidates.values()].filter((c) => c.verifiers.length > 0);
  const take = Math.min(fresh.length, limits.maxNew, room);
  const added = fresh.slice(0, take).map((c) => ({ origin: c.origin, verifiers: c.verifiers, qpd: Math.min(c.qpd, limits.maxQpd) }));
  const rest = fresh.length - take;
  // What room allows beyond maxNew waits for the next read; the rest is over the node's limit.
  const deferred = Math.min(rest, Math.max(0, room - take));
  return { added, qpdChanges, conflicts, skipped, deferred, overLimit: rest - deferred, origins: origins.size };
}
