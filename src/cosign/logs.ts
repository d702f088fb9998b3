/**
 * The logs this witness cosigns for (SPEC §5, §5.5).
 *
 * Sources:
 *  - the logs file (`--logs FILE`, JSON or YAML by extension), authoritative for its origins:
 *
 *      {"logs": [{"origin": "example.com/log",
 *                 "keys": ["example.com/log+<hex id>+<b64 key>", …],   // ≥ 1 signed-note vkeys, type 0x01 or 0x06
 *                 "qpd": 86400},                                    // optional, add-checkpoint requests per day
 *                {"origin": "imported.example/log", "disabled": true}]}   // switched off: 404 as unknown
 *
 *    Unknown members are refused; origins are unique; this node's own log origin is refused; an
 *    origin's keys are distinct and no two share key name and key ID. A vkey's name is the key name
 *    its signature lines carry; it need not equal the origin (the logs/v0 format allows both).
 *  - logs imported from logs/v0 lists (`--logs-list SRC`; list-import.ts), stored durably: they
 *    only ever add origins. An origin the logs file names (disabled or not) is never taken from
 *    the imports while it is named there.
 *
 * The logs file is reloaded on its own (SIGHUP, or a new file renamed into place:
 * src/config/reloadable.ts); a file that fails to load keeps its previous copy. Requests read one
 * merged snapshot.
 */
import { readDocument } from '../config/config-file.ts';
import { inputFileMessage } from '../config/input-file.ts';
import { Reloadable } from '../config/reloadable.ts';
import type { NoteVerifier } from '../note/vkey.ts';
import { LogsConfigError } from './errors.ts';
import { MAX_QPD, addVerifier, fitsMlDsaOrigin, isValidOrigin, parseLogVkey } from './log-keys.ts';
import type { KnownListLog } from './list-merge.ts';
import { isJsonObject } from '../encoding/json.ts';

export { MAX_QPD, isValidOrigin } from './log-keys.ts';
export { parseLogList } from './log-list.ts';
export type { LogListEntry, ParsedLogList } from './log-list.ts';

/** A log this witness knows: its origin, the keys that may sign its checkpoints, its quota. */
export interface KnownLog {
  readonly origin: string;
  /** Note verifiers, type 0x01 (Ed25519) or 0x06 (ML-DSA-44); at least one unless disabled. */
  readonly verifiers: readonly NoteVerifier[];
  /** add-checkpoint requests per day; undefined = no per-origin quota. */
  readonly qpd: number | undefined;
  /** Where it comes from: `logs file` or `list <source>`. */
  readonly source: string;
  /** Switched off in the logs file: answered as unknown, its stored state kept. */
  readonly disabled?: boolean;
}

export type KnownLogs = ReadonlyMap<string, KnownLog>;

function configError(message: string): LogsConfigError {
  return new LogsConfigError('invalid_logs_config', message);
}

/** What the cosign keys require of the logs (SPEC §5.3). */
export interface LogsPolicy {
  /** An ML-DSA-44 cosign key is configured: origins over 255 bytes cannot be cosigned and are refused. */
  readonly mlDsaCosignKey?: boolean | undefined;
}

