/**
 * One reload of a KEL source (SPEC §3.5 rev 4 "Failure isolation", "Aggregate bounds", "Off the
 * event loop"), driven from the main thread:
 *
 * 1. List the source (readdir, `git for-each-ref`): the only failure of the source as a whole.
 * 2. Hand the worker thread (src/registry/kel-worker.ts, started with a heap limit) one identifier
 *    at a time: first the registry's parties and their delegator chains, then every other
 *    identifier in name order; at most `maxIdentifiers` of them and `maxTotalBytes` read in all.
 *    Those over a bound are `kel_invalid` `oversize` here. If the worker dies (out of memory, or
 *    anything else) the identifier it was on becomes `oversize`, the worker is restarted, the
 *    identifiers staged so far in this reload are staged again, and the reload goes on.
 * 3. Resolve (rule 8, states in force) once the parties and their delegator chains are staged —
 *    `publish` is called with that partial result — and again at the end.
 *
 * The main thread keeps the last evaluation of every identifier (the worker's cache dies with it),
 * so an identifier not evaluated in this reload, or refused by a fresh worker, keeps its last
 * accepted state; and the digest seals {d} of every delegator, so that an agent is revoked by its
 * delegator whatever the state of its own copy.
 */
import { Worker } from 'node:worker_threads';
import type { KelEvaluation, KelLimits, KelTipRef } from '../keri/index.ts';
import { listKelDirectory, type DirKelLocator } from './dir-source.ts';
import { listKelRepository, type GitKelLocator } from './git-source.ts';
import { KEL_WORKER_ROLE, type KelLocator, type KelWorkerReply, type KelWorkerRequest } from './kel-worker.ts';
import { KelSourceError } from './errors.ts';
import { LEDGER_SOURCE, type LedgerKelFeed } from './ledger-source.ts';
import type { KelSourceSpec } from './source.ts';

/** SPEC §3.5 rev 4 aggregate bounds: `--kel-max-identifiers`, `--kel-max-total-bytes`, `--kel-max-heap` (MiB). */
export interface KelAggregateLimits {
  maxIdentifiers: number;
  maxTotalBytes: number;
  maxHeapMb: number;
}

export const DEFAULT_KEL_AGGREGATE: KelAggregateLimits = Object.freeze({
  maxIdentifiers: 10_000,
  maxTotalBytes: 256 * 1024 * 1024,
  maxHeapMb: 512,
});

/** What a reload found: every listed identifier's evaluation, whom its dip names, and each delegator's {d} seals. */
export interface SourceEvaluation {
  evaluations: Map<string, KelEvaluation>;
  delegatedBy: Map<string, string | null>;
  /** Names in the source that are not identifiers (for the log). */
  ignored: string[];
}

declare const __AW_BUNDLE__: boolean | undefined;

