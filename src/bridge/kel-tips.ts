/**
 * The bridge's durable KEL tips (SPEC §7.1 rev 4 "Rollback"): `tb_kel_tips(prefix, s, d, est_s,
 * est_d)` in the bridge's own store (`nonces.sqlite`, or the shared PostgreSQL database), with the
 * rules of SPEC §3.5: a row only moves ahead, and a process whose derived state is behind the row
 * (another replica, or an earlier run, accepted a longer KEL) refuses that root with 503
 * `registry_behind` until its source catches up. An in-memory nonce store has no such table, so
 * `--kel-source` with `--nonce-store memory` refuses to start (`kel_store_required`).
 */

/** One identifier's highest accepted tip; `est_s`/`est_d` (its last establishment event) when known. */
export interface BridgeKelTip {
  prefix: string;
  s: number;
  d: string;
  est_s?: number | null;
  est_d?: string | null;
}

/** What the KEL roots need from the bridge's store (the SQLite and PostgreSQL nonce stores implement it). */
export interface KelTipStore {
  kelTips(): Promise<BridgeKelTip[]>;
  /** Raise rows (never lower them), durably, before the states are used. */
  raiseKelTips(tips: readonly BridgeKelTip[]): Promise<void>;
}

/**
 * A row is ahead of a state when its est_s is higher, or equal with a higher s (SPEC §3.5 rev 4);
 * without est_s on either side (a row written before it was known), by s alone, and a row at the
 * same s with another SAID is ahead too (a fork this process must not serve).
 */
export function tipAhead(row: BridgeKelTip | undefined, state: { s: number; d: string; est_s?: number | null } | null): boolean {
  if (row === undefined) return false;
  if (state === null) return true;
  if (row.est_s != null && state.est_s != null) {
    if (row.est_s !== state.est_s) return row.est_s > state.est_s;
    return row.s > state.s || (row.s === state.s && row.d !== state.d);
  }
  return row.s > state.s || (row.s === state.s && row.d !== state.d);
}

/** The SQL of both drivers: the row moves only ahead (same rule as tipAhead, by est_s when both have it). */
export const SQLITE_KEL_TIPS_SCHEMA = `CREATE TABLE IF NOT EXISTS tb_kel_tips (prefix TEXT PRIMARY KEY, s INTEGER NOT NULL, d TEXT NOT NULL, est_s INTEGER, est_d TEXT) WITHOUT ROWID;`;
export const POSTGRES_KEL_TIPS_SCHEMA = `CREATE TABLE IF NOT EXISTS tb_kel_tips (prefix text PRIMARY KEY, s bigint NOT NULL, d text NOT NULL, est_s bigint, est_d text);`;

/** Upsert that only raises: `excluded` is ahead of the stored row. */
export const RAISE_WHERE = `(excluded.est_s IS NOT NULL AND tb_kel_tips.est_s IS NOT NULL AND (excluded.est_s > tb_kel_tips.est_s OR (excluded.est_s = tb_kel_tips.est_s AND excluded.s > tb_kel_tips.s)))
  OR ((excluded.est_s IS NULL OR tb_kel_tips.est_s IS NULL) AND excluded.s > tb_kel_tips.s)`;

/** The state's last establishment event (est_s, est_d) when the verifier reports it (SPEC §3.5 rev 4), else nulls. */
export function establishment(state: object): { est_s: number | null; est_d: string | null } {
  const st = state as { est_s?: unknown; est_d?: unknown; estS?: unknown; estD?: unknown };
  const s = st.est_s ?? st.estS;
  const d = st.est_d ?? st.estD;
  return { est_s: typeof s === 'number' ? s : null, est_d: typeof d === 'string' ? d : null };
}
