/**
 * What a valid conflicting event is (SPEC §3.6.4 "Conflicts", cases 3–6), behind a narrow
 * interface: the §3.5 recovery classifier of src/keri (being extended in parallel) can replace
 * this implementation without touching the witness flow.
 *
 * Cases 1 (superseded) and 2 (invalid at sn − 1) are decided before a classifier is asked.
 */

export type ConflictKind = 'recovery' | 'recovery_unsupported' | 'stale' | 'duplicity';

export interface ConflictInput {
  /** How the KEL begins. */
  inception: 'icp' | 'dip';
  /** The accepted event's type at sn (X) and the newcomer's (Y). */
  x: string;
  y: string;
  sn: number;
  /** sn of the last accepted establishment event (est_s). */
  lastEstablishmentSn: number;
}

export interface ConflictClassifier {
  classify(input: ConflictInput): ConflictKind;
}

/** SPEC §3.6.4 cases 3–6, in order. */
export const simpleConflictClassifier: ConflictClassifier = {
  classify({ inception, x, y, sn, lastEstablishmentSn }) {
    if (inception === 'icp' && y === 'rot' && sn > lastEstablishmentSn) return 'recovery';
    if (inception === 'dip' && (x === 'drt' || y === 'drt')) return 'recovery_unsupported';
    if ((x === 'ixn' && y === 'rot') || (x === 'rot' && y === 'ixn')) return 'stale';
    return 'duplicity';
  },
};
