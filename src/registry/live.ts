/**
 * The party registry with a KEL source (SPEC §3.5), live: the registry file (reloaded as §3.2) and
 * the KEL source (`dir:` reloaded on SIGHUP, on a rename in its directory (debounced 1 s) and every
 * poll interval; `git:` on SIGHUP and every poll interval) are combined into one immutable
 * Registry snapshot (src/anchor/kel-registry.ts) that requests read once each.
 *
 * A reload reads the whole source, reads the store's `kel_tips`, evaluates every KEL (src/keri:
 * unchanged copies are not verified again, grown ones only in their new suffix), raises `kel_tips`
 * to every newly accepted tip (durably, before the state is used), and publishes the snapshot.
 * A source or store that cannot be read fails the reload as a whole: every current state is kept.
 * Reloads run one at a time; requests made meanwhile are merged into one more.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename } from 'node:path';
import { registryFromKels, type KelView } from '../anchor/kel-registry.ts';
import { parseRegistryFile, type Registry, type RegistryFile } from '../anchor/registry.ts';
import { readDocument } from '../config/config-file.ts';
import { readInputFile } from '../config/input-file.ts';
import { Reloadable } from '../config/reloadable.ts';
import { evaluateKels, type KelCache, type KelEvaluation, type KelLimits, type RawKel } from '../keri/index.ts';
import type { AnchorStateStorage, KelTip } from '../store/types.ts';
import { KEL_FILE_PATTERN, readKelDirectory } from './dir-source.ts';
import { readKelRepository, type GitKelCache } from './git-source.ts';
import { describeKelSource, dipDelegator, type KelSourceRead, type KelSourceSpec } from './source.ts';

export interface KelInvalidEvent {
  prefix: string;
  reason: string;
  seq: number | null;
  source: string;
  detail: string | null;
}

export interface KelRegistryEvents {
  /** A reload published a new snapshot (`why`: start, SIGHUP, rename, poll, registry). */
  loaded?: (why: string, counts: KelCounts) => void;
  /** A reload failed as a whole; the previous snapshot stays. */
  failed?: (why: string, reason: string) => void;
  /** A KEL was refused (logged once per distinct refusal, not at every poll). */
  kelInvalid?: (e: KelInvalidEvent) => void;
  /** Names in the source that were not read. */
  ignored?: (names: string[]) => void;
}

export interface KelCounts {
  accepted: number;
  pending: number;
  invalid: number;
}

export interface KelRegistryOptions {
  registryFile: string;
  source: KelSourceSpec;
  limits: KelLimits;
  pollSeconds: number;
  store: Pick<AnchorStateStorage, 'kelTips' | 'raiseKelTips'>;
  events?: KelRegistryEvents;
}

/** What the status page shows. */
export interface KelRegistryStatus {
  source: string;
  counts: KelCounts;
  /** Unix ms of the last reload attempt, whether it succeeded, and why it failed. */
  lastReload: { at: number; ok: boolean; why: string; error: string | null } | null;
}

