/**
 * Receipts of the other backers of an event (SPEC §3.6.3): `-C` couples and `-B` indexed witness
 * signatures that verify over the stored event's bytes are stored as that backer's receipt, one per
 * backer; POST / with an `rct` (exactly `{v,t,d,i,s}`) stores them for an event already held.
 */
import { verifyEd25519 } from '../crypto/ed25519.ts';
import type { WitnessAttachments } from '../keri/cesr-attachments.ts';
import { decodeQb64 } from '../keri/qb64.ts';
import type { StoreTransaction, WitnessStore } from '../store/types.ts';
import { decodeLedgerState } from './key-state.ts';
import { problem, type KelOutcome } from './outcome.ts';

export interface ReceiptedEvent {
  prefix: string;
  said: string;
  /** B(e). */
  bytes: Uint8Array;
  /** The backers after the event, in order (a receipt's index is a position here). */
  backers: readonly string[];
}

/** Store the verifying receipts of backers other than `own` carried by `att`. */
export async function storePeerReceipts(tx: StoreTransaction, own: string, ev: ReceiptedEvent, att: WitnessAttachments): Promise<void> {
  const found = new Map<number, { backer: string; signature: Uint8Array }>();
  for (const couple of att.couples) found.set(ev.backers.indexOf(couple.prefix), { backer: couple.prefix, signature: couple.signature });
  for (const sig of att.witnesses) {
    const backer = ev.backers[sig.index];
    if (backer !== undefined && !found.has(sig.index)) found.set(sig.index, { backer, signature: sig.signature });
  }
  for (const [index, r] of found) {
    if (index < 0 || r.backer === own) continue;
    const key = decodeQb64(r.backer, ['B']);
    if (key === null || !verifyEd25519(key.raw, ev.bytes, r.signature)) continue;
    await tx.kel.putReceipt({ prefix: ev.prefix, said: ev.said, index, backer: r.backer, signature: r.signature });
  }
}

/** POST / with an `rct`: the backers' receipts for a stored event; unknown events are ignored. */
export async function peerReceiptMessage(
  store: WitnessStore,
  own: string,
  value: Record<string, unknown>,
  att: WitnessAttachments,
): Promise<KelOutcome> {
  const names = Object.keys(value);
  if (names.join(',') !== 'v,t,d,i,s' || typeof value.i !== 'string' || typeof value.d !== 'string')
    return problem(400, 'malformed_body', 'an rct is exactly {v,t,d,i,s}');
  const prefix = value.i;
  const said = value.d;
  const stored = await store.kelLedger.bySaid(prefix, said);
  if (stored === undefined) return { kind: 'accepted' };
  const backers = decodeLedgerState(stored.keyState).backers;
  const bytes = new TextEncoder().encode(stored.event);
  await store.transaction((tx) => storePeerReceipts(tx, own, { prefix, said, bytes, backers }, att));
  return { kind: 'accepted' };
}
