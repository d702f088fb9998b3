/**
 * Costly KERI requests off the event loop (SPEC §3.6.2 "Off the event loop", §3.6.7): a request
 * whose body and attachments are OFFLOAD_MIN_BYTES or more, or whose body names a P-256 key, is
 * parsed, SAID-checked and signature-checked (checks 2–3 and 6) in a verification worker
 * (offload-worker.ts running offload-job.ts, the same pure checks the event loop runs inline), and
 * an `ixn` whose current keys include a P-256 key has its signatures verified there. Small
 * Ed25519-only requests stay on the event loop, where they cost less than the trip (docs/kel-witness.md,
 * "Off the event loop").
 *
 * Bounded: at most `maxPending` jobs wait for the workers; past that a request is answered 503
 * `overloaded` (Retry-After: 1), as the rest of the node answers when it is at capacity. Workers
 * start on the first job; one that dies (or reports a bug) has its jobs redone on the event loop
 * and is started again on a job 5 s later at the earliest (jobs meanwhile go to another worker or
 * stay on the event loop), so an outcome never depends on the workers.
 */
import { Worker } from 'node:worker_threads';
import type { IndexedSignature } from '../keri/attachments.ts';
import type { WitnessAttachments } from '../keri/cesr-attachments.ts';
import type { KelSignatureVerifier } from '../keri/signatures.ts';
import type { KelKey } from '../keri/types.ts';
import type { Candidate } from './checks.ts';
import { answeringVerifier, candidateOf, submissionJob, verifyAll, type SubmissionJobResult } from './offload-job.ts';
import { KEL_OFFLOAD_WORKER_ROLE, type OffloadReply, type OffloadRequest } from './offload-worker.ts';
import { problem, type KelOutcome, type KelRoute } from './outcome.ts';

/**
 * Requests with at least this many bytes of body and `CESR-ATTACHMENT` are checked on a worker
 * (measured: docs/kel-witness.md, "Off the event loop").
 */
export const OFFLOAD_MIN_BYTES = 4096;

/** Jobs waiting for the workers at most (each ≤ 64 KiB of body and 12 KiB of header). */
export const DEFAULT_OFFLOAD_MAX_PENDING = 64;

/** What a submission becomes: parseSubmission's answer, or 503 `overloaded`. */
export type OffloadedSubmission =
  { kind: 'candidate'; c: Candidate } | { kind: 'message'; value: Record<string, unknown>; att: WitnessAttachments } | KelOutcome;

export interface KelOffloadEvents {
  /** A job done by a worker. */
  job?(job: 'submission' | 'signatures'): void;
  /** A job refused: `maxPending` jobs were waiting. */
  rejected?(): void;
  /** A worker died or reported a bug; its jobs were redone on the event loop. */
  workerFailed?(reason: string): void;
}

const P256_KEYS = ['"1AAJ', '"1AAI'];

/** Whether a request is worth a worker: large, or naming a P-256 key (a mere routing hint: the outcome is the same either way). */
export function offloadWanted(body: Uint8Array, header: string, minBytes = OFFLOAD_MIN_BYTES): boolean {
  if (body.length + header.length >= minBytes) return true;
  const b = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return P256_KEYS.some((k) => b.includes(k, 0, 'latin1'));
}

declare const __AW_BUNDLE__: boolean | undefined;