export function readKelSource(spec: KelSourceSpec, limits: KelLimits, gitCache?: GitKelCache): Promise<KelSourceRead> {
  return spec.kind === 'dir' ? readKelDirectory(spec.path, limits) : readKelRepository(spec.path, limits, gitCache);
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export class KelPartyRegistry {
  private readonly opts: KelRegistryOptions;
  private readonly file: Reloadable<RegistryFile>;
  private snapshot: Registry;
  private views: Map<string, KelView> = new Map();
  private tips = new Map<string, KelTip>();
  private cache: KelCache | null = null;
  private readonly gitCache: GitKelCache = new Map();
  private counts: KelCounts = { accepted: 0, pending: 0, invalid: 0 };
  /** Per prefix, the last refusal logged (so a poll does not log it again). */
  private readonly logged = new Map<string, string>();
  private last: KelRegistryStatus['lastReload'] = null;
  private lastIgnored = '';
  private running: Promise<boolean> | undefined;
  private queued: Promise<boolean> | undefined;
  private stopped = false;
  private watcher: FSWatcher | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private poll: NodeJS.Timeout | undefined;
  private readonly onHup = (): void => {
    void this.reload('SIGHUP');
  };

  private constructor(opts: KelRegistryOptions) {
    this.opts = opts;
    // The file is validated together with the current KEL views: an entry with keys that also has
    // a KEL fails the file's reload (registry_conflict) and the previous file stays.
    this.file = new Reloadable(
      opts.registryFile,
      (p) => {
        const file = readInputFile('--registry', p, () => parseRegistryFile(readDocument(p)));
        this.snapshot = registryFromKels(file, this.views, this.tips);
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
    await r.load('start', true);
    return r;
  }

  /** The snapshot a request uses. */
  current(): Registry {
    return this.snapshot;
  }

  status(): KelRegistryStatus {
    return { source: describeKelSource(this.opts.source), counts: { ...this.counts }, lastReload: this.last };
  }

  /**
   * Reload the KEL source; resolves true when a new snapshot was published. While a reload runs,
   * requests are merged into one more reload after it.
   */
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
    this.file.start();
    process.on('SIGHUP', this.onHup);
    if (this.opts.source.kind === 'dir') {
      this.watcher = watch(this.opts.source.path, { persistent: false }, (event, name) => {
        if (event !== 'rename' || name === null || !KEL_FILE_PATTERN.test(basename(name))) return;
        clearTimeout(this.debounce);
        this.debounce = setTimeout(() => void this.reload('rename'), 1000);
        this.debounce.unref();
      });
      this.watcher.on('error', () => undefined);
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
    this.watcher?.close();
    clearTimeout(this.debounce);
    clearInterval(this.poll);
    await this.queued?.catch(() => undefined);
    await this.running?.catch(() => undefined);
  }

  private async load(why: string, first: boolean): Promise<boolean> {
    const at = Date.now();
    try {
      const read = await readKelSource(this.opts.source, this.opts.limits, this.gitCache);
      const ignored = read.ignored.join('\n');
      if (ignored !== this.lastIgnored && read.ignored.length > 0) this.opts.events?.ignored?.(read.ignored);
      this.lastIgnored = ignored;
      const stored = await this.opts.store.kelTips();
      const tips = new Map(stored.map((t) => [t.prefix, t]));
      const { evaluations, cache } = evaluateKels(read.kels, this.cache, tips);
      // Durable first: a state is used only once its tip is stored (an old copy can never revive it).
      const raised: KelTip[] = [];
      for (const e of evaluations.values()) {
        const st = e.state;
        if (st === null) continue;
        const tip = tips.get(e.prefix);
        if (tip === undefined || st.s > tip.s) {
          const t = { prefix: e.prefix, s: st.s, d: st.d };
          raised.push(t);
          tips.set(e.prefix, t);
        }
      }
      await this.opts.store.raiseKelTips(raised);
      const views = new Map<string, KelView>();
      for (const e of evaluations.values()) views.set(e.prefix, this.view(e, read.kels.get(e.prefix)));
      const snapshot = registryFromKels(this.file.current(), views, tips);
      this.cache = cache;
      this.views = views;
      this.tips = tips;
      this.snapshot = snapshot;
      this.counts = { accepted: 0, pending: 0, invalid: 0 };
      for (const e of evaluations.values()) this.counts[e.status]++;
      this.report(evaluations);
      this.last = { at, ok: true, why, error: null };
      this.opts.events?.loaded?.(why, this.counts);
      return true;
    } catch (e) {
      this.last = { at, ok: false, why, error: message(e) };
      if (first) throw e;
      this.opts.events?.failed?.(why, message(e));
      return false;
    }
  }

  private view(e: KelEvaluation, raw: RawKel | undefined): KelView {
    return {
      status: e.status,
      state: e.state,
      reason: e.reason,
      detail: e.detail,
      delegatedBy: raw === undefined ? null : dipDelegator(raw),
    };
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
