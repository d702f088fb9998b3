/**
 * The key state the ledger keeps after each stored event (SPEC §3.6.6 "key-state snapshots"): the
 * verifier's WalkState plus the last establishment event (est_s, est_d), as JSON, so that no check
 * replays a KEL.
 */
import { KEY_CODES, decodeQb64 } from '../keri/qb64.ts';
import type { KelKey } from '../keri/types.ts';
import type { WalkState } from '../keri/verify.ts';

export interface LedgerState extends WalkState {
  estS: number;
  estD: string;
}

interface Stored extends Omit<LedgerState, 'keys'> {
  k: string[];
}

function key(text: string): KelKey {
  const m = decodeQb64(text, KEY_CODES);
  if (m === null) throw new Error(`stored key state: bad key ${text}`);
  return { curve: m.code === 'D' || m.code === 'B' ? 'ed25519' : 'p256', raw: m.raw, qb64: text };
}

export function encodeLedgerState(s: LedgerState): string {
  const { keys, ...rest } = s;
  const stored: Stored = { ...rest, k: keys.map((k) => k.qb64) };
  return JSON.stringify(stored);
}

export function decodeLedgerState(text: string): LedgerState {
  const { k, ...rest } = JSON.parse(text) as Stored;
  return { ...rest, keys: k.map(key) };
}

/** The ledger state after an event whose walk state is `after`; `establishment` events move (est_s, est_d). */
export function ledgerStateAfter(after: WalkState, prior: LedgerState | null, establishment: boolean): LedgerState {
  return establishment || prior === null ? { ...after, estS: after.s, estD: after.d } : { ...after, estS: prior.estS, estD: prior.estD };
}
