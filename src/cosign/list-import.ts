/**
 * Log lists from files and URLs (SPEC §5.5): each `--logs-list SRC` is read at start and every
 * interval; a good read is planned (list-merge.ts) and stored (CosignStateStorage.importLogs, each
 * new origin with its empty state in one transaction), so imports survive restarts, and the
 * imported logs are read back from the store. A read that fails keeps the previous state; at start
 * a file that fails refuses start-up, a URL that fails is logged and the stored imports serve.
 *
 *   const lists = new LogListImporter({ store, sources, intervalSeconds, limits, rules, configured, onChange });
 *   await lists.start();     // stored imports, then every source once
 *   lists.imported();        // origin → KnownLog (verifiers parsed on first use)
 *   lists.startTimers(); lists.stop();
 */
import type { NoteVerifier } from '../note/vkey.ts';
import { isStoreUnavailable } from '../store/errors.ts';
import { KeyedLock } from '../store/keyed-lock.ts';
import type { CosignStateStorage, ImportedLog } from '../store/types.ts';
import { EMPTY_ROOT } from '../tlog/hash.ts';
import { ListFetchError, LogsConfigError } from './errors.ts';
import { reportListRead, type ListLogger } from './list-report.ts';
import type { ListSource } from './list-source.ts';
import {
  candidateVkeys,
  classifyCandidate,
  finishListImport,
  importRoom,
  scanList,
  type KnownListLog,
  type KnownListLogs,
  type ListCandidate,
  type ListConflict,
  type ListImportPlan,
  type ListLimits,
} from './list-merge.ts';
import type { LogListMetrics } from './list-metrics.ts';
import { resolveLogKey, type LogKeyResult } from './log-keys.ts';
import { parseLogList, type LogListEntry, type LogListRules, type SkippedListEntry } from './log-list.ts';
import type { KnownLog, KnownLogs } from './logs.ts';

export const DEFAULT_LIST_LIMITS: ListLimits = { maxQpd: 86_400, maxNew: 50_000, maxOrigins: 200_000 };
export const DEFAULT_LIST_INTERVAL_SECONDS = 3600;
export const MIN_LIST_INTERVAL_SECONDS = 300;
export const MAX_LIST_INTERVAL_SECONDS = 7 * 86400;

/** Key parsing runs in slices of this many ms between turns of the event loop (an Ed25519 key check costs 0.5–2 ms). */
const KEY_SLICE_MS = 10;
/** Origins recorded per store transaction. */
const IMPORT_CHUNK = 1000;

export interface LogListImporterOptions {
  store: CosignStateStorage;
  sources: readonly ListSource[];
  intervalSeconds?: number | undefined;
  limits?: Partial<ListLimits> | undefined;
  rules?: LogListRules | undefined;
  /** The logs file's origins now (disabled included): authoritative, never imported. */
  configured?: (() => ReadonlyMap<string, KnownListLog>) | undefined;
  /** The store is shared by several processes (PostgreSQL replicas): re-read imports before each merge. */
  sharedStore?: boolean | undefined;
  /** Called after the imported logs changed. */
  onChange?: (() => void) | undefined;
  /** Clock in milliseconds (default Date.now). */
  now?: (() => number) | undefined;
  metrics?: LogListMetrics | undefined;
  log?: ListLogger | undefined;
  /** How a vkey is checked (default resolveLogKey; tests count the checks). */
  resolveKey?: ((vkey: string) => LogKeyResult) | undefined;
}

/** What one read did (for tests and logs). */
export interface ListReadResult {
  readonly source: string;
  readonly outcome: string;
  readonly plan?: ListImportPlan;
  /** Origins recorded by this read (another replica may have recorded some first). */
  readonly added?: readonly string[];
  readonly error?: string;
}

