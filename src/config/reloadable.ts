/**
 * A configuration snapshot loaded from a file and reloaded atomically (SPEC §3.2): on SIGHUP and
 * when a new file is renamed into place in its directory (watched, debounced 1 s; in-place writes
 * are not picked up). A reload that fails keeps the previous snapshot, logs why and counts it.
 * Readers take `current()` once per request: one snapshot per request.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

export interface ReloadEvents {
  loaded?: (source: string) => void;
  failed?: (reason: string) => void;
}

export class Reloadable<T> {
  private value: T;
  private readonly path: string;
  private readonly load: (path: string) => T;
  private readonly events: ReloadEvents;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly onHup = (): void => {
    this.reload('SIGHUP');
  };

  /** Loads once (throws if the first load fails: start-up refuses a bad file). */
  constructor(path: string, load: (path: string) => T, events: ReloadEvents = {}) {
    this.path = path;
    this.load = load;
    this.events = events;
    this.value = load(path);
  }

  current(): T {
    return this.value;
  }

  /** Returns true when the new file was accepted. */
  reload(source: string): boolean {
    try {
      this.value = this.load(this.path);
      this.events.loaded?.(source);
      return true;
    } catch (e) {
      this.events.failed?.(`${source}: ${e instanceof Error ? e.message : String(e)}`);
      return false;
    }
  }

  /**
   * Reload without reporting: null when the new file was accepted, else why not (the previous
   * snapshot stays). For an owner that reports one outcome for several things reloaded together.
   */
  tryReload(): string | null {
    try {
      this.value = this.load(this.path);
      return null;
    } catch (e) {
      return e instanceof Error ? e.message : String(e);
    }
  }

  /** Start watching the directory and (unless `sighup` is false: the owner handles it) listening for SIGHUP. */
  start(debounceMs = 1000, sighup = true): void {
    const name = basename(this.path);
    this.watcher = watch(dirname(this.path), { persistent: false }, (event, file) => {
      if (event !== 'rename' || file !== name) return;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.reload('rename'), debounceMs);
      this.timer.unref();
    });
    if (sighup) process.on('SIGHUP', this.onHup);
  }

  stop(): void {
    this.watcher?.close();
    clearTimeout(this.timer);
    process.off('SIGHUP', this.onHup);
  }
}
