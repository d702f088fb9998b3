/**
 * Readiness and the witness key set (SPEC §1.2): a process whose key set (current, next) differs
 * from the store's refuses every checkpoint signature (src/keys/rotation.ts keySetGuard), so it is
 * not ready to serve either — another replica announced or completed a rotation this process holds
 * no keys for. `/ready` answers 503 `not_ready` naming the two sets until the process restarts with
 * the store's `--key`/`--next-key`.
 *
 * The store's history is read at start, then at most every `intervalMs` (never per request), and
 * every signature guard's read (`guard`, the log's KeySetGuard) updates it at once.
 */
import { activeKeySet, keySetGuard } from '../keys/rotation.ts';
import type { StoreTransaction, WitnessKeyRecord } from '../store/types.ts';

export class KeySetWatch implements Disposable {
  /** The guard every checkpoint signature passes (it also reports what it read). */
  readonly guard: (tx: StoreTransaction) => Promise<void>;
  private readonly mine: string;
  private readonly signerSet: readonly string[];
  private readonly readHistory: () => Promise<readonly WitnessKeyRecord[]>;
  private stored: string[] | undefined;
  private readonly timer: NodeJS.Timeout;
  private reading = false;

  /** Starts reading at once, then every `intervalMs` (default 5 s); dispose to stop. */
  constructor(signerSet: readonly string[], readHistory: () => Promise<readonly WitnessKeyRecord[]>, intervalMs = 5_000) {
    this.signerSet = signerSet;
    this.readHistory = readHistory;
    this.mine = signerSet.join(',');
    this.guard = keySetGuard(signerSet, (s) => {
      this.stored = [...s];
    });
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), intervalMs);
    this.timer.unref();
  }

  /** Read the store's history now (a failed read keeps the last answer: the store's own health reports it). */
  async refresh(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      this.stored = activeKeySet(await this.readHistory());
    } catch {
      // the store being down is StoreHealth's finding, not this one's
    } finally {
      this.reading = false;
    }
  }

  /** Readiness failures (empty: this process signs with the store's key set, or none was read yet). */
  readonly failures = (): string[] => {
    const s = this.stored;
    if (s === undefined || s.length === 0 || s.join(',') === this.mine) return [];
    return [
      `witness key set: the store's is [${s.join(', ')}], this process signs with [${this.signerSet.join(', ')}] ` +
        '(a rotation was announced or completed by another process: restart with its --key/--next-key, docs/keys.md)',
    ];
  };

  [Symbol.dispose](): void {
    clearInterval(this.timer);
  }
}