export class LogListImporter {
  private readonly store: CosignStateStorage;
  readonly sources: readonly ListSource[];
  private readonly intervalMs: number;
  private readonly limits: ListLimits;
  private readonly rules: LogListRules;
  private readonly configured: () => ReadonlyMap<string, KnownListLog>;
  private readonly onChange: () => void;
  private readonly now: () => number;
  private readonly metrics: LogListMetrics | undefined;
  private readonly log: ListLogger | undefined;
  private readonly shared: boolean;
  /** Parsed keys by vkey, shared by every imported log (parsing is the costly part). */
  private readonly keyCache = new Map<string, NoteVerifier | null>();
  /** Per source, the invalid check results of the vkeys its latest read names (SPEC §5.5 rev 4: cached across reads). */
  private readonly invalidKeys = new Map<string, Map<string, LogKeyResult>>();
  private readonly resolveKey: (vkey: string) => LogKeyResult;
  private records = new Map<string, ImportedLog>();
  private view: Map<string, KnownLog> = new Map();
  /** Merges run one at a time (reads may overlap). */
  private readonly lane = new KeyedLock<null>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(opts: LogListImporterOptions) {
    this.store = opts.store;
    this.sources = opts.sources;
    const labels = new Set<string>();
    for (const s of opts.sources) {
      if (labels.has(s.label)) throw new LogsConfigError('invalid_log_list', `--logs-list ${s.label} is given twice`);
      labels.add(s.label);
    }
    this.intervalMs = (opts.intervalSeconds ?? DEFAULT_LIST_INTERVAL_SECONDS) * 1000;
    this.limits = { ...DEFAULT_LIST_LIMITS, ...opts.limits };
    this.rules = opts.rules ?? {};
    this.configured = opts.configured ?? (() => new Map());
    this.onChange = opts.onChange ?? (() => undefined);
    this.now = opts.now ?? Date.now;
    this.metrics = opts.metrics;
    this.log = opts.log;
    this.shared = opts.sharedStore === true;
    this.resolveKey = opts.resolveKey ?? resolveLogKey;
  }

  /** The imported logs (the logs file may hide some of them). */
  imported(): KnownLogs {
    return this.view;
  }

  /**
   * Load the stored imports, then read every source once. Throws LogsConfigError
   * `invalid_log_list` when a file source cannot be read or parsed (start-up refuses it).
   */
  async start(): Promise<ListReadResult[]> {
    await this.reloadStored();
    this.onChange();
    const results = await Promise.all(this.sources.map((s) => this.read(s)));
    results.forEach((r, i) => {
      const s = this.sources[i]!;
      if (s.kind === 'file' && r.error !== undefined) {
        throw new LogsConfigError('invalid_log_list', `--logs-list ${s.label}: ${r.error}`);
      }
    });
    return results;
  }

  /** Read every source now (SIGHUP). */
  refreshAll(): Promise<ListReadResult[]> {
    return Promise.all(this.sources.map((s) => this.read(s)));
  }