/** The worker's module: this file's sibling with this file's extension (.ts in a checkout, .js in lib/), or the bundle itself. */
function workerUrl(): URL {
  if (typeof __AW_BUNDLE__ === 'boolean') return new URL(import.meta.url);
  return new URL(`./offload-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
}

type Job =
  | { job: 'submission'; route: KelRoute; body: Uint8Array; header: string }
  | { job: 'signatures'; message: Uint8Array; keys: KelKey[]; signatures: IndexedSignature[] };

type Answer = { job: 'submission'; result: SubmissionJobResult } | { job: 'signatures'; answers: boolean[] };

interface Pending {
  job: Job;
  resolve: (a: Answer) => void;
  reject: (e: unknown) => void;
}

interface Slot {
  worker: Worker | undefined;
  pending: Map<number, Pending>;
  /** After its worker stopped unasked: not started again before this time (ms), its jobs done here meanwhile. */
  restartAt: number;
}

/** How long a slot whose worker stopped waits before starting another (a worker that cannot start is not retried per request). */
const RESTART_DELAY_MS = 5_000;

/** The job on the event loop: the same pure checks a worker runs. */
function here(job: Job): Answer {
  return job.job === 'submission'
    ? { job: 'submission', result: submissionJob(job.route, job.body, job.header) }
    : { job: 'signatures', answers: verifyAll(job.message, job.keys, job.signatures) };
}

/** A job the workers did not answer, done here; what it throws (a bug) goes to its request, never to an event handler. */
function redoHere(p: Pending): void {
  try {
    p.resolve(here(p.job));
  } catch (e) {
    p.reject(e);
  }
}

const overloaded = (): KelOutcome =>
  problem(503, 'overloaded', 'the verification workers are at capacity; retry later', { headers: { 'retry-after': '1' } });

export class KelOffload {
  private readonly slots: Slot[];
  private readonly maxPending: number;
  private readonly minBytes: number;
  private readonly events: KelOffloadEvents;
  private nextId = 1;
  private closed = false;

  /** `size` worker threads (0: everything on the event loop, no bound). */
  constructor(size: number, o: { maxPending?: number; minBytes?: number; events?: KelOffloadEvents } = {}) {
    this.slots = Array.from({ length: size }, () => ({ worker: undefined, pending: new Map(), restartAt: 0 }));
    this.maxPending = o.maxPending ?? DEFAULT_OFFLOAD_MAX_PENDING;
    this.minBytes = o.minBytes ?? OFFLOAD_MIN_BYTES;
    this.events = o.events ?? {};
  }

  get size(): number {
    return this.slots.length;
  }

  /** Jobs waiting for the workers now. */
  get pending(): number {
    return this.slots.reduce((n, s) => n + s.pending.size, 0);
  }

  /** Whether a request goes to a worker (offloadWanted, and there are workers). */
  wants(body: Uint8Array, header: string): boolean {
    return this.slots.length > 0 && !this.closed && offloadWanted(body, header, this.minBytes);
  }

  /** Checks 2–3 and 6 of a request on a worker: parseSubmission's answer (check 6's outcome in `c.stateless`), or 503. */
  async submission(route: KelRoute, body: Uint8Array, header: string): Promise<OffloadedSubmission> {
    const a = await this.run({ job: 'submission', route, body: new Uint8Array(body), header });
    if (a === null) return overloaded();
    if (a.job !== 'submission') throw new Error('kel offload: a signatures answer to a submission');
    const r = a.result;
    if (r.kind === 'outcome') return r.outcome;
    if (r.kind === 'message') return r;
    return { kind: 'candidate', c: candidateOf(r, body, header) };
  }

  /** The verifier answering for `signatures` over `message` under `keys`, verified on a worker; or 503. */
  async signatures(message: Uint8Array, keys: KelKey[], signatures: IndexedSignature[]): Promise<KelSignatureVerifier | KelOutcome> {
    const a = await this.run({ job: 'signatures', message, keys, signatures });
    if (a === null) return overloaded();
    if (a.job !== 'signatures') throw new Error('kel offload: a submission answer to a signatures job');
    return answeringVerifier(message, keys, signatures, a.answers);
  }

  /** The job's answer from a worker (null: at capacity). */
  private run(job: Job): Promise<Answer | null> {
    if (this.slots.length === 0 || this.closed) return Promise.resolve(here(job));
    if (this.pending >= this.maxPending) {
      this.events.rejected?.();
      return Promise.resolve(null);
    }
    const now = Date.now();
    const usable = this.slots.filter((s) => s.worker !== undefined || s.restartAt <= now);
    if (usable.length === 0) return Promise.resolve(here(job));
    const slot = usable.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    const worker = (slot.worker ??= this.start(slot));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      slot.pending.set(id, { job, resolve, reject });
      const request: OffloadRequest = { id, ...job };
      worker.postMessage(request);
    });
  }

  private start(slot: Slot): Worker {
    const w = new Worker(workerUrl(), {
      workerData: { role: KEL_OFFLOAD_WORKER_ROLE },
      resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16 },
      stdout: false,
      stderr: false,
    });
    w.unref();
    w.on('message', (r: OffloadReply) => {
      const p = slot.pending.get(r.id);
      if (p === undefined) return;
      slot.pending.delete(r.id);
      if (r.job === 'error') {
        this.events.workerFailed?.(r.message.split('\n')[0] ?? r.message);
        redoHere(p);
        return;
      }
      this.events.job?.(r.job);
      p.resolve(r);
    });
    w.on('error', () => {
      // followed by 'exit', which counts it and redoes its jobs
    });
    w.on('exit', () => {
      if (slot.worker === w) {
        slot.worker = undefined;
        slot.restartAt = Date.now() + RESTART_DELAY_MS;
        this.events.workerFailed?.('the worker stopped');
      }
      this.redo(slot);
    });
    return w;
  }

  /** A worker stopped: its jobs are done here. */
  private redo(slot: Slot): void {
    const jobs = [...slot.pending.values()];
    slot.pending.clear();
    for (const p of jobs) redoHere(p);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      this.slots.map(async (s) => {
        const w = s.worker;
        s.worker = undefined;
        await w?.terminate();
        this.redo(s);
      }),
    );
  }
}
