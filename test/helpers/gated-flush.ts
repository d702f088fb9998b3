/**
 * A slow disk for the SQLite WAL sync (src/store/sqlite/wal-sync.ts): a flush that really
 * fdatasyncs, but only once the test opens the gate, and counts its calls. Used by the tests that
 * check nothing built on a commit is released before its fdatasync (test/store/wal-sync.test.ts,
 * test/store/cosign-state-cache.test.ts).
 */
import { fdatasync } from 'node:fs';
import { sleep } from './rel-common.ts';

export interface GatedFlush {
  flush: (fd: number) => Promise<void>;
  /** Let held and later flushes through. */
  open: () => void;
  /** Hold every flush from now on until open(). */
  close: () => void;
  calls: () => number;
}

export function gatedFlush(): GatedFlush {
  let gate: Promise<void> = Promise.resolve();
  let release: () => void = () => undefined;
  let calls = 0;
  return {
    flush: async (fd) => {
      calls++;
      await gate;
      await new Promise<void>((resolve, reject) => {
        fdatasync(fd, (e) => {
          if (e === null) resolve();
          else reject(e);
        });
      });
    },
    close: () => {
      gate = new Promise((r) => (release = r));
    },
    open: () => {
      release();
    },
    calls: () => calls,
  };
}

/** Whether `p` settled (either way) within `ms`. */
export async function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await sleep(ms);
  return settled;
}
