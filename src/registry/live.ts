/**
 * The party registry with a KEL source (SPEC §3.5), live: the registry file (reloaded as §3.2) and
 * the KEL source (`dir:` reloaded on SIGHUP, on a rename in its directory (debounced 1 s) and every
 * poll interval; `git:` on SIGHUP and every poll interval) are combined into one immutable
 * Registry snapshot (src/anchor/kel-registry.ts) that requests read once each.
 *
 * A reload reads the store's `kel_tips`, has src/registry/kel-evaluator.ts evaluate the source one
 * identifier at a time in a worker thread (the registry's parties and their delegator chains
 * first), raises `kel_tips` to every newly accepted tip (durably, before the state is used), and
 * publishes the snapshot: once the parties and their delegator chains are evaluated, and again at
 * the end. Only a source that cannot be listed or a store that cannot be read fails the reload as
 * a whole (every current state is kept); anything about one identifier refuses that identifier
 * only. Reloads run one at a time; requests made meanwhile are merged into one more. SIGHUP
 * reloads the registry file and the source together and reports one outcome.
 *
 * With `ledger:` (SPEC §3.6.8) the KERI witness role reports each of its commits
 * (`ledgerCommitted`); a commit for a prefix the registry reads there schedules a reload 1 s later
 * (commits meanwhile join it: a burst is one reload, and a steady stream still reloads every
 * second). Another replica's commits are seen at the next poll.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename } from 'node:path';
import { registryFromKels, shadowedParties, type KelView } from '../anchor/kel-registry.ts';
import { parseRegistryFile, type Registry, type RegistryFile } from '../anchor/registry.ts';
import { readDocument } from '../config/config-file.ts';
import { readInputFile } from '../config/input-file.ts';
import { Reloadable } from '../config/reloadable.ts';
import type { KelEvaluation, KelLimits } from '../keri/index.ts';
import type { AnchorStateStorage, KelTip } from '../store/types.ts';
import { KEL_FILE_PATTERN, readKelDirectory } from './dir-source.ts';
import { readKelRepository, type GitKelCache } from './git-source.ts';
import { DEFAULT_KEL_AGGREGATE, KelEvaluator, type KelAggregateLimits, type SourceEvaluation } from './kel-evaluator.ts';
import { tipsToRaise } from './tip-raise.ts';
import { describeKelSource, type KelSourceRead, type KelSourceSpec } from './source.ts';
import { LedgerKelFeed, type LedgerFeedReads } from './ledger-source.ts';
import { KelSourceError } from './errors.ts';

export interface KelInvalidEvent {
  prefix: string;
  reason: string;
  seq: number | null;
  source: string;
  detail: string | null;
}

export interface KelRegistryEvents {
  /** A reload published a new snapshot (`why`: start, SIGHUP, rename, poll, commit, registry). */
  loaded?: (why: string, counts: KelCounts) => void;
  /** A reload failed as a whole; the previous snapshot stays. */
  failed?: (why: string, reason: string) => void;
  /** A KEL was refused (logged once per distinct refusal, not at every poll). */
  kelInvalid?: (e: KelInvalidEvent) => void;
  /** Names in the source that were not read. */
  ignored?: (names: string[]) => void;
  /** Registry entries with static keys whose KEL in the source is now shadowed (reported once per change). */
  shadowed?: (ids: string[]) => void;
  /** The KEL worker died while evaluating `prefix` (now `oversize`) and was restarted. */
  workerDied?: (prefix: string, reason: string) => void;
  /** Two sources hold accepted copies of `prefix` that diverge (`fork`: the last accepted state stays). */
  sourceConflict?: (prefix: string, detail: string) => void;
}

export interface KelCounts {
  accepted: number;
  pending: number;
  invalid: number;
}

export interface KelRegistryOptions {
  registryFile: string;
  /** The `--kel-source`s, in flag order (one, or several: the copy that supersedes the others is in force). */
  source: KelSourceSpec | readonly KelSourceSpec[];
  limits: KelLimits;
  pollSeconds: number;
  /** `--kel-max-identifiers`, `--kel-max-total-bytes`, `--kel-max-heap` (default DEFAULT_KEL_AGGREGATE). */
  aggregate?: KelAggregateLimits;
  store: Pick<AnchorStateStorage, 'kelTips' | 'raiseKelTips'>;
  /** The KERI witness role's ledger, for `--kel-source ledger:` (SPEC §3.6.8). */
  ledger?: LedgerFeedReads;
  events?: KelRegistryEvents;
}

/** What the status page shows. */
export interface KelRegistryStatus {
  source: string;
  counts: KelCounts;
  /** Unix ms of the last reload attempt, whether it succeeded, and why it failed. */
  lastReload: { at: number; ok: boolean; why: string; error: string | null } | null;
}

