/**
 * Group commit for the KERI witness role (SPEC §3.6.6: "group commit allowed, never split"). Each
 * request's checks 7–11 are a job run inside a store transaction; jobs that arrive while a
 * transaction is running wait, and the next transaction runs all of them (up to `maxGroup`), so
 * they share one BEGIN … COMMIT (one fsync), one own-log batch and one checkpoint signature. A job
 * is answered only after the commit of the transaction it ran in: durability is unchanged, and a
 * crash before the commit loses every event of the group entirely.
 *
 * A job that throws aborts the whole transaction; its group is then run again one job per
 * transaction, so one failing request never fails another. An idle queue runs its first job after
 * the current event-loop turn (a lone controller waits for one `setImmediate`). Within a group jobs run in prefix order, arrival order
 * within a prefix: PostgreSQL replicas then take the per-prefix advisory locks in one order.
 */
import type { LogBatch } from '../log/batch.ts';
import type { TransparencyLog } from '../log/log.ts';
import type { StoreTransaction, WitnessStore } from '../store/types.ts';

export type GroupJobRun<R> = (tx: StoreTransaction, batch: LogBatch) => Promise<R>;

interface Job {
  key: string;
  run: GroupJobRun<unknown>;
  resolve: (value: unknown) => void;
  reject: (e: unknown) => void;
}

export class GroupCommit {
  private readonly log: TransparencyLog<WitnessStore>;
  private readonly maxGroup: number;
  private readonly grouped: ((size: number) => void) | undefined;
  private queue: Job[] = [];
  private running = false;

  /** `grouped`: called with the size of each committed group (metrics, tests). */
  constructor(log: TransparencyLog<WitnessStore>, maxGroup: number, grouped?: (size: number) => void) {
    this.log = log;
    this.maxGroup = Math.max(1, Math.floor(maxGroup));
    this.grouped = grouped;
  }

  /** Run `run` in a transaction shared with the jobs queued beside it; resolves after its commit. */
  submit<R>(key: string, run: GroupJobRun<R>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ key, run, resolve: resolve as (value: unknown) => void, reject });
      if (!this.running) {
        this.running = true;
        // After this turn's I/O callbacks: the requests the event loop read meanwhile (SQLite's
        // commit blocks it, so they arrive together) join this transaction.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const group = this.queue.splice(0, this.maxGroup);
        await this.commitGroup(
          group
            .map((j, i) => ({ j, i }))
            .sort((a, b) => (a.j.key < b.j.key ? -1 : a.j.key > b.j.key ? 1 : a.i - b.i))
            .map((x) => x.j),
        );
      }
    } finally {
      this.running = false;
    }
  }

  private async commitGroup(group: Job[]): Promise<void> {
    try {
      const values = await this.runTogether(group);
      group.forEach((j, i) => {
        j.resolve(values[i]);
      });
      return;
    } catch (e) {
      if (group.length === 1) {
        group[0]!.reject(e);
        return;
      }
    }
    // One job failed the shared transaction (nothing of it was committed): each alone now.
    for (const j of group) {
      try {
        j.resolve((await this.runTogether([j]))[0]);
      } catch (e) {
        j.reject(e);
      }
    }
  }

  private async runTogether(group: readonly Job[]): Promise<unknown[]> {
    const { value } = await this.log.transaction(async (tx, batch) => {
      const out: unknown[] = [];
      for (const j of group) out.push(await j.run(tx, batch));
      return out;
    });
    this.grouped?.(group.length);
    return value;
  }
}
