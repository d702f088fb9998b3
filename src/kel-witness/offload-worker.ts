/**
 * A verification worker thread of the KERI witness role (SPEC §3.6.2 "Off the event loop"): it runs
 * offload-job.ts's pure checks for the event loop (offload.ts), one message at a time. The bundle
 * runs its one file as this worker too (src/cli/bundle-entry.ts imports this module): the start-up
 * line at the end runs only in a thread started with this role.
 */
import { isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import type { IndexedSignature } from '../keri/attachments.ts';
import type { KelKey } from '../keri/types.ts';
import { submissionJob, verifyAll, type SubmissionJobResult } from './offload-job.ts';
import type { KelRoute } from './outcome.ts';

/** `workerData.role` of this worker. */
export const KEL_OFFLOAD_WORKER_ROLE = 'anchor-witness-kel-offload-worker';

export type OffloadRequest =
  | { id: number; job: 'submission'; route: KelRoute; body: Uint8Array; header: string }
  | { id: number; job: 'signatures'; message: Uint8Array; keys: KelKey[]; signatures: IndexedSignature[] };

export type OffloadReply =
  | { id: number; job: 'submission'; result: SubmissionJobResult }
  | { id: number; job: 'signatures'; answers: boolean[] }
  | { id: number; job: 'error'; message: string };

export function runOffloadWorker(port: MessagePort): void {
  port.on('message', (req: OffloadRequest) => {
    let reply: OffloadReply;
    try {
      reply =
        req.job === 'submission'
          ? { id: req.id, job: 'submission', result: submissionJob(req.route, req.body, req.header) }
          : { id: req.id, job: 'signatures', answers: verifyAll(req.message, req.keys, req.signatures) };
    } catch (e) {
      // A bug, never content (the checks answer every input with an outcome): the event loop redoes the job itself.
      reply = { id: req.id, job: 'error', message: e instanceof Error ? (e.stack ?? e.message) : String(e) };
    }
    port.postMessage(reply);
  });
}

if (!isMainThread && parentPort !== null && (workerData as { role?: unknown } | null)?.role === KEL_OFFLOAD_WORKER_ROLE)
  runOffloadWorker(parentPort);
