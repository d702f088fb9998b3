/**
 * The KEL worker thread (SPEC §3.5 rev 4 "Off the event loop"): reads, parses and verifies one
 * identifier at a time for the main thread (src/registry/kel-evaluator.ts), which started it with
 * a heap limit. Between identifiers it keeps the verifier's derived states (src/keri's KelCache and
 * this reload's stages), the reload's blob memo (a blob shared by several refs is read and parsed
 * once) and, per git ref or tree id, the source hash of what it last read there (an unchanged ref
 * is not read again).
 *
 * Requests (one at a time): `begin` a reload, `stage` one identifier, `resolve` the staged ones
 * (rule 8 and the states in force; `final` also makes the result the cache of the next reload).
 */
import { isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import {
  chooseCopy,
  resolveStages,
  revocationSeals,
  stageKel,
  type KelCache,
  type KelEvaluation,
  type KelLimits,
  type KelStage,
  type KelTipRef,
  type RawKel,
} from '../keri/index.ts';
import { readDirKel, type DirKelLocator } from './dir-source.ts';
import { BlobMemo, readGitKel, type GitKelLocator } from './git-source.ts';
import { dipDelegator } from './source.ts';

/** `workerData.role` of this worker (the bundle runs its one file as the worker too). */
export const KEL_WORKER_ROLE = 'anchor-witness-kel-worker';

/** Where one source's copy of an identifier is; `repo` is the git source's repository. */
export type KelLocator =
  | ({ kind: 'dir' } & DirKelLocator)
  | ({ kind: 'git'; repo: string } & GitKelLocator)
  /** `ledger:`: the copy itself, read on the main thread (src/registry/ledger-source.ts). */
  | { kind: 'ledger'; prefix: string; source: string; raw: RawKel };

export type KelWorkerRequest =
  | { op: 'begin'; limits: KelLimits }
  /** One identifier: its copy in each source that lists it, in `--kel-source` flag order. */
  | { op: 'stage'; prefix: string; locs: KelLocator[]; tip: KelTipRef | undefined; budget: number }
  | { op: 'resolve'; final: boolean; keep: string[] };

export type KelWorkerReply =
  | { op: 'begin' }
  | { op: 'stage'; prefix: string; gone: boolean; bytesRead: number; delegator: string | null; conflict: string | null }
  | { op: 'resolve'; evaluations: KelEvaluation[]; revokes: [string, string[]][] };

const DIGEST = /^[A-Za-z0-9_-]{44}$/;

export function runKelWorker(port: MessagePort): void {
  let cache: KelCache | null = null;
  let stages = new Map<string, ReturnType<typeof stageKel>>();
  let memo = new BlobMemo();
  let limits: KelLimits = { maxEvents: 0, maxBytes: 0 };
  /** git: per locator key, the (event-less) RawKel last read there. */
  let seen = new Map<string, RawKel>();
  let seenNext = new Map<string, RawKel>();
  const bare = (raw: RawKel): RawKel => ({ ...raw, events: [], attachments: [] });

  /** Read one source's copy (null: gone). */
  const read = async (loc: KelLocator, budget: number): Promise<{ raw: RawKel | null; bytesRead: number }> => {
    if (loc.kind === 'dir') {
      const r = await readDirKel(loc, limits, budget);
      return { raw: r.kel, bytesRead: r.bytesRead };
    }
    if (loc.kind === 'ledger') return { raw: loc.raw, bytesRead: loc.raw.bytes };
    const key = `${loc.repo}\n${loc.key}`;
    const known = seen.get(key);
    // An unchanged ref or tree: the verdict in the cache stands (stageKel compares source hashes only).
    if (known !== undefined && known.defect === undefined && cache?.entries.get(loc.prefix)?.sourceHash === known.sourceHash) {
      seenNext.set(key, known);
      return { raw: known, bytesRead: 0 };
    }
    const r = await readGitKel(loc.repo, loc, limits, memo, budget);
    seenNext.set(key, bare(r.kel));
    return { raw: r.kel, bytesRead: r.bytesRead };
  };

  const stage = async (req: Extract<KelWorkerRequest, { op: 'stage' }>): Promise<KelWorkerReply> => {
    let bytesRead = 0;
    const copies: { stage: KelStage; delegator: string | null }[] = [];
    for (const loc of req.locs) {
      const r = await read(loc, req.budget - bytesRead);
      bytesRead += r.bytesRead;
      // One copy at a time: only its stage (no events) is kept while the next is read.
      if (r.raw !== null) copies.push({ stage: stageKel(r.raw, cache, req.tip), delegator: dipDelegator(r.raw) });
    }
    if (copies.length === 0) return { op: 'stage', prefix: req.prefix, gone: true, bytesRead, delegator: null, conflict: null };
    const chosen = chooseCopy(copies.map((c) => c.stage));
    stages.set(req.prefix, chosen.stage);
    const delegator = copies.find((c) => c.stage === chosen.stage)?.delegator ?? copies[0]!.delegator;
    return { op: 'stage', prefix: req.prefix, gone: false, bytesRead, delegator, conflict: chosen.conflict };
  };

  const resolve = (req: Extract<KelWorkerRequest, { op: 'resolve' }>): KelWorkerReply => {
    const { evaluations, cache: next } = resolveStages(stages);
    const revokes: [string, string[]][] = [];
    for (const prefix of evaluations.keys()) {
      const digests = revocationSeals(next, prefix).filter((d) => DIGEST.test(d));
      if (digests.length > 0) revokes.push([prefix, digests]);
    }
    if (req.final) {
      const entries = new Map(next.entries);
      for (const prefix of req.keep) {
        const old = cache?.entries.get(prefix);
        if (old !== undefined && !entries.has(prefix)) entries.set(prefix, old);
      }
      cache = { entries };
      stages = new Map();
      memo = new BlobMemo();
      seen = seenNext;
      seenNext = new Map();
    }
    return { op: 'resolve', evaluations: [...evaluations.values()], revokes };
  };

  port.on('message', (req: KelWorkerRequest) => {
    void (async () => {
      let reply: KelWorkerReply;
      switch (req.op) {
        case 'begin':
          limits = req.limits;
          stages = new Map();
          memo = new BlobMemo();
          seenNext = new Map();
          reply = { op: 'begin' };
          break;
        case 'stage':
          reply = await stage(req);
          break;
        case 'resolve':
          reply = resolve(req);
          break;
      }
      port.postMessage(reply);
    })().catch((e: unknown) => {
      // A bug, never content: the main thread treats a worker that reports one like one that died.
      port.postMessage({ op: 'error', message: e instanceof Error ? (e.stack ?? e.message) : String(e) });
    });
  });
}

if (!isMainThread && parentPort !== null && (workerData as { role?: unknown } | null)?.role === KEL_WORKER_ROLE) runKelWorker(parentPort);
