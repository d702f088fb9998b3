/**
 * The stored bytes of a held prefix (its events and attachments, superseded included), which check 9
 * bounds by `--kel-max-bytes` (SPEC §3.6.3). Summing them is a scan of every row of the prefix, so
 * a long KEL paid it on each event; the sum is now remembered per prefix together with the tip it
 * was known at. Stored rows are never rewritten and the tip has the highest ordinal, so the rows of
 * a prefix whose tip is (ordinal, SAID) are always the same: a remembered sum is either for the
 * tip in the store (used) or for another one (read again). Sums are learned after their commit only.
 */
import type { KelLedgerEvent, KelLedgerTx } from '../store/kel-ledger.ts';

const MAX_PREFIXES = 10_000;

export interface PrefixBytesAt {
  prefix: string;
  ordinal: number;
  said: string;
  bytes: number;
}

export class PrefixBytes {
  private readonly known = new Map<string, PrefixBytesAt>();

  /** The stored bytes of `tip.prefix`, whose committed or in-transaction tip is `tip`. */
  async at(tx: Pick<KelLedgerTx, 'prefixBytes'>, tip: KelLedgerEvent): Promise<number> {
    const k = this.known.get(tip.prefix);
    if (k !== undefined && k.ordinal === tip.ordinal && k.said === tip.said) return k.bytes;
    return tx.prefixBytes(tip.prefix);
  }

  /** After the commit that made (ordinal, said) the tip of `prefix`. */
  learn(at: PrefixBytesAt): void {
    this.known.delete(at.prefix);
    if (this.known.size >= MAX_PREFIXES) this.known.delete(this.known.keys().next().value!);
    this.known.set(at.prefix, at);
  }
}
