/**
 * When to dial a bastion again after a failed attempt or a lost connection (SPEC §5.6, as
 * litewitness does for its per-log bastions): 0.1 s, 1 s, 1 s, 1 s, 5 s, 15 s, 30 s, then every
 * 60 s; a connection that stayed up for 5 minutes resets the schedule.
 */
export const RECONNECT_DELAYS_MS: readonly number[] = [100, 1_000, 1_000, 1_000, 5_000, 15_000, 30_000];
export const RECONNECT_STEADY_MS = 60_000;
export const RECONNECT_RESET_AFTER_MS = 5 * 60_000;

export class ReconnectSchedule {
  private failures = 0;
  private readonly delays: readonly number[];
  private readonly steady: number;

  constructor(delays: readonly number[] = RECONNECT_DELAYS_MS, steady = RECONNECT_STEADY_MS) {
    this.delays = delays;
    this.steady = steady;
  }

  /** The wait before the next attempt (each call moves one step along the schedule). */
  next(): number {
    const d = this.failures < this.delays.length ? this.delays[this.failures]! : this.steady;
    this.failures++;
    return d;
  }

  /** A connection ended after being up for `upMs`: long enough, and the schedule starts over. */
  ended(upMs: number): void {
    if (upMs >= RECONNECT_RESET_AFTER_MS) this.failures = 0;
  }
}
