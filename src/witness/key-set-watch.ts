/**
 * Readiness and the witness key set (SPEC §1.2): a process whose key set (current, next) differs
 * from the store's refuses every checkpoint signature (src/keys/rotation.ts keySetGuard), so it is
 * not ready to serve either — another replica announced or completed a rotation this process holds
 * no keys for. `/ready` answers 503 `not_ready` naming the two sets until the process restarts with
 * the store's `--key`/`--next-key`.
 *
 * The store's history is read at start, then at most every `intervalMs` (never per request), and
 * every signature guard's read updates it at once.
 */
import type { WitnessKeyRecord } from '../store/types.ts';
import { activeKeySet } from '../keys/rotation.ts';

export class KeySetWatch {
  private readonly mine: string;
  private readonly signerSet: readonly string[];
  private readonly readHistory: () => Promise<readonly WitnessKeyRecord[]>;
  private readonly intervalMs: number;
  private stored: string[] | undefined;
  private timer: NodeJS.Timeout | undefined;
  private reading = false;

  constructor(signerSet: readonly string[], readHistory: () => Promise<readonly WitnessKeyRecord[]>, intervalMs = 5_000) {
    this.signerSet = signerSet;
    this.readHistory = readHistory;
    this.intervalMs = intervalMs;
    this.mine = signerSet.join(',');
  }

  /** What a guard (or a read) saw: the store's active key set. */
  observe(stored: readonly string[]): void {
    this.stored = [...stored];
  }

  /** Read the store's history now (a failed read keeps the last answer: the store's own health reports it). */
  async refresh(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      this.observe(activeKeySet(await this.readHistory()));
    } catch {
      // the store being down is StoreHealth's finding, not this one's
    } finally {
      this.reading = false;
    }
  }

  start(): void {
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Readiness failures (empty: this process signs with the store's key set, or none was read yet). */
  failures(): string[] {
    const s = this.stored;
    if (s === undefined || s.length === 0 || s.join(',') === this.mine) return [];
    return [
      `witness key set: the store's is [${s.join(', ')}], this process signs with [${this.signerSet.join(', ')}] ` +
        '(a rotation was announced or completed by another process: restart with its --key/--next-key, docs/keys.md)',
    ];
  }
}