  /** Re-read each source every interval (timers do not keep the process alive). */
  startTimers(): void {
    for (const s of this.sources) this.schedule(s);
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private schedule(s: ListSource): void {
    if (this.stopped) return;
    const t = setTimeout(() => {
      void this.read(s).finally(() => {
        this.schedule(s);
      });
    }, this.intervalMs);
    t.unref();
    this.timers.set(s.label, t);
  }

  /** Read one source and apply it; never throws (the outcome says what happened). */
  async read(s: ListSource): Promise<ListReadResult> {
    let text: string;
    try {
      text = await s.read();
    } catch (e) {
      const outcome = e instanceof ListFetchError ? e.code : 'fetch_failed';
      return this.failed(s, outcome, e);
    }
    let parsed;
    try {
      parsed = parseLogList(text, this.rules);
    } catch (e) {
      return this.failed(s, e instanceof LogsConfigError ? e.code : 'invalid_log_list', e);
    }
    try {
      return await this.lane.run(null, () => this.apply(s, parsed.entries, parsed.skipped));
    } catch (e) {
      if (isStoreUnavailable(e)) return this.failed(s, 'store_unavailable', e);
      // A bug, not the list's fault: reported, and the timer keeps running.
      this.log?.error?.({ list: s.label, err: e }, 'cosign: log list could not be applied');
      return this.failed(s, 'apply_failed', e);
    }
  }

  private failed(s: ListSource, outcome: string, e: unknown): ListReadResult {
    const error = e instanceof Error ? e.message : String(e);
    this.metrics?.fetches.inc({ source: s.label, outcome });
    this.log?.warn({ list: s.label, outcome, reason: error }, 'cosign: log list read failed; keeping the previous state');
    return { source: s.label, outcome, error };
  }

  private async apply(s: ListSource, entries: readonly LogListEntry[], parseSkips: SkippedListEntry[]): Promise<ListReadResult> {
    // A shared store (PostgreSQL replicas): another replica may have imported meanwhile.
    if (this.shared) await this.reloadStored();
    const configured = this.configured();
    const known: KnownListLogs = { get: (origin) => configured.get(origin) ?? this.records.get(origin) };
    const scan = scanList({ source: s.label, entries, known, maxQpd: this.limits.maxQpd, cached: (v) => this.cachedKey(v) });
    const room = importRoom(this.limits, this.records.size);
    const { selected, conflicts, examined } = await this.select(scan.candidates, room.now);
    const vkeys = candidateVkeys(selected);
    const { keys, checked } = await this.checkKeys(vkeys);
    this.rememberInvalid(s.label, entries, keys);
    const plan = finishListImport({ scan, selected, conflicts, examined, keys, room, maxQpd: this.limits.maxQpd, checked });
    const at = Math.floor(this.now() / 1000);
    for (const a of plan.added) for (const v of a.verifiers) this.keyCache.set(v.vkey, v);
    const records = plan.added.map((a) => ({
      origin: a.origin,
      vkeys: a.verifiers.map((v) => v.vkey),
      qpd: a.qpd,
      source: s.label,
      importedAt: at,
    }));
    // One transaction per chunk (each origin's record and empty state commit together), so a
    // large import does not hold the write lane, or the event loop, for seconds.
    const added: string[] = [];
    for (let i = 0; i < records.length; i += IMPORT_CHUNK) {
      added.push(...(await this.store.importLogs(records.slice(i, i + IMPORT_CHUNK), EMPTY_ROOT)));
    }
    await this.store.setImportedQpd(plan.qpdChanges);
    if (added.length > 0 || plan.qpdChanges.length > 0) {
      if (this.shared) await this.reloadStored();
      else this.applyLocally(records, added, plan.qpdChanges);
      this.onChange();
    }
    reportListRead({ metrics: this.metrics, log: this.log, nowMs: this.now() }, s, plan, [...parseSkips, ...plan.skipped], added.length);
    return { source: s.label, outcome: 'ok', plan, added };
  }

  /**
   * The first candidates this read imports (at most `room`): each looked up in the store, in chunks,
   * since an origin removed from the logs file keeps its state, bound to its keys (SPEC §5 rev 4).
   */
  private async select(
    candidates: readonly ListCandidate[],
    room: number,
  ): Promise<{ selected: ListCandidate[]; conflicts: ListConflict[]; examined: number }> {
    const selected: ListCandidate[] = [];
    const conflicts: ListConflict[] = [];
    let examined = 0;
    while (selected.length < room && examined < candidates.length) {
      const chunk = candidates.slice(examined, examined + Math.min(IMPORT_CHUNK, room - selected.length + 16));
      const stored = await this.store.originKeys(chunk.map((c) => c.origin));
      for (const c of chunk) {
        if (selected.length >= room) break;
        examined++;
        const r = classifyCandidate(c, stored.get(c.origin));
        if (r === 'new') selected.push(c);
        else conflicts.push(...r);
      }
    }
    return { selected, conflicts, examined };
  }

  /** A vkey's cached check: a key in use, or one found invalid by the latest read of any source. */
  private cachedKey(vkey: string): LogKeyResult | undefined {
    const v = this.keyCache.get(vkey);
    if (v !== undefined && v !== null) return { ok: true, verifier: v };
    for (const m of this.invalidKeys.values()) {
      const r = m.get(vkey);
      if (r !== undefined) return r;
    }
    return undefined;
  }

  /** Keep, for this source, the invalid results of the vkeys its latest read names (bounded by the list). */
  private rememberInvalid(source: string, entries: readonly LogListEntry[], checked: ReadonlyMap<string, LogKeyResult>): void {
    const next = new Map<string, LogKeyResult>();
    for (const e of entries) {
      const r = checked.get(e.vkey) ?? this.cachedKey(e.vkey);
      if (r !== undefined && !r.ok) next.set(e.vkey, r);
    }
    this.invalidKeys.set(source, next);
  }

  /** Check keys (cached by vkey text) in slices of about 10 ms, so that requests keep being served meanwhile. */
  private async checkKeys(vkeys: readonly string[]): Promise<{ keys: Map<string, LogKeyResult>; checked: number }> {
    const keys = new Map<string, LogKeyResult>();
    let checked = 0;
    let slice = performance.now();
    for (const vkey of vkeys) {
      const hit = this.cachedKey(vkey);
      if (hit !== undefined) {
        keys.set(vkey, hit);
        continue;
      }
      if (performance.now() - slice > KEY_SLICE_MS) {
        await new Promise((r) => setImmediate(r));
        slice = performance.now();
      }
      checked++;
      keys.set(vkey, this.resolveKey(vkey));
    }
    return { keys, checked };
  }

  /** What this process just stored, without reading it back (the store has one writer). */
  private applyLocally(
    records: readonly ImportedLog[],
    added: readonly string[],
    qpdChanges: readonly { origin: string; qpd: number }[],
  ): void {
    const fresh = new Set(added);
    const view = new Map(this.view);
    for (const r of records) {
      if (!fresh.has(r.origin)) continue;
      this.records.set(r.origin, r);
      view.set(r.origin, this.knownLog(r));
    }
    for (const c of qpdChanges) {
      const r = this.records.get(c.origin);
      if (r === undefined) continue;
      const next = { ...r, qpd: c.qpd };
      this.records.set(c.origin, next);
      view.set(c.origin, this.knownLog(next));
    }
    this.view = view;
  }

  private async reloadStored(): Promise<void> {
    const rows = await this.store.listImportedLogs();
    const records = new Map<string, ImportedLog>();
    const view = new Map<string, KnownLog>();
    for (const r of rows) {
      records.set(r.origin, r);
      const before = this.view.get(r.origin);
      const same = before !== undefined && this.records.get(r.origin)?.qpd === r.qpd;
      view.set(r.origin, same ? before : this.knownLog(r));
    }
    this.records = records;
    this.view = view;
  }

  /** A stored import as a known log; its keys are parsed when a request first needs them. */
  private knownLog(r: ImportedLog): KnownLog {
    let verifiers: NoteVerifier[] | undefined;
    const parse = (): NoteVerifier[] =>
      r.vkeys.flatMap((vkey) => {
        let v = this.keyCache.get(vkey);
        if (v === undefined) {
          const res = this.resolveKey(vkey);
          v = res.ok ? res.verifier : null;
          this.keyCache.set(vkey, v);
          if (!res.ok) this.log?.warn({ origin: r.origin, code: res.code }, `cosign: imported log key unusable: ${res.message}`);
        }
        return v === null ? [] : [v];
      });
    return {
      origin: r.origin,
      qpd: r.qpd,
      source: `list ${r.source}`,
      get verifiers() {
        verifiers ??= parse();
        return verifiers;
      },
    };
  }
}