const isSpecList = (s: KelSourceSpec | readonly KelSourceSpec[]): s is readonly KelSourceSpec[] => Array.isArray(s);

export function readKelSource(spec: KelSourceSpec, limits: KelLimits, gitCache?: GitKelCache): Promise<KelSourceRead> {
  if (spec.kind === 'ledger')
    throw new KelSourceError('invalid_kel_source', 'ledger: is read by the registry of a node with role kel only');
  return spec.kind === 'dir' ? readKelDirectory(spec.path, limits) : readKelRepository(spec.path, limits, gitCache);
}

const DID_KERI = 'did:keri:';

/** A ledger commit's reload waits this long, so a burst of commits is one reload (SPEC §3.6.8). */
const COMMIT_DEBOUNCE_MS = 1000;

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export class KelPartyRegistry {
  private readonly opts: KelRegistryOptions;
  private readonly file: Reloadable<RegistryFile>;
  private snapshot: Registry;
  private views: Map<string, KelView> = new Map();
  private tips = new Map<string, KelTip>();
  private readonly evaluator: KelEvaluator;
  private shadowed = new Set<string>();
  private counts: KelCounts = { accepted: 0, pending: 0, invalid: 0 };
  /** Per prefix, the last refusal logged (so a poll does not log it again). */
  private readonly logged = new Map<string, string>();
  private last: KelRegistryStatus['lastReload'] = null;
  private lastIgnored = '';
  private running: Promise<boolean> | undefined;
  private queued: Promise<boolean> | undefined;
  private stopped = false;
  private readonly watchers: FSWatcher[] = [];
  private debounce: NodeJS.Timeout | undefined;
  /** The reload a ledger commit scheduled (1 s after the first commit since the last one ran). */
  private afterCommit: NodeJS.Timeout | undefined;
  private readonly feed: LedgerKelFeed | undefined;
  private poll: NodeJS.Timeout | undefined;
  private readonly onHup = (): void => {
    // One outcome for the file and the source: a broken file is a failed reload, never also "reloaded".
    const fileError = this.file.tryReload();
    void this.reload(
      'SIGHUP',
      fileError === null ? undefined : `the registry file was not reloaded (the previous copy stays): ${fileError}`,
    );
  };

  private constructor(opts: KelRegistryOptions) {
    this.opts = opts;
    this.feed = opts.ledger === undefined ? undefined : new LedgerKelFeed(opts.ledger);
    this.evaluator = new KelEvaluator(
      opts.source,
      opts.limits,
      opts.aggregate ?? DEFAULT_KEL_AGGREGATE,
      {
        workerDied: (prefix, reason) => opts.events?.workerDied?.(prefix, reason),
        sourceConflict: (prefix, detail) => opts.events?.sourceConflict?.(prefix, detail),
      },
      this.feed,
    );
    this.file = new Reloadable(
      opts.registryFile,
      (p) => {
        const file = readInputFile('--registry', p, () => parseRegistryFile(readDocument(p)));
        this.snapshot = registryFromKels(file, this.views, this.tips);
        this.reportShadowed(file);
        return file;
      },
      {
        loaded: (why) => opts.events?.loaded?.(`registry ${why}`, this.counts),
        failed: (reason) => opts.events?.failed?.('registry', reason),
      },
    );
    this.snapshot = registryFromKels(this.file.current(), this.views, this.tips);
  }

  /** Load the registry file and the whole KEL source once; throws when either cannot be used. */
  static async open(opts: KelRegistryOptions): Promise<KelPartyRegistry> {
    const r = new KelPartyRegistry(opts);
    try {
      await r.load('start', true);
    } catch (e) {
      await r.evaluator.stop();
      throw e;
    }
    return r;
  }

  /** The snapshot a request uses. */
  current(): Registry {
    return this.snapshot;
  }

  status(): KelRegistryStatus {
    return { source: this.sources().map(describeKelSource).join(' '), counts: { ...this.counts }, lastReload: this.last };
  }

  private sources(): readonly KelSourceSpec[] {
    const source = this.opts.source;
    return isSpecList(source) ? source : [source];
  }

  /**
   * Reload the KEL source; resolves true when a new snapshot was published. While a reload runs,
   * requests are merged into one more reload after it.
   */
  reload(why: string, fileError?: string): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    if (this.running === undefined) {
      this.running = this.load(why, false, fileError).finally(() => {
        this.running = undefined;
      });
      return this.running;
    }
    this.queued ??= this.running.then(() => {
      this.queued = undefined;
      return this.reload(why, fileError);
    });
    return this.queued;
  }

  /**
   * The KERI witness role committed an event of `prefix` to its ledger (SPEC §3.6.8): when the
   * `ledger:` source supplies (or looks for) that prefix, reload 1 s after the first such commit.
   */
  ledgerCommitted(prefix: string): void {
    if (this.feed === undefined || this.stopped || this.afterCommit !== undefined) return;
    void this.feed.watches(prefix).then(
      (watched) => {
        if (!watched || this.stopped || this.afterCommit !== undefined) return;
        this.afterCommit = setTimeout(() => {
          this.afterCommit = undefined;
          void this.reload('commit');
        }, COMMIT_DEBOUNCE_MS);
        this.afterCommit.unref();
      },
      () => undefined, // the store cannot be read: the next poll reloads
    );
  }

  start(): void {
    this.file.start(1000, false);
    process.on('SIGHUP', this.onHup);
    for (const source of this.sources()) {
      if (source.kind !== 'dir') continue;
      const watcher = watch(source.path, { persistent: false }, (event, name) => {
        if (event !== 'rename' || name === null || !KEL_FILE_PATTERN.test(basename(name))) return;
        clearTimeout(this.debounce);
        this.debounce = setTimeout(() => void this.reload('rename'), 1000);
        this.debounce.unref();
      });
      watcher.on('error', () => undefined);
      this.watchers.push(watcher);
    }
    if (this.opts.pollSeconds > 0) {
      this.poll = setInterval(() => void this.reload('poll'), this.opts.pollSeconds * 1000);
      this.poll.unref();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.file.stop();
    process.off('SIGHUP', this.onHup);
    for (const w of this.watchers) w.close();
    clearTimeout(this.debounce);
    clearTimeout(this.afterCommit);
    clearInterval(this.poll);
    await this.queued?.catch(() => undefined);
    await this.running?.catch(() => undefined);
    await this.evaluator.stop();
  }

  private async load(why: string, first: boolean, fileError?: string): Promise<boolean> {
    const at = Date.now();
    try {
      const stored = await this.opts.store.kelTips();
      const tips = new Map(stored.map((t) => [t.prefix, t]));
      // The registry's parties (and a static party's delegator) first: their snapshot is published before the rest is read.
      const priority: string[] = [];
      const delegating: string[] = [];
      for (const e of this.file.current().entries) {
        for (const id of [e.id, e.delegator]) if (id?.startsWith(DID_KERI) === true) priority.push(id.slice(DID_KERI.length));
        if (e.delegates && e.id.startsWith(DID_KERI)) delegating.push(e.id.slice(DID_KERI.length));
      }
      const result = await this.evaluator.evaluate(tips, priority, (partial) => this.publish(partial, tips), delegating);
      await this.publish(result, tips);
      if (result.ignored.join('\n') !== this.lastIgnored && result.ignored.length > 0) this.opts.events?.ignored?.(result.ignored);
      this.lastIgnored = result.ignored.join('\n');
      this.counts = { accepted: 0, pending: 0, invalid: 0 };
      for (const e of result.evaluations.values()) this.counts[e.status]++;
      this.report(result.evaluations);
      if (fileError !== undefined) {
        this.last = { at, ok: false, why, error: fileError };
        this.opts.events?.failed?.(why, fileError);
        return false;
      }
      this.last = { at, ok: true, why, error: null };
      this.opts.events?.loaded?.(why, this.counts);
      return true;
    } catch (e) {
      const reason = fileError === undefined ? message(e) : `${fileError}; ${message(e)}`;
      this.last = { at, ok: false, why, error: reason };
      if (first) throw e;
      this.opts.events?.failed?.(why, reason);
      return false;
    }
  }

  /** Raise the store's tips to the newly accepted states (durably, first), then publish their snapshot. */
  private async publish(result: SourceEvaluation, tips: Map<string, KelTip>): Promise<void> {
    const raised = tipsToRaise(result.evaluations.values(), tips);
    if (raised.length > 0) await this.opts.store.raiseKelTips(raised);
    const views = new Map<string, KelView>();
    for (const e of result.evaluations.values()) views.set(e.prefix, this.view(e, result.delegatedBy.get(e.prefix) ?? null));
    const file = this.file.current();
    this.snapshot = registryFromKels(file, views, tips);
    this.views = views;
    this.tips = new Map(tips);
    this.reportShadowed(file);
  }

  /** Report the static-keys parties whose KEL is shadowed, once per change of that set. */
  private reportShadowed(file: RegistryFile): void {
    const now = new Set(shadowedParties(file, this.views));
    const added = [...now].filter((id) => !this.shadowed.has(id));
    this.shadowed = now;
    if (added.length > 0) this.opts.events?.shadowed?.(added);
  }

  private view(e: KelEvaluation, delegatedBy: string | null): KelView {
    return { status: e.status, state: e.state, reason: e.reason, detail: e.detail, delegatedBy };
  }

  /** Log each distinct refusal once; forget a prefix once it is accepted again. */
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
