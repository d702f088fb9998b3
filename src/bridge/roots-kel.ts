/**
 * Bridge roots from KERI key event logs (SPEC §7.1 rev 4): the trusted-roots entries without `keys`
 * (*KEL roots*, `{"id":"did:keri:<P>"}`) take their current keys from P's accepted KEL state, read
 * from `--kel-source dir:|git:` with the witness's §3.5 machinery (src/registry's KelEvaluator: the
 * worker thread with its heap limit, failure isolation, aggregate bounds, caching, rollback) and
 * src/anchor/kel-registry.ts's `registryFromKels` (the same "who has a usable state" rules).
 *
 * A reload reads the store's `tb_kel_tips`, evaluates the source (the trusted roots and their
 * delegator chains first, then every other identifier in name order), raises the tips durably,
 * then publishes an immutable snapshot. Requests read the snapshot only: no I/O at request time.
 * Reloads come from SIGHUP, a rename in a `dir:` source (debounced 1 s), the poll timer and a
 * change of the trusted-roots file; they run one at a time, requests made meanwhile merged into one.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename } from 'node:path';
import { shadowedParties, type KelView } from '../anchor/kel-registry.ts';
import type { RegistryFile } from '../anchor/registry.ts';
import type { KelEvaluation, KelLimits } from '../keri/index.ts';
import { KEL_FILE_PATTERN } from '../registry/dir-source.ts';
import { DEFAULT_KEL_AGGREGATE, KelEvaluator, type KelAggregateLimits, type SourceEvaluation } from '../registry/kel-evaluator.ts';
import { describeKelSource, type KelSourceSpec } from '../registry/source.ts';
import { tipsToRaise } from '../registry/tip-raise.ts';
import type { BridgeKelTip, KelTipStore } from './kel-tips.ts';
import type { TrustedRoots } from './trusted-roots.ts';

const DID_KERI = 'did:keri:';

export interface KelRootCounts {
  accepted: number;
  pending: number;
  invalid: number;
}

export interface KelRootsEvents {
  loaded?: (why: string, counts: KelRootCounts) => void;
  failed?: (why: string, reason: string) => void;
  kelInvalid?: (e: { prefix: string; reason: string; seq: number | null; source: string; detail: string | null }) => void;
  /** Entries with static `keys` whose KEL is in the source (SPEC §7.1: shadowed, never a load error), once per change. */
  shadowed?: (ids: string[]) => void;
  workerDied?: (prefix: string, reason: string) => void;
  /** Two sources hold accepted copies of `prefix` that diverge (`fork`: the last accepted state stays). */
  sourceConflict?: (prefix: string, detail: string) => void;
}

export interface KelRootsOptions {
  /** The `--kel-source`s in flag order (SPEC §7.1: repeatable; each prefix's copies compared as §3.5, the superseding one in force). */
  sources: readonly KelSourceSpec[];
  limits: KelLimits;
  aggregate?: KelAggregateLimits;
  /** `--kel-poll-seconds` (0: no timer). */
  pollSeconds: number;
  store: KelTipStore;
  /** The trusted roots in force (the reloadable file). */
  roots: () => TrustedRoots;
  events?: KelRootsEvents;
}

/** What one request reads: each prefix's state in force and the store's tips as of the last reload. */
export interface KelRootSnapshot {
  readonly views: ReadonlyMap<string, KelView>;
  readonly tips: ReadonlyMap<string, BridgeKelTip>;
}

export interface KelRootsStatus {
  sources: string[];
  roots: KelRootCounts;
  /** ISO time of the last reload attempt, or null. */
  last_reload: string | null;
  last_reload_ok: boolean | null;
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const EMPTY_FILE: RegistryFile = { entries: [] };

export class KelRoots {
  private readonly opts: KelRootsOptions;
  private readonly evaluator: KelEvaluator;
  private views: Map<string, KelView> = new Map();
  private snap: KelRootSnapshot = { views: new Map(), tips: new Map() };
  private shadowFile: RegistryFile | undefined;
  private shadowed = new Set<string>();
  private readonly logged = new Map<string, string>();
  private last: { at: number; ok: boolean } | null = null;
  private running: Promise<boolean> | undefined;
  private queued: Promise<boolean> | undefined;
  private stopped = false;
  private readonly watchers: FSWatcher[] = [];
  private debounce: NodeJS.Timeout | undefined;
  private poll: NodeJS.Timeout | undefined;
  /** `registry_kel_shadowed_total` */
  shadowedTotal = 0;
  /** `registry_kel_source_conflicts_total` */
  sourceConflictsTotal = 0;
  private readonly onHup = (): void => void this.reload('SIGHUP');

  private constructor(opts: KelRootsOptions) {
    this.opts = opts;
    this.evaluator = new KelEvaluator(opts.sources, opts.limits, opts.aggregate ?? DEFAULT_KEL_AGGREGATE, {
      workerDied: (prefix, reason) => opts.events?.workerDied?.(prefix, reason),
      sourceConflict: (prefix, detail) => {
        this.sourceConflictsTotal++;
        opts.events?.sourceConflict?.(prefix, detail);
      },
    });
  }

  /** Evaluate the source once (a KEL root with no KEL yet is no error); throws when the source cannot be listed or the store read. */
  static async open(opts: KelRootsOptions): Promise<KelRoots> {
    const r = new KelRoots(opts);
    try {
      await r.load('start', true);
    } catch (e) {
      await r.evaluator.stop();
      throw e;
    }
    return r;
  }

