/**
 * The logs this witness cosigns for (SPEC §5).
 *
 * Sources:
 *  - the logs file (`--logs FILE`, JSON or YAML by extension), authoritative for its origins:
 *
 *      {"logs": [{"origin": "example.com/log",
 *                 "keys": ["example.com/log+<hex id>+<b64 key>", …],   // ≥ 1 signed-note vkeys, type 0x01 or 0x06
 *                 "qpd": 86400}]}                                    // optional, add-checkpoint requests per day
 *
 *    Unknown members are refused; origins are unique; this node's own log origin is refused; an
 *    origin's keys are distinct and no two share key name and key ID. A vkey's name is the key name
 *    its signature lines carry; it need not equal the origin (the logs/v0 format allows both).
 *  - witness-network `logs/v0` lists (`--logs-list FILE`, repeatable; parsed in log-list.ts): they only ever ADD origins.
 *    An origin in the logs file is never taken from a list; an origin imported from a list keeps
 *    the keys it was first imported with for the life of the process (a list that later shows other
 *    keys is reported, not followed; a new qpd is followed); an origin that disappears from a list
 *    stays.
 *    After a restart the lists are read afresh.
 *
 * Each file is reloaded on its own (SIGHUP, or a new file renamed into place: src/config/reloadable.ts);
 * a file that fails to load keeps its previous copy. Requests read one merged snapshot.
 */
import { readDocument } from '../config/config-file.ts';
import { Reloadable } from '../config/reloadable.ts';
import type { NoteVerifier } from '../note/vkey.ts';
import { LogsConfigError } from './errors.ts';
import { MAX_QPD, addVerifier, fitsMlDsaOrigin, isValidOrigin, parseLogVkey } from './log-keys.ts';
import { loadLogList, type ResolvedListEntry } from './log-list.ts';

export { MAX_QPD, isValidOrigin } from './log-keys.ts';
export { parseLogList, resolveLogList, loadLogList } from './log-list.ts';
export type { LogListEntry, ResolvedListEntry } from './log-list.ts';

/** A log this witness knows: its origin, the keys that may sign its checkpoints, its quota. */
export interface KnownLog {
  readonly origin: string;
  /** Note verifiers, type 0x01 (Ed25519) or 0x06 (ML-DSA-44), at least one. */
  readonly verifiers: readonly NoteVerifier[];
  /** add-checkpoint requests per day; undefined = no per-origin quota. */
  readonly qpd: number | undefined;
  /** Where it comes from: `logs file` or `list <path>`. */
  readonly source: string;
}

export type KnownLogs = ReadonlyMap<string, KnownLog>;

