/**
 * The load-generating suites (overload, slowloris, crash loop, HTTP fuzzing) measure latency and
 * throughput on a 2-core machine; two of them at once (the runner starts two test files at a
 * time) starve each other and turn their assertions into coin flips (seen in CI: health p99 1.7 s
 * under overload beside another load suite, 0.18 s alone). Each such file calls
 * `holdHeavyLock()` before its tests: one holder at a time across processes, released when the
 * process exits. The lock is a directory (mkdir is atomic) holding the owner's pid; a lock whose
 * owner is gone is taken over.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const LOCK = join(tmpdir(), `aw-heavy-tests-${process.getuid?.() ?? 0}.lock`);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function holdHeavyLock(): Promise<void> {
  let unreadableSince: number | undefined;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      process.once('exit', () => {
        rmSync(LOCK, { recursive: true, force: true });
      });
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    let owner = NaN;
    try {
      owner = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
    } catch {
      // Just created, pid not written yet: wait.
    }
    const now = Date.now();
    unreadableSince = Number.isInteger(owner) && owner > 0 ? undefined : (unreadableSince ?? now);
    // An owner that died, or one that died between mkdir and writing its pid (unreadable for 10 s).
    if ((unreadableSince === undefined && !alive(owner)) || (unreadableSince !== undefined && now - unreadableSince > 10_000)) {
      rmSync(LOCK, { recursive: true, force: true });
      unreadableSince = undefined;
    } else await new Promise((r) => setTimeout(r, 250));
  }
}
