/**
 * The logs file's origins against their stored key sets (SPEC §5 rev 4; the rules: key-binding.ts).
 */
import type { Counter } from 'prom-client';
import { KeyedLock } from '../store/keyed-lock.ts';
import type { CosignStateStorage } from '../store/types.ts';
import { compareKeySets } from './key-binding.ts';
import type { KnownLog } from './logs.ts';

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
  private readonly lane = new KeyedLock<null>();

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
    return this.lane.run(null, () => this.run(configured));
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