  private file(): RegistryFile {
    return this.opts.roots().file ?? EMPTY_FILE;
  }

  /** The snapshot a request uses. */
  snapshot(): KelRootSnapshot {
    const file = this.file();
    if (this.shadowFile !== file) {
      this.shadowFile = file;
      this.reportShadowed(file);
    }
    return this.snap;
  }

  /** The KEL roots by status (`bridge_kel_roots{status}`, `/health` `kel.roots`): accepted = has a state in force. */
  status(): KelRootsStatus {
    const snap = this.snapshot();
    const roots: KelRootCounts = { accepted: 0, pending: 0, invalid: 0 };
    for (const id of this.opts.roots().kelRoots ?? []) {
      const view = snap.views.get(id.slice(DID_KERI.length));
      if (view?.state != null) roots.accepted++;
      else if (view?.status === 'pending') roots.pending++;
      else roots.invalid++;
    }
    return {
      sources: this.opts.sources.map(describeKelSource),
      roots,
      last_reload: this.last === null ? null : new Date(this.last.at).toISOString(),
      last_reload_ok: this.last?.ok ?? null,
    };
  }

  reload(why: string): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    if (this.running === undefined) {
      this.running = this.load(why, false).finally(() => {
        this.running = undefined;
      });
      return this.running;
    }
    this.queued ??= this.running.then(() => {
      this.queued = undefined;
      return this.reload(why);
    });
    return this.queued;
  }

  start(): void {
    process.on('SIGHUP', this.onHup);
    for (const source of this.opts.sources) {
      if (source.kind !== 'dir') continue;
      try {
        const watcher = watch(source.path, { persistent: false }, (event, name) => {
          if (event !== 'rename' || name === null || !KEL_FILE_PATTERN.test(basename(name))) return;
          clearTimeout(this.debounce);
          this.debounce = setTimeout(() => void this.reload('rename'), 1000);
          this.debounce.unref();
        });
        watcher.on('error', () => undefined);
        this.watchers.push(watcher);
      } catch {
        // the poll timer and SIGHUP still reload
      }
    }
    if (this.opts.pollSeconds > 0) {
      this.poll = setInterval(() => void this.reload('poll'), this.opts.pollSeconds * 1000);
      this.poll.unref();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    process.off('SIGHUP', this.onHup);
    for (const w of this.watchers) w.close();
    clearTimeout(this.debounce);
    clearInterval(this.poll);
    await this.queued?.catch(() => undefined);
    await this.running?.catch(() => undefined);
    await this.evaluator.stop();
  }

  private async load(why: string, first: boolean): Promise<boolean> {
    const at = Date.now();
    try {
      const stored = await this.opts.store.kelTips();
      const tips = new Map(stored.map((t) => [t.prefix, t]));
      const priority: string[] = [];
      for (const e of this.file().entries) {
        for (const id of [e.id, e.delegator]) if (id?.startsWith(DID_KERI) === true) priority.push(id.slice(DID_KERI.length));
      }
      const result = await this.evaluator.evaluate(tips, priority, (partial) => this.publish(partial, tips));
      await this.publish(result, tips);
      const counts: KelRootCounts = { accepted: 0, pending: 0, invalid: 0 };
      for (const e of result.evaluations.values()) counts[e.status]++;
      this.report(result.evaluations);
      this.last = { at, ok: true };
      this.opts.events?.loaded?.(why, counts);
      return true;
    } catch (e) {
      this.last = { at, ok: false };
      if (first) throw e;
      this.opts.events?.failed?.(why, message(e));
      return false;
    }
  }

  /** Raise the store's tips to the newly accepted states (durably, first), then publish. */
  private async publish(result: SourceEvaluation, tips: Map<string, BridgeKelTip>): Promise<void> {
    const raised = tipsToRaise(result.evaluations.values(), tips);
    if (raised.length > 0) await this.opts.store.raiseKelTips(raised);
    const views = new Map<string, KelView>();
    for (const e of result.evaluations.values()) {
      views.set(e.prefix, {
        status: e.status,
        state: e.state,
        reason: e.reason,
        detail: e.detail,
        delegatedBy: result.delegatedBy.get(e.prefix) ?? null,
      });
    }
    this.views = views;
    this.snap = { views, tips: new Map(tips) };
    this.shadowFile = undefined;
    this.snapshot();
  }

  private reportShadowed(file: RegistryFile): void {
    const now = new Set(shadowedParties(file, this.views));
    const added = [...now].filter((id) => !this.shadowed.has(id));
    this.shadowed = now;
    if (added.length > 0) {
      this.shadowedTotal += added.length;
      this.opts.events?.shadowed?.(added);
    }
  }

  private report(evaluations: ReadonlyMap<string, KelEvaluation>): void {
    for (const prefix of this.logged.keys()) if (!evaluations.has(prefix)) this.logged.delete(prefix);
    for (const e of evaluations.values()) {
      if (e.status !== 'invalid' || e.reason === null) {
        this.logged.delete(e.prefix);
        continue;
      }
      const key = `${e.reason}|${e.seq}|${e.detail}|${e.source}`;
      if (this.logged.get(e.prefix) === key) continue;
      this.logged.set(e.prefix, key);
      this.opts.events?.kelInvalid?.({ prefix: e.prefix, reason: e.reason, seq: e.seq, source: e.source, detail: e.detail });
    }
  }
}
