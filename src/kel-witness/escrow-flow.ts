/**
 * The KERI witness role's escrow flow (SPEC §3.6.4): events out of order or of a prefix not held
 * wait in the escrow (escrow.ts); a catch-up replays a prefix's escrowed events 0 … sn − 1, and
 * after each commit the escrowed events that now continue the KEL are tried in sn order.
 */
import { decodeUtf8, parseStrictJson } from '../encoding/json.ts';
import { parseWitnessAttachments } from '../keri/cesr-attachments.ts';
import { parseEvent } from '../keri/event.ts';
import type { KelLedgerEvent } from '../store/types.ts';
import { ledgerRow, statelessCheck, verifyAt, type Candidate } from './checks.ts';
import type { EscrowEntry, KelEscrow } from './escrow.ts';
import { ledgerStateAfter, type LedgerState } from './key-state.ts';
import { problem, type KelOutcome } from './outcome.ts';

/** Hold c in the escrow: `escrowed` with its expiry, or `kel_escrow_full`. */
export function holdInEscrow(escrow: KelEscrow, c: Candidate, ip: string, nowMs: number): KelOutcome {
  const entry: EscrowEntry = {
    prefix: c.e.i,
    sn: c.e.sn,
    said: c.e.d,
    t: c.e.t,
    di: c.e.di,
    body: c.body,
    attachment: c.header,
    ip,
    arrivedMs: nowMs,
    bytes: c.body.length + c.header.length,
  };
  const added = escrow.add(entry, nowMs);
  if (!added.ok) return problem(503, 'kel_escrow_full', added.detail, { headers: { 'retry-after': '60' } });
  return { kind: 'escrowed', prefix: c.e.i, sn: c.e.sn, said: c.e.d, expiresAt: new Date(added.expiresMs).toISOString() };
}

/** The delegator named by an escrowed `dip` of `prefix` (check 4 for a prefix not held yet). */
export function escrowedDelegator(escrow: KelEscrow, prefix: string): string | null {
  return escrow.entries(prefix).find((x) => x.t === 'dip')?.di ?? null;
}

/** The candidate of an escrow entry (parsing again: the entry keeps the request's bytes). */
export function escrowCandidate(entry: EscrowEntry): Candidate | null {
  try {
    const att = parseWitnessAttachments(entry.attachment, false);
    const text = decodeUtf8(entry.body);
    const e = parseEvent(parseStrictJson(text));
    return { e, text, body: entry.body, header: entry.attachment, att, attachment: att.controllerText + att.sourceSealText };
  } catch {
    return null;
  }
}

export interface CatchUpLink {
  c: Candidate;
  state: LedgerState;
  entry: EscrowEntry;
}

/**
 * Catch-up admission (SPEC §3.6.4): for a prefix not held whose escrow holds events 0 … sn − 1,
 * the chain of the first valid candidate per sn (arrival order), verified whole; null when a link
 * is missing. Nothing is written: the caller stores the chain (all or nothing).
 */
export function catchUpChain(escrow: KelEscrow, prefix: string, sn: number, nowMs: number): CatchUpLink[] | null {
  const chain: CatchUpLink[] = [];
  let prior: LedgerState | null = null;
  let prevRow: KelLedgerEvent | undefined;
  for (let j = 0; j < sn; j++) {
    let found = false;
    for (const entry of escrow.entries(prefix).filter((x) => x.sn === j)) {
      const c = escrowCandidate(entry);
      if (c === null || statelessCheck(c) !== null) continue;
      const v = verifyAt(c, prevRow, prior);
      if (!v.ok) continue;
      const state = ledgerStateAfter(v.state, prior, c.e.t !== 'ixn');
      chain.push({ c, state, entry });
      prior = state;
      prevRow = { ...ledgerRow(c, state, nowMs), ordinal: j };
      found = true;
      break;
    }
    if (!found) return null;
  }
  return chain;
}

export interface EscrowDrainHost {
  /** The committed tip of `prefix`. */
  tip(prefix: string): Promise<KelLedgerEvent | undefined>;
  /** Checks 7–11 for an escrowed event in its own transaction (as `POST /`). */
  admit(c: Candidate, ip: string): Promise<KelOutcome>;
  /** An escrowed event was dropped as invalid. */
  invalid(): void;
}

/** After a commit: escrowed events that now continue the KEL, in sn order, at one sn in arrival order. */
export async function drainEscrow(escrow: KelEscrow, prefix: string, host: EscrowDrainHost): Promise<void> {
  for (;;) {
    const tip = await host.tip(prefix);
    if (tip === undefined) return;
    const next = escrow.entries(prefix).filter((x) => x.sn === tip.sn + 1);
    if (next.length === 0) return;
    let advanced = false;
    for (const entry of next) {
      escrow.remove(entry);
      const c = escrowCandidate(entry);
      const out = c === null ? null : (statelessCheck(c) ?? (await host.admit(c, entry.ip)));
      if (out !== null && (out.kind === 'accepted' || out.kind === 'receipt')) {
        advanced = true;
        break;
      }
      host.invalid();
    }
    if (!advanced) return;
  }
}
