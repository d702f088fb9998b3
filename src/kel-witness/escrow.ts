/**
 * The escrow (SPEC §3.6.4): out-of-order events (check 7) and catch-up events of prefixes not held,
 * kept in memory (per process) with the §3.6.7 bounds and a TTL. Escrowed events are never
 * receipted, served or logged. Entries are keyed by (prefix, sn, SAID); at most 4 SAIDs per sn.
 */

export interface EscrowEntry {
  prefix: string;
  sn: number;
  said: string;
  t: string;
  /** A `dip`'s delegator (check 4 admits `delegates-of:` prefixes by their escrowed `dip`). */
  di: string | null;
  /** The request as received: B(e) and the CESR attachment header. */
  body: Uint8Array;
  attachment: string;
  ip: string;
  arrivedMs: number;
  bytes: number;
}

export interface EscrowLimits {
  perPrefixEvents: number;
  perPrefixBytes: number;
  perPrefixPerIp: number;
  perIp: number;
  totalEvents: number;
  totalBytes: number;
  saidsPerSn: number;
  ttlMs: number;
}

export const DEFAULT_ESCROW_LIMITS: EscrowLimits = {
  perPrefixEvents: 1024,
  perPrefixBytes: 1024 * 1024,
  perPrefixPerIp: 64,
  perIp: 1000,
  totalEvents: 10_000,
  totalBytes: 32 * 1024 * 1024,
  saidsPerSn: 4,
  ttlMs: 20 * 60 * 1000,
};

export type EscrowAdd = { ok: true; expiresMs: number } | { ok: false; detail: string };

export class KelEscrow {
  private readonly limits: EscrowLimits;
  private readonly byPrefix = new Map<string, EscrowEntry[]>();
  private readonly perIp = new Map<string, number>();
  private events = 0;
  private bytes = 0;
  expired = 0;

  constructor(limits: EscrowLimits) {
    this.limits = limits;
  }

  get size(): number {
    return this.events;
  }

  /** Add an entry (arrival order kept); an entry already held is refreshed in place. */
  add(e: EscrowEntry, nowMs: number): EscrowAdd {
    this.purge(nowMs);
    const list = this.byPrefix.get(e.prefix) ?? [];
    if (list.some((x) => x.sn === e.sn && x.said === e.said)) return { ok: true, expiresMs: nowMs + this.limits.ttlMs };
    const L = this.limits;
    const prefixBytes = list.reduce((n, x) => n + x.bytes, 0);
    if (list.length >= L.perPrefixEvents || prefixBytes + e.bytes > L.perPrefixBytes)
      return { ok: false, detail: 'the escrow is full for this prefix' };
    if (list.filter((x) => x.ip === e.ip).length >= L.perPrefixPerIp)
      return { ok: false, detail: 'this client holds 64 escrowed events of this prefix' };
    if (list.filter((x) => x.sn === e.sn).length >= L.saidsPerSn) return { ok: false, detail: `4 events are escrowed at sn ${e.sn}` };
    if ((this.perIp.get(e.ip) ?? 0) >= L.perIp) return { ok: false, detail: 'this client holds the most escrowed events allowed' };
    if (this.events >= L.totalEvents || this.bytes + e.bytes > L.totalBytes) return { ok: false, detail: 'the escrow is full' };
    list.push(e);
    this.byPrefix.set(e.prefix, list);
    this.perIp.set(e.ip, (this.perIp.get(e.ip) ?? 0) + 1);
    this.events++;
    this.bytes += e.bytes;
    return { ok: true, expiresMs: e.arrivedMs + L.ttlMs };
  }

  /** A prefix's entries, in arrival order. */
  entries(prefix: string): readonly EscrowEntry[] {
    return this.byPrefix.get(prefix) ?? [];
  }

  prefixes(): string[] {
    return [...this.byPrefix.keys()];
  }

  remove(e: EscrowEntry): void {
    const list = this.byPrefix.get(e.prefix);
    if (list === undefined) return;
    const i = list.indexOf(e);
    if (i < 0) return;
    list.splice(i, 1);
    if (list.length === 0) this.byPrefix.delete(e.prefix);
    const n = (this.perIp.get(e.ip) ?? 1) - 1;
    if (n <= 0) this.perIp.delete(e.ip);
    else this.perIp.set(e.ip, n);
    this.events--;
    this.bytes -= e.bytes;
  }

  /** Drop the entries older than the TTL. */
  purge(nowMs: number): number {
    let n = 0;
    for (const list of [...this.byPrefix.values()]) {
      for (const e of [...list]) {
        if (nowMs - e.arrivedMs >= this.limits.ttlMs) {
          this.remove(e);
          n++;
        }
      }
    }
    this.expired += n;
    return n;
  }
}