function configError(message: string): LogsConfigError {
  return new LogsConfigError('invalid_logs_config', message);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** What the cosign keys require of the logs (SPEC §5.3). */
export interface LogsPolicy {
  /** An ML-DSA-44 cosign key is configured: origins over 255 bytes cannot be cosigned and are refused. */
  readonly mlDsaCosignKey?: boolean | undefined;
}

/** Validate a parsed logs document (JSON or YAML). Pure. Throws LogsConfigError `invalid_logs_config`. */
export function parseLogsConfig(doc: unknown, ownOrigin?: string, policy: LogsPolicy = {}): KnownLog[] {
  if (!isRecord(doc)) throw configError('the logs file must be an object {"logs": [...]}');
  for (const k of Object.keys(doc)) if (k !== 'logs') throw configError(`unknown member ${JSON.stringify(k)} (expected only "logs")`);
  const list = doc.logs;
  if (!Array.isArray(list)) throw configError('"logs" must be an array');
  const seen = new Set<string>();
  return list.map((entry: unknown, i): KnownLog => {
    const at = `/logs/${i}`;
    if (!isRecord(entry)) throw configError(`${at}: must be an object {"origin", "keys", "qpd"?}`);
    for (const k of Object.keys(entry)) {
      if (k !== 'origin' && k !== 'keys' && k !== 'qpd') throw configError(`${at}: unknown member ${JSON.stringify(k)}`);
    }
    const { origin, keys, qpd } = entry;
    if (typeof origin !== 'string' || !isValidOrigin(origin))
      throw configError(`${at}/origin: must be a non-empty line without control characters`);
    if (seen.has(origin)) throw configError(`${at}/origin: ${JSON.stringify(origin)} is listed twice`);
    if (policy.mlDsaCosignKey === true && !fitsMlDsaOrigin(origin))
      throw configError(`${at}/origin: longer than 255 bytes, which an ML-DSA-44 cosign key cannot sign (SPEC §5.3)`);
    seen.add(origin);
    if (ownOrigin !== undefined && origin === ownOrigin) {
      throw configError(`${at}/origin: ${JSON.stringify(origin)} is this node's own log origin; a witness does not cosign its own log`);
    }
    if (!Array.isArray(keys) || keys.length === 0) throw configError(`${at}/keys: must be a non-empty array of vkeys`);
    const verifiers: NoteVerifier[] = [];
    keys.forEach((k: unknown, j) => {
      if (typeof k !== 'string') throw configError(`${at}/keys/${j}: must be a vkey string`);
      let v: NoteVerifier;
      try {
        v = parseLogVkey(k);
      } catch (e) {
        throw configError(`${at}/keys/${j}: ${(e as Error).message}`);
      }
      const why = addVerifier(verifiers, v);
      if (why !== null) throw configError(`${at}/keys/${j}: ${why}`);
    });
    if (qpd !== undefined && (typeof qpd !== 'number' || !Number.isInteger(qpd) || qpd < 1 || qpd > MAX_QPD)) {
      throw configError(`${at}/qpd: must be an integer 1..${MAX_QPD}`);
    }
    return { origin, verifiers, qpd, source: 'logs file' };
  });
}

/** Read and validate a logs file (JSON, or YAML for .yaml/.yml). */
export function loadLogsFile(path: string, ownOrigin?: string, policy: LogsPolicy = {}): KnownLog[] {
  let doc: unknown;
  try {
    doc = readDocument(path);
  } catch (e) {
    throw configError(`${path}: ${(e as Error).message}`);
  }
  try {
    return parseLogsConfig(doc, ownOrigin, policy);
  } catch (e) {
    throw configError(`${path}: ${(e as Error).message}`);
  }
}

export interface MergeNotice {
  readonly origin: string | undefined;
  readonly source: string;
  readonly message: string;
}

function sameKeys(a: KnownLog, b: KnownLog): boolean {
  if (a.verifiers.length !== b.verifiers.length) return false;
  const set = new Set(a.verifiers.map((v) => v.vkey));
  return b.verifiers.every((v) => set.has(v.vkey));
}

/**
 * Merge the logs file with the lists (pure). `imported` holds the origins imported from lists so
 * far; it is updated in place and only ever grows, so that a list can never remove a log or change
 * its keys. An origin listed several times (in one list or several) gets the union of its listed
 * keys and the smallest listed qpd when it is first imported; later, only its qpd follows the lists
 * (when they give one). Notices say what was skipped or ignored.
 */
export function mergeKnownLogs(
  configured: readonly KnownLog[],
  lists: readonly { source: string; entries: readonly ResolvedListEntry[] }[],
  imported: Map<string, KnownLog>,
  ownOrigin?: string,
  policy: LogsPolicy = {},
): { logs: Map<string, KnownLog>; notices: MergeNotice[] } {
  const notices: MergeNotice[] = [];
  const logs = new Map<string, KnownLog>();
  for (const l of configured) logs.set(l.origin, l);

  const candidates = new Map<string, { verifiers: NoteVerifier[]; qpd: number | undefined; source: string }>();
  for (const { source, entries } of lists) {
    for (const e of entries) {
      if (!e.ok) {
        notices.push({ origin: e.origin, source, message: `line ${e.line}: skipped: ${e.reason}` });
        continue;
      }
      if (ownOrigin !== undefined && e.origin === ownOrigin) {
        notices.push({ origin: e.origin, source, message: `line ${e.line}: skipped: this node's own log origin` });
        continue;
      }
      if (policy.mlDsaCosignKey === true && !fitsMlDsaOrigin(e.origin)) {
        notices.push({
          origin: undefined,
          source,
          message: `line ${e.line}: skipped: origin over 255 bytes (an ML-DSA-44 cosign key cannot sign it)`,
        });
        continue;
      }
      let c = candidates.get(e.origin);
      if (c === undefined) {
        c = { verifiers: [], qpd: e.qpd, source };
        candidates.set(e.origin, c);
      } else if (e.qpd !== undefined) {
        c.qpd = c.qpd === undefined ? e.qpd : Math.min(c.qpd, e.qpd);
      }
      if (c.verifiers.some((v) => v.vkey === e.verifier.vkey)) continue;
      const why = addVerifier(c.verifiers, e.verifier);
      if (why !== null) notices.push({ origin: e.origin, source, message: `line ${e.line}: key skipped: ${why}` });
    }
  }

  for (const [origin, c] of candidates) {
    if (logs.has(origin)) continue; // the logs file is authoritative for its origins
    const listed: KnownLog = { origin, verifiers: c.verifiers, qpd: c.qpd, source: `list ${c.source}` };
    const before = imported.get(origin);
    if (before === undefined) {
      imported.set(origin, listed);
      continue;
    }
    if (!sameKeys(before, listed)) {
      notices.push({
        origin,
        source: c.source,
        message: "listed with different keys; keeping the keys first imported (a list never changes a log's keys)",
      });
    }
    // The quota is capacity planning, not trust: follow the lists' current qpd when they give one.
    if (c.qpd !== undefined && c.qpd !== before.qpd) imported.set(origin, { ...before, qpd: c.qpd });
  }
  for (const [origin, l] of imported) if (!logs.has(origin)) logs.set(origin, l);
  return { logs, notices };
}

export interface KnownLogsEvents {
  /** A file was (re)loaded (or everything at start) and the merged view recomputed. */
  loaded?: (source: string, logs: KnownLogs) => void;
  /** A file failed to reload (the previous copy stays). */
  failed?: (reason: string) => void;
  notice?: (n: MergeNotice) => void;
}

/**
 * The merged, reloadable view of the logs file and the lists. The constructor loads everything and
 * throws LogsConfigError if any file is bad (start-up refuses a bad file).
 */
export class KnownLogsSource {
  private readonly file: Reloadable<KnownLog[]> | undefined;
  private readonly lists: { path: string; r: Reloadable<ResolvedListEntry[]> }[];
  private readonly imported = new Map<string, KnownLog>();
  private readonly ownOrigin: string | undefined;
  private readonly policy: LogsPolicy;
  private readonly events: KnownLogsEvents;
  private snapshot: KnownLogs = new Map();

  constructor(opts: {
    logsFile?: string | undefined;
    logsLists?: readonly string[] | undefined;
    ownOrigin?: string | undefined;
    policy?: LogsPolicy | undefined;
    events?: KnownLogsEvents;
  }) {
    this.ownOrigin = opts.ownOrigin;
    this.policy = opts.policy ?? {};
    this.events = opts.events ?? {};
    const own = opts.ownOrigin;
    const failed = (reason: string): void => {
      this.events.failed?.(reason);
    };
    this.file =
      opts.logsFile === undefined
        ? undefined
        : new Reloadable(opts.logsFile, (p) => loadLogsFile(p, own, opts.policy), {
            loaded: (s) => {
              this.recompute(`${opts.logsFile} (${s})`);
            },
            failed,
          });
    this.lists = (opts.logsLists ?? []).map((path) => ({
      path,
      r: new Reloadable(path, loadLogList, {
        loaded: (s) => {
          this.recompute(`${path} (${s})`);
        },
        failed,
      }),
    }));
    this.recompute('start');
  }

  current(): KnownLogs {
    return this.snapshot;
  }

  /** Re-read every file now (as SIGHUP does); returns false if any failed (its old copy stays). */
  reload(): boolean {
    let ok = this.file?.reload('reload') ?? true;
    for (const l of this.lists) ok = l.r.reload('reload') && ok;
    return ok;
  }

  start(debounceMs = 1000): void {
    this.file?.start(debounceMs);
    for (const l of this.lists) l.r.start(debounceMs);
  }

  stop(): void {
    this.file?.stop();
    for (const l of this.lists) l.r.stop();
  }

  private recompute(source: string): void {
    const { logs, notices } = mergeKnownLogs(
      this.file?.current() ?? [],
      this.lists.map((l) => ({ source: l.path, entries: l.r.current() })),
      this.imported,
      this.ownOrigin,
      this.policy,
    );
    this.snapshot = logs;
    for (const n of notices) this.events.notice?.(n);
    this.events.loaded?.(source, logs);
  }
}
