// When this process knows each checkpoint was signed: a checkpoint note carries no time and the
// store keeps none, so the status page's "signed X ago" comes from this in-memory clock.

/** When the checkpoint of each size was signed, as far as this process knows (docs/witness.md, "Status page"). */
export class CheckpointClock {
  private signedSize = -1;
  private signedAtMs = 0;
  private seenSize = -1;
  private seenAtMs = 0;

  /** This process signed the checkpoint of `size` at `atMs`. */
  signed(size: number, atMs: number): void {
    this.signedSize = size;
    this.signedAtMs = atMs;
  }

  /** This process saw the checkpoint of `size` (signed elsewhere or earlier) at `atMs`. */
  seen(size: number, atMs: number): void {
    if (size !== this.seenSize) {
      this.seenSize = size;
      this.seenAtMs = atMs;
    }
  }

  /** When the checkpoint of `size` was signed: exact, or the latest time it can have been signed. */
  signedAt(size: number, nowMs: number): { atMs: number; exact: boolean } {
    if (size === this.signedSize) return { atMs: this.signedAtMs, exact: true };
    this.seen(size, nowMs);
    return { atMs: this.seenAtMs, exact: false };
  }
}
