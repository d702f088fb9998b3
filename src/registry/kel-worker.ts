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
  resolveStages,
  revocationSeals,
  stageKel,
  type KelCache,
  type KelEvaluation,
  type KelLimits,
  type KelTipRef,
  type RawKel,
} from '../keri/index.ts';
import { readDirKel, type DirKelLocator } from './dir-source.ts';
import { BlobMemo, readGitKel, type GitKelLocator } from './git-source.ts';
import { dipDelegator, type KelSourceSpec } from './source.ts';

/** `workerData.role` of this worker (the bundle runs its one file as the worker too). */
export const KEL_WORKER_ROLE = 'anchor-witness-kel-worker';

export type KelLocator = ({ kind: 'dir' } & DirKelLocator) | ({ kind: 'git' } & GitKelLocator);

export type KelWorkerRequest =
  | { op: 'begin'; spec: KelSourceSpec; limits: KelLimits }
  | { op: 'stage'; loc: KelLocator; tip: KelTipRef | undefined; budget: number }
  | { op: 'resolve'; final: boolean; keep: string[] };

export type KelWorkerReply =
  | { op: 'begin' }
  | { op: 'stage'; prefix: string; gone: boolean; bytesRead: number; delegator: string | null }
  | { op: 'resolve'; evaluations: KelEvaluation[]; revokes: [string, string[]][] };

const DIGEST = /^[A-Za-z0-9_-]{44}$/;

export function runKelWorker(port: MessagePort): void {
  let cache: KelCache | null = null;
  let stages = new Map<string, ReturnType<typeof stageKel>>();
  let memo = new BlobMemo();
  let spec: KelSourceSpec = { kind: 'dir', path: '' };
  let limits: KelLimits = { maxEvents: 0, maxBytes: 0 };
  /** git: per locator key, the (event-less) RawKel last read there. */
  let seen = new Map<string, RawKel>();
  let seenNext = new Map<string, RawKel>();
  const bare = (raw: RawKel): RawKel => ({ ...raw, events: [], attachments: [] });

  const stage = async (req: Extract<KelWorkerRequest, { op: 'stage' }>): Promise<KelWorkerReply> => {
    const { loc } = req;
    let raw: RawKel | null;
    let bytesRead = 0;
    if (loc.kind === 'dir') {
      ({ kel: raw, bytesRead } = await readDirKel(loc, limits, req.budget));
    } else {
      const known = seen.get(loc.key);
      // An unchanged ref or tree: the verdict in the cache stands (stageKel compares source hashes only).
      if (known !== undefined && known.defect === undefined && cache?.entries.get(loc.prefix)?.sourceHash === known.sourceHash) raw = known;
      else ({ kel: raw, bytesRead } = await readGitKel(spec.path, loc, limits, memo, req.budget));
      seenNext.set(loc.key, bare(raw));
    }
    if (raw === null) return { op: 'stage', prefix: loc.prefix, gone: true, bytesRead, delegator: null };
    const delegator = dipDelegator(raw);
    stages.set(loc.prefix, stageKel(raw, cache, req.tip));
    return { op: 'stage', prefix: loc.prefix, gone: false, bytesRead, delegator };
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
          spec = req.spec;
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