/** Validate a parsed logs document (JSON or YAML). Pure. Throws LogsConfigError `invalid_logs_config`. */
export function parseLogsConfig(doc: unknown, ownOrigin?: string, policy: LogsPolicy = {}): KnownLog[] {
  if (!isJsonObject(doc)) throw configError('the logs file must be an object {"logs": [...]}');
  for (const k of Object.keys(doc)) if (k !== 'logs') throw configError(`unknown member ${JSON.stringify(k)} (expected only "logs")`);
  const list = doc.logs;
  if (!Array.isArray(list)) throw configError('"logs" must be an array');
  const seen = new Set<string>();
  return list.map((entry: unknown, i): KnownLog => {
    const at = `/logs/${i}`;
    if (!isJsonObject(entry)) throw configError(`${at}: must be an object {"origin", "keys", "qpd"?, "disabled"?}`);
    for (const k of Object.keys(entry)) {
      if (k !== 'origin' && k !== 'keys' && k !== 'qpd' && k !== 'disabled')
        throw configError(`${at}: unknown member ${JSON.stringify(k)}`);
    }
    const { origin, keys, qpd, disabled } = entry;
    if (typeof origin !== 'string' || !isValidOrigin(origin))
      throw configError(`${at}/origin: must be a non-empty line without control characters`);
    if (seen.has(origin)) throw configError(`${at}/origin: ${JSON.stringify(origin)} is listed twice`);
    if (policy.mlDsaCosignKey === true && !fitsMlDsaOrigin(origin))
      throw configError(`${at}/origin: longer than 255 bytes, which an ML-DSA-44 cosign key cannot sign (docs/protocol.md §5.3)`);
    seen.add(origin);
    if (ownOrigin !== undefined && origin === ownOrigin) {
      throw configError(`${at}/origin: ${JSON.stringify(origin)} is this node's own log origin; a witness does not cosign its own log`);
    }
    if (disabled !== undefined && typeof disabled !== 'boolean') throw configError(`${at}/disabled: must be true or false`);
    const off = disabled === true;
    // A disabled entry needs no keys (it switches an imported origin off); keys given are checked.
    if (!(off && keys === undefined) && (!Array.isArray(keys) || keys.length === 0))
      throw configError(`${at}/keys: must be a non-empty array of vkeys`);
    const verifiers: NoteVerifier[] = [];
    ((keys ?? []) as unknown[]).forEach((k: unknown, j) => {
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
    return { origin, verifiers, qpd, source: 'logs file', ...(off ? { disabled: true } : {}) };
  });
}

/** Read and validate a logs file (JSON, or YAML for .yaml/.yml). */
export function loadLogsFile(path: string, ownOrigin?: string, policy: LogsPolicy = {}): KnownLog[] {
  let doc: unknown;
  try {
    doc = readDocument(path);
  } catch (e) {
    throw configError(inputFileMessage('--logs', path, e));
  }
  try {
    return parseLogsConfig(doc, ownOrigin, policy);
  } catch (e) {
    throw configError(`--logs ${path}: ${(e as Error).message}`);
  }
}

/**
 * The cosigned set (pure): the logs file's enabled logs, then every imported log the logs file
 * does not name. A disabled logs-file entry hides the imported origin of that name.
 */
export function mergeKnownLogs(configured: readonly KnownLog[], imported: KnownLogs): Map<string, KnownLog> {
  const logs = new Map<string, KnownLog>();
  const named = new Set<string>();
  for (const l of configured) {
    named.add(l.origin);
    if (l.disabled !== true) logs.set(l.origin, l);
  }
  for (const [origin, l] of imported) if (!named.has(origin)) logs.set(origin, l);
  return logs;
}

/** The logs file's origins as a list import sees them (disabled entries: no key checks). */
export function configuredForLists(configured: readonly KnownLog[]): Map<string, KnownListLog> {
  return new Map(
    configured.map((l) => [
      l.origin,
      { vkeys: l.disabled === true ? undefined : l.verifiers.map((v) => v.vkey), source: undefined, qpd: l.qpd },
    ]),
  );
}

export interface KnownLogsEvents {
  /** The logs file was (re)loaded or the imports changed (or everything at start) and the merged view recomputed. */
  loaded?: (source: string, logs: KnownLogs) => void;
  /** The logs file failed to reload (the previous copy stays). */
  failed?: (reason: string) => void;
}

/**
 * The merged view of the logs file and the imported logs. The constructor loads the logs file and
 * throws LogsConfigError if it is bad (start-up refuses a bad file).
 */
export class KnownLogsSource {
  private readonly file: Reloadable<KnownLog[]> | undefined;
  private readonly imported: () => KnownLogs;
  private readonly events: KnownLogsEvents;
  private snapshot: KnownLogs = new Map();

  constructor(opts: {
    logsFile?: string | undefined;
    ownOrigin?: string | undefined;
    policy?: LogsPolicy | undefined;
    /** The imported logs now (list-import.ts); call `recompute` when they change. */
    imported?: (() => KnownLogs) | undefined;
    events?: KnownLogsEvents;
  }) {
    this.events = opts.events ?? {};
    this.imported = opts.imported ?? (() => new Map());
    const own = opts.ownOrigin;
    this.file =
      opts.logsFile === undefined
        ? undefined
        : new Reloadable(opts.logsFile, (p) => loadLogsFile(p, own, opts.policy), {
            loaded: (s) => {
              this.recompute(`${opts.logsFile} (${s})`);
            },
            failed: (reason) => this.events.failed?.(reason),
          });
    this.recompute('start');
  }

  current(): KnownLogs {
    return this.snapshot;
  }

  /** The logs file's entries now (disabled ones included). */
  configured(): readonly KnownLog[] {
    return this.file?.current() ?? [];
  }

  /** Re-read the logs file now (as SIGHUP does); false if it failed (its old copy stays). */
  reload(): boolean {
    return this.file?.reload('reload') ?? true;
  }

  start(debounceMs = 1000): void {
    this.file?.start(debounceMs);
  }

  stop(): void {
    this.file?.stop();
  }

  /** Rebuild the merged view (after the logs file or the imports changed). */
  recompute(source: string): void {
    this.snapshot = mergeKnownLogs(this.configured(), this.imported());
    this.events.loaded?.(source, this.snapshot);
  }
}
