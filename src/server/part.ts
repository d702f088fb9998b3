/**
 * The contract of a node part (docs/ARCHITECTURE.md, "One node, many parts"): what a feature of a
 * node (the anchor role, the cosign role, the witnessed own log, the party registry, the bastion
 * backends, the bridge's token endpoint, …) gives the node that assembles it. The node starts the
 * parts in order on an AsyncDisposableStack (so they stop in reverse order by construction),
 * mounts their routes, renders their typed health and status fragments, and forwards its one
 * SIGHUP handler to their `reload()`.
 *
 * Each part declares the slice of the node's context it borrows as its own interface; the node
 * lends one context object that the compiler checks against every slice where the part starts.
 */
import type { App } from './options.ts';

/** What one reload of a part did: its name, and why it failed (its previous state stays). */
export interface PartReload {
  part: string;
  /** null when the reload was accepted (or nothing needed reloading). */
  error: string | null;
}

export interface NodePart<Health = undefined, Status = undefined> {
  /** A short name for logs and reload reports (`anchoring`, `cosign`, `registry`, …). */
  readonly name: string;
  /** Register the part's routes (called once, before the node listens). */
  register?(app: App): void;
  /** The part's fragment of `/health` (typed: the node places it in the body). */
  health?(): Health;
  /** The part's fragment of the status page (typed: the page renders it). */
  status?(): Status | Promise<Status>;
  /** Re-read the part's files and sources (the node's SIGHUP). */
  reload?(): Promise<PartReload> | PartReload;
  /** Stop timers, watchers and connections; the node awaits it on shutdown. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** An async dispose for a part whose stopping is synchronous. */
export function disposeBy(stop: () => void): () => Promise<void> {
  return () => {
    stop();
    return Promise.resolve();
  };
}

/**
 * Run `start` and take over the SIGHUP listeners it adds: they are removed from the process and
 * returned, to be called by the part's `reload()` instead (the node installs no SIGHUP handler;
 * the CLI's one calls `node.reload()`). For components that listen for SIGHUP themselves.
 */
export async function adoptSighupListeners<T>(start: () => T | Promise<T>): Promise<{ value: T; hup: () => void }> {
  const before = new Set(process.listeners('SIGHUP'));
  const adopt = (): (() => void)[] => {
    const added = process.listeners('SIGHUP').filter((l) => !before.has(l));
    for (const l of added) process.off('SIGHUP', l);
    return added as (() => void)[];
  };
  let value: T;
  try {
    value = await start();
  } catch (e) {
    adopt(); // nothing of a part that failed to start keeps listening
    throw e;
  }
  const adopted = adopt();
  return {
    value,
    hup: () => {
      for (const l of adopted) l();
    },
  };
}
