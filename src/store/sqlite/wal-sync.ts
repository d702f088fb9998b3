/**
 * Group-committed durability for the SQLite writer, off the event loop (issue 28, lever 1).
 *
 * The writer connection runs WAL with synchronous=NORMAL: COMMIT appends the transaction's frames
 * to the `-wal` file without an fsync. What synchronous=FULL would add is exactly one sync of the
 * WAL file after each commit (sqlite.org/pragma.html#pragma_synchronous, sqlite.org/wal.html);
 * this class does that sync with `fs.fdatasync` on libuv's thread pool, and nothing built on a
 * commit is released before it: a write transaction's promise, and any read that could have seen
 * the commit, resolve only once an fdatasync that started after the COMMIT returned has completed.
 * Commits that land while one fdatasync runs share the next one (group commit).
 *
 * A failed fdatasync poisons the store: after fsync reports an error Linux may have dropped the
 * dirty pages, so nothing written since can be trusted to be on disk; every later call answers
 * store_unavailable until the process restarts (SQLite then replays what the WAL really holds).
 */
import { fdatasync, fstatSync, openSync, closeSync, statSync } from 'node:fs';
import { StoreUnavailableError } from '../errors.ts';

/** How the WAL file is flushed: fs.fdatasync on the thread pool (tests inject slow or failing ones). */
export type WalFlush = (fd: number) => Promise<void>;

const threadPoolFdatasync: WalFlush = (fd) =>
  new Promise((resolve, reject) => {
    fdatasync(fd, (e) => {
      if (e === null) resolve();
      else reject(e);
    });
  });

interface Waiter {
  gen: number;
  resolve: () => void;
  reject: (e: Error) => void;
}

export class WalSync {
  private readonly walPath: string;
  private readonly flush: WalFlush;
  /** Commits made on the writer so far (a generation number). */
  private written = 0;
  /** Every commit up to this generation is on disk. */
  private synced = 0;
  private running = false;
  private waiters: Waiter[] = [];
  private fd: number | undefined;
  private ino: number | undefined;
  private failure: Error | undefined;
  /** fdatasync calls made (for tests and metrics). */
  flushes = 0;

  constructor(walPath: string, flush: WalFlush = threadPoolFdatasync) {
    this.walPath = walPath;
    this.flush = flush;
  }

  /** Record a COMMIT on the writer, in the same turn as it returned; the generation to wait for. */
  committed(): number {
    return ++this.written;
  }

  /** Throws store_unavailable once an fdatasync has failed. */
  check(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  /** Resolves once every commit made so far (or up to `gen`) is on disk. */
  durable(gen = this.written): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (gen <= this.synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ gen, resolve, reject });
      if (!this.running) void this.run();
    });
  }

  /** `value` once every commit made so far is on disk: what a read that may have seen them returns. */
  settle<T>(value: T): Promise<T> {
    if (this.written <= this.synced && this.failure === undefined) return Promise.resolve(value);
    return this.durable().then(() => value);
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.waiters.length > 0) {
        const target = this.written;
        try {
          const fd = this.walFd();
          this.flushes++;
          await this.flush(fd);
        } catch (e) {
          this.fail(e);
          return;
        }
        this.synced = target;
        const due = this.waiters.filter((w) => w.gen <= target);
        this.waiters = this.waiters.filter((w) => w.gen > target);
        for (const w of due) w.resolve();
      }
    } finally {
      this.running = false;
    }
  }

  /** The `-wal` file's descriptor, opened once the file exists and re-opened if it was replaced. */
  private walFd(): number {
    const ino = statSync(this.walPath).ino;
    if (this.fd !== undefined && ino === this.ino) return this.fd;
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    const fd = openSync(this.walPath, 'r');
    this.fd = fd;
    this.ino = fstatSync(fd).ino;
    return fd;
  }

  private fail(e: unknown): void {
    const msg = e instanceof Error ? e.message : String(e);
    this.failure = new StoreUnavailableError(`store: syncing the WAL failed (${msg}); restart the witness`);
    for (const w of this.waiters.splice(0)) w.reject(this.failure);
  }

  /** Close the descriptor (the store is closing; its writer checkpoints with FULL sync). */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
