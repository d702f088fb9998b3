/**
 * The in-flight bound of SPEC §2: at most `maxInFlight` requests hold a slot; up to `maxQueue`
 * more wait in FIFO order; a waiter that is not admitted before its deadline is refused.
 *
 * Slots are handed over directly on release (the next waiter is admitted without the count going
 * down and up), so a burst cannot overtake the queue. Waiters live in a Set (insertion-ordered, O(1)
 * removal) so an aborted client leaves the queue at once.
 */

export type WaitOutcome = 'admitted' | 'timeout';

export interface Waiter {
  readonly done: (outcome: WaitOutcome) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

export interface InFlightListener {
  (deltaInFlight: number, deltaQueued: number): void;
}

export class InFlightLimiter {
  readonly maxInFlight: number;
  readonly maxQueue: number;
  private active = 0;
  private readonly queue = new Set<Waiter>();
  private readonly onChange: InFlightListener | undefined;

  constructor(maxInFlight: number, maxQueue: number, onChange?: InFlightListener) {
    this.maxInFlight = maxInFlight;
    this.maxQueue = maxQueue;
    this.onChange = onChange;
  }

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.queue.size;
  }

  /** Take a slot now if one is free (and nobody is queued ahead). */
  tryAcquire(): boolean {
    if (this.active < this.maxInFlight && this.queue.size === 0) {
      this.active++;
      this.onChange?.(1, 0);
      return true;
    }
    return false;
  }

  /**
   * Queue for a slot. Returns null when the queue is full. Otherwise `done` is called exactly once:
   * 'admitted' (the caller now holds a slot and must `release()` it) or 'timeout' after `timeoutMs`
   * — unless `cancel(waiter)` is called first, in which case `done` is never called.
   */
  enqueue(timeoutMs: number, done: (outcome: WaitOutcome) => void): Waiter | null {
    if (this.queue.size >= this.maxQueue) return null;
    const waiter: Waiter = { done, timer: undefined };
    waiter.timer = setTimeout(
      () => {
        if (this.queue.delete(waiter)) {
          this.onChange?.(0, -1);
          waiter.done('timeout');
        }
      },
      Math.max(0, timeoutMs),
    );
    this.queue.add(waiter);
    this.onChange?.(0, 1);
    return waiter;
  }

  /** Remove a waiter that gave up (client gone). True if it was still queued. */
  cancel(waiter: Waiter): boolean {
    if (!this.queue.delete(waiter)) return false;
    clearTimeout(waiter.timer);
    this.onChange?.(0, -1);
    return true;
  }

  /** Give a slot back: the oldest waiter gets it, or the count goes down. */
  release(): void {
    const next = this.queue.values().next();
    if (next.done !== true) {
      const waiter = next.value;
      this.queue.delete(waiter);
      clearTimeout(waiter.timer);
      this.onChange?.(0, -1);
      waiter.done('admitted');
      return;
    }
    if (this.active > 0) {
      this.active--;
      this.onChange?.(-1, 0);
    }
  }
}
