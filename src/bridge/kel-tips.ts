/**
 * The bridge's durable KEL tips (SPEC §7.1 rev 4 "Rollback"): `tb_kel_tips(prefix, s, d, est_s,
 * est_d)` in the bridge's own store (`nonces.sqlite`, or the shared PostgreSQL database), with the
 * rules of SPEC §3.5: a row only moves ahead, and a process whose derived state is behind the row
 * (another replica, or an earlier run, accepted a longer KEL) refuses that root with 503
 * `registry_behind` until its source catches up. An in-memory nonce store has no such table, so
 * `--kel-source` with `--nonce-store memory` refuses to start (`kel_store_required`).
 */

import { KEL_TIP_AHEAD } from '../store/rows.ts';
import type { KelTip } from '../store/types.ts';

/** One identifier's highest accepted tip, as the witness's `kel_tips` (estS/estD absent on a row written before they were known). */
export type BridgeKelTip = KelTip;

/** What the KEL roots need from the bridge's store (the SQLite and PostgreSQL nonce stores implement it). */
export interface KelTipStore {
  kelTips(): Promise<BridgeKelTip[]>;
  /** Raise rows (never lower them), durably, before the states are used. */
  raiseKelTips(tips: readonly BridgeKelTip[]): Promise<void>;
}

export const SQLITE_KEL_TIPS_SCHEMA = `CREATE TABLE IF NOT EXISTS tb_kel_tips (prefix TEXT PRIMARY KEY, s INTEGER NOT NULL, d TEXT NOT NULL, est_s INTEGER, est_d TEXT) WITHOUT ROWID;`;
export const POSTGRES_KEL_TIPS_SCHEMA = `CREATE TABLE IF NOT EXISTS tb_kel_tips (prefix text PRIMARY KEY, s bigint NOT NULL, d text NOT NULL, est_s bigint, est_d text);`;

/**
 * The upsert condition of both drivers: `excluded` is ahead of the stored row — the witness's
 * `kel_tips` rule (src/store/rows.ts, the SQL twin of src/registry/tip-raise.ts's rowMovesTo) on
 * `tb_kel_tips`.
 */
export const RAISE_WHERE = KEL_TIP_AHEAD.replaceAll('kel_tips.', 'tb_kel_tips.');
