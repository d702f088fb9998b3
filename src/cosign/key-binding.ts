/**
 * An origin's stored state is bound to the log key set it was cosigned under (SPEC §5 rev 4).
 *
 *   same      the configured set is the stored one
 *   unbound   the state predates key sets (bound now, to the configured set)
 *   update    the sets share a key (the operator's `--logs` follows a rotation), or nothing was
 *             cosigned yet: the state continues under the configured set
 *   conflict  disjoint sets while a checkpoint was cosigned: not served until
 *             `anchor-witness cosign forget ORIGIN`
 *
 * Key sets are compared as normalized vkey text (formatVkey: lowercase hex key ID), never by
 * checking keys.
 */
import type { Counter } from 'prom-client';
import type { CosignStateStorage } from '../store/types.ts';
import type { KnownLog } from './logs.ts';

export type KeyBinding = 'same' | 'unbound' | 'update' | 'conflict';

/** How the `configured` key set relates to the stored one of a state (`cosigned`: not an empty state). */
export function compareKeySets(stored: readonly string[] | undefined, configured: readonly string[], cosigned: boolean): KeyBinding {
  if (stored === undefined) return 'unbound';
  const have = new Set(stored);
  if (configured.length === have.size && configured.every((k) => have.has(k))) return 'same';
  if (configured.some((k) => have.has(k))) return 'update';
  return cosigned ? 'conflict' : 'update';
}

/** A vkey's text as formatVkey writes it (the key ID in lowercase hex), without checking the key. */
export function normalizeVkeyText(vkey: string): string {
  const i1 = vkey.indexOf('+');
  const i2 = i1 < 0 ? -1 : vkey.indexOf('+', i1 + 1);
  if (i2 < 0) return vkey;
  return vkey.slice(0, i1 + 1) + vkey.slice(i1 + 1, i2).toLowerCase() + vkey.slice(i2);
}

export interface KeyBindingLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * Brings the stored key sets of the logs file's origins in line with the file (at start and after
 * each load): records updates and first bindings, reports conflicts (logged and counted once per
 * origin and key set). Requests check the binding themselves (service.ts), so serving never
 * depends on this having run.
 */
export class OriginKeyBinder {
  private readonly store: CosignStateStorage;
  private readonly log: KeyBindingLogger | undefined;
  private readonly metrics: { keyUpdates: Counter<'origin'>; keyConflicts: Counter<'origin'> } | undefined;
  /** Origin → the configured key set last reported as a conflict. */
  private readonly reported = new Map<string, string>();
  private lane: Promise<unknown> = Promise.resolve();

  constructor(opts: {
    store: CosignStateStorage;
    log?: KeyBindingLogger | undefined;
    metrics?: { keyUpdates: Counter<'origin'>; keyConflicts: Counter<'origin'> } | undefined;
  }) {
    this.store = opts.store;
    this.log = opts.log;
    this.metrics = opts.metrics;
  }

  /** Origins of the logs file in conflict with their stored state (as of the last run). */
  get conflicts(): ReadonlySet<string> {
    return new Set(this.reported.keys());
  }

  /** Reconcile the enabled logs-file origins (runs are serialized). */
  reconcile(configured: readonly KnownLog[]): Promise<void> {
    const run = this.lane.then(() => this.run(configured));
    this.lane = run.catch(() => undefined);
    return run;
  }

  private async run(configured: readonly KnownLog[]): Promise<void> {
    const enabled = configured.filter((l) => l.disabled !== true);
    const stored = await this.store.originKeys(enabled.map((l) => l.origin));
    const named = new Set(enabled.map((l) => l.origin));
    for (const o of [...this.reported.keys()]) if (!named.has(o)) this.reported.delete(o);
    for (const l of enabled) {
      const row = stored.get(l.origin);
      if (row === undefined) {
        this.reported.delete(l.origin);
        continue;
      }
      const keys = l.verifiers.map((v) => v.vkey);
      const binding = compareKeySets(row.keys, keys, row.cosigned);
      if (binding === 'conflict') {
        const set = [...keys].sort().join('\n');
        if (this.reported.get(l.origin) === set) continue;
        this.reported.set(l.origin, set);
        this.metrics?.keyConflicts.inc({ origin: l.origin });
        this.log?.warn(
          { origin: l.origin, stored_keys: row.keys, keys },
          'cosign: the logs file gives this origin keys disjoint from those its state was cosigned under; not served until `anchor-witness cosign forget`',
        );
        continue;
      }
      this.reported.delete(l.origin);
      if (binding === 'same') continue;
      await this.store.setOriginKeys(l.origin, keys);
      if (binding === 'update') {
        this.metrics?.keyUpdates.inc({ origin: l.origin });
        this.log?.info({ origin: l.origin, stored_keys: row.keys, keys }, "cosign: origin's log keys updated by the logs file");
      } else {
        this.log?.info({ origin: l.origin, keys }, "cosign: origin's stored state bound to its log keys");
      }
    }
  }
}