/** The worker's module: this file's sibling with this file's extension (.ts in a checkout, .js in lib/), or the bundle itself. */
function workerUrl(): URL {
  if (typeof __AW_BUNDLE__ === 'boolean') return new URL(import.meta.url);
  return new URL(`./kel-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
}

class WorkerDied extends Error {}

/** The worker thread, one request at a time; restarted on demand after it died. */
class KelWorkerClient {
  private worker: Worker | undefined;
  private pending: { resolve: (r: KelWorkerReply) => void; reject: (e: Error) => void } | undefined;
  private lastError = '';
  private readonly heapMb: number;

  constructor(heapMb: number) {
    this.heapMb = heapMb;
  }

  private start(): Worker {
    const w = new Worker(workerUrl(), {
      workerData: { role: KEL_WORKER_ROLE },
      resourceLimits: { maxOldGenerationSizeMb: this.heapMb, maxYoungGenerationSizeMb: Math.min(64, Math.max(4, this.heapMb >> 3)) },
      stdout: false,
      stderr: false,
    });
    w.unref();
    w.on('message', (r: KelWorkerReply | { op: 'error'; message: string }) => {
      const p = this.pending;
      this.pending = undefined;
      w.unref();
      if (r.op === 'error') {
        this.lastError = r.message;
        void w.terminate();
        p?.reject(new WorkerDied(`the KEL worker failed: ${r.message.split('\n')[0]}`));
      } else p?.resolve(r);
    });
    w.on('error', (e: unknown) => {
      this.lastError = e instanceof Error ? e.message : String(e);
    });
    w.on('exit', (code) => {
      if (this.worker === w) this.worker = undefined;
      const p = this.pending;
      this.pending = undefined;
      p?.reject(new WorkerDied(`the KEL worker stopped (exit ${code}${this.lastError === '' ? '' : `: ${this.lastError}`})`));
      this.lastError = '';
    });
    return w;
  }

  /** Whether the next request starts a new worker. */
  get fresh(): boolean {
    return this.worker === undefined;
  }

  request(req: KelWorkerRequest): Promise<KelWorkerReply> {
    this.worker ??= this.start();
    const w = this.worker;
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      w.ref();
      w.postMessage(req);
    });
  }

  async stop(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }
}

export interface KelEvaluatorEvents {
  /** The worker died on `prefix` (that identifier is now `oversize`) and was restarted. */
  workerDied?: (prefix: string, reason: string) => void;
  /** Two sources hold accepted copies of `prefix` that diverge (`fork`; `registry_kel_source_conflicts_total`). */
  sourceConflict?: (prefix: string, detail: string) => void;
}

export class KelEvaluator {
  private readonly specs: readonly KelSourceSpec[];
  private readonly limits: KelLimits;
  private readonly aggregate: KelAggregateLimits;
  private readonly events: KelEvaluatorEvents;
  private readonly worker: KelWorkerClient;
  private readonly ledger: LedgerKelFeed | undefined;
  private last = new Map<string, KelEvaluation>();
  private lastDelegatedBy = new Map<string, string | null>();
  /** Per delegator, the agents its accepted KEL revokes ({d} seals), as last evaluated. */
  private revokes = new Map<string, Set<string>>();

  /** `specs`: the `--kel-source`s in flag order (each identifier's copies are compared, src/keri/copies.ts). */
  constructor(
    specs: KelSourceSpec | readonly KelSourceSpec[],
    limits: KelLimits,
    aggregate: KelAggregateLimits,
    events: KelEvaluatorEvents = {},
    ledger?: LedgerKelFeed,
  ) {
    this.specs = 'kind' in specs ? [specs] : specs;
    this.ledger = ledger;
    this.limits = limits;
    this.aggregate = aggregate;
    this.events = events;
    this.worker = new KelWorkerClient(aggregate.maxHeapMb);
  }

  /** `ledger:` (SPEC §3.6.8): the parties' held KELs, their delegators and the agents of delegating entries. */
  private async ledgerLocators(priority: readonly string[], delegating: readonly string[]): Promise<KelLocator[]> {
    if (this.ledger === undefined)
      throw new KelSourceError('kel_source_unreadable', '--kel-source ledger: reads the ledger of role kel, which is not running here');
    const out: KelLocator[] = [];
    for (const prefix of await this.ledger.list(priority, delegating)) {
      const raw = await this.ledger.read(prefix, this.limits);
      if (raw !== null) out.push({ kind: 'ledger', prefix, source: LEDGER_SOURCE, raw });
    }
    return out;
  }

  async stop(): Promise<void> {
    await this.worker.stop();
  }

  /**
   * Evaluate the whole source. `priority`: the registry's parties (bare prefixes), evaluated first
   * with their delegator chains; `publish` gets the partial result then (awaited). Throws only
   * when the source cannot be listed (or on a failure of the worker that is not about one
   * identifier). Nothing is remembered until the final result is returned.
   */
  async evaluate(
    tips: ReadonlyMap<string, KelTipRef>,
    priority: readonly string[],
    publish: (partial: SourceEvaluation) => Promise<void>,
    delegating: readonly string[] = [],
  ): Promise<SourceEvaluation> {
    // Every source is listed first: one that cannot be listed fails the reload (every state kept).
    const located = new Map<string, KelLocator[]>();
    const listing = { ignored: [] as string[] };
    for (const spec of this.specs) {
      if (spec.kind === 'ledger') {
        for (const loc of await this.ledgerLocators(priority, delegating)) {
          const list = located.get(loc.prefix);
          if (list === undefined) located.set(loc.prefix, [loc]);
          else list.push(loc);
        }
        continue;
      }
      const listed = spec.kind === 'dir' ? await listKelDirectory(spec.path) : await listKelRepository(spec.path);
      listing.ignored.push(...listed.ignored);
      for (const id of listed.ids) {
        const loc: KelLocator =
          spec.kind === 'dir' ? { kind: 'dir', ...(id as DirKelLocator) } : { kind: 'git', repo: spec.path, ...(id as GitKelLocator) };
        const list = located.get(id.prefix);
        if (list === undefined) located.set(id.prefix, [loc]);
        else list.push(loc);
      }
    }
    if (this.specs.length > 1) {
      const sorted = [...located.keys()].sort();
      const byName = new Map(sorted.map((p) => [p, located.get(p)!]));
      located.clear();
      for (const [p, l] of byName) located.set(p, l);
    }

    const staged: string[] = [];
    const gone = new Set<string>();
    const refused = new Map<string, KelEvaluation>();
    const delegatedBy = new Map<string, string | null>();
    let bytes = 0;
    const begin = async (): Promise<void> => {
      await this.worker.request({ op: 'begin', limits: this.limits });
    };
    const refuse = (prefix: string, detail: string): void => {
      const loc = located.get(prefix)![0]!;
      const kept = this.last.get(prefix)?.state ?? null;
      refused.set(prefix, {
        prefix,
        status: 'invalid',
        state: kept,
        reason: 'oversize',
        seq: null,
        detail,
        source: loc.source,
        verifiedEvents: 0,
      });
      delegatedBy.set(prefix, this.lastDelegatedBy.get(prefix) ?? null);
    };
    const died = (prefix: string, e: WorkerDied): void => {
      refuse(prefix, `${e.message} while evaluating this identifier`);
      this.events.workerDied?.(prefix, e.message);
    };
    /** Stage one identifier; on the worker's death, refuse it, restart, stage the others again. */
    const stage = async (prefix: string): Promise<void> => {
      if (staged.length >= this.aggregate.maxIdentifiers) {
        refuse(prefix, `over --kel-max-identifiers (${this.aggregate.maxIdentifiers}) for one reload`);
        return;
      }
      const locs = located.get(prefix)!;
      try {
        if (this.worker.fresh) await this.restage(begin, staged, located, tips, died);
        const r = await this.worker.request({
          op: 'stage',
          prefix,
          locs,
          tip: tips.get(prefix),
          budget: this.aggregate.maxTotalBytes - bytes,
        });
        if (r.op !== 'stage') throw new Error(`unexpected ${r.op} reply`);
        bytes += r.bytesRead;
        if (r.conflict !== null) this.events.sourceConflict?.(prefix, r.conflict);
        if (r.gone) gone.add(prefix);
        else {
          staged.push(prefix);
          delegatedBy.set(prefix, r.delegator);
        }
      } catch (e) {
        if (!(e instanceof WorkerDied)) throw e;
        died(prefix, e);
      }
    };

    const queue = priority.filter((p) => located.has(p));
    const queued = new Set(queue);
    for (let i = 0; i < queue.length; i++) {
      const prefix = queue[i]!;
      await stage(prefix);
      const di = delegatedBy.get(prefix);
      if (di != null && located.has(di) && !queued.has(di)) {
        queued.add(di);
        queue.push(di);
      }
    }
    const ready = async (): Promise<void> => {
      if (this.worker.fresh) await this.restage(begin, staged, located, tips, died);
    };
    if (queue.length > 0) await publish(await this.resolve(false, [], located, staged, refused, gone, delegatedBy, listing.ignored, ready));
    for (const prefix of located.keys()) if (!queued.has(prefix)) await stage(prefix);
    const keep = [...refused.keys()];
    const out = await this.resolve(true, keep, located, staged, refused, gone, delegatedBy, listing.ignored, ready);
    this.last = new Map(out.evaluations);
    this.lastDelegatedBy = new Map(out.delegatedBy);
    return out;
  }

  /**
   * A fresh worker: begin the reload and stage again what the dead one had staged. A worker that
   * dies before it is given any identifier is no identifier's fault: the reload fails. One that
   * dies on a restaged identifier refuses that one (`onDeath`) and is restarted in turn.
   */
  private async restage(
    begin: () => Promise<void>,
    staged: string[],
    located: ReadonlyMap<string, KelLocator[]>,
    tips: ReadonlyMap<string, KelTipRef>,
    onDeath: (prefix: string, e: WorkerDied) => void,
  ): Promise<void> {
    for (;;) {
      try {
        await begin();
      } catch (e) {
        throw new Error(`the KEL worker did not start: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
      }
      let died = false;
      for (const prefix of [...staged]) {
        try {
          const r = await this.worker.request({ op: 'stage', prefix, locs: located.get(prefix)!, tip: tips.get(prefix), budget: Infinity });
          if (r.op !== 'stage') throw new Error(`unexpected ${r.op} reply`);
        } catch (e) {
          if (!(e instanceof WorkerDied)) throw e;
          staged.splice(staged.indexOf(prefix), 1);
          onDeath(prefix, e);
          died = true;
          break;
        }
      }
      if (!died) return;
    }
  }

  private async resolve(
    final: boolean,
    keep: string[],
    located: ReadonlyMap<string, KelLocator[]>,
    staged: string[],
    refused: ReadonlyMap<string, KelEvaluation>,
    gone: ReadonlySet<string>,
    delegatedBy: Map<string, string | null>,
    ignored: string[],
    ready: () => Promise<void>,
  ): Promise<SourceEvaluation> {
    await ready();
    const r = await this.worker.request({ op: 'resolve', final, keep });
    if (r.op !== 'resolve') throw new Error(`unexpected ${r.op} reply`);
    const revokes = new Map(this.revokes);
    for (const prefix of staged) revokes.delete(prefix);
    for (const [prefix, digests] of r.revokes) revokes.set(prefix, new Set(digests));
    const evaluations = new Map<string, KelEvaluation>();
    const byWorker = new Map(r.evaluations.map((e) => [e.prefix, e]));
    const dBy = new Map<string, string | null>();
    for (const prefix of located.keys()) {
      if (gone.has(prefix)) continue;
      let e = byWorker.get(prefix) ?? refused.get(prefix) ?? (final ? undefined : this.last.get(prefix));
      if (e === undefined) continue;
      const before = this.last.get(prefix)?.state ?? null;
      // A fresh worker knows no state in force: the last accepted one stays.
      if (e.status === 'invalid' && e.state === null && before !== null) e = { ...e, state: before };
      // Revocation never waits for the agent, and a revocation once accepted stays.
      if (e.state !== null && !e.state.revoked) {
        const delegator = e.state.delegator;
        if (
          (delegator !== null && revokes.get(delegator)?.has(prefix) === true) ||
          (before?.revoked === true && before.delegator === delegator)
        )
          e = { ...e, state: { ...e.state, revoked: true } };
      }
      evaluations.set(prefix, e);
      dBy.set(prefix, delegatedBy.get(prefix) ?? this.lastDelegatedBy.get(prefix) ?? null);
    }
    if (final) this.revokes = revokes;
    return { evaluations, delegatedBy: dBy, ignored };
  }
}
