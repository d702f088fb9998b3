/**
 * What the KERI witness role answers a request with (SPEC §3.6.3): a receipt, an acceptance, an
 * escrow notice, a duplicity proof or a problem, and the metrics label of each.
 */
import type { KelDuplicityProof } from './duplicity.ts';
import type { KelWitnessProblemCode } from './errors.ts';

export type KelRoute = 'receipts' | 'root';

export type KelOutcome =
  | { kind: 'receipt'; body: string }
  | { kind: 'accepted' }
  | { kind: 'escrowed'; prefix: string; sn: number; said: string; expiresAt: string }
  | { kind: 'duplicity'; proof: KelDuplicityProof }
  | {
      kind: 'problem';
      status: number;
      code: KelWitnessProblemCode;
      detail: string;
      reason?: string;
      seq?: number | null;
      headers?: Record<string, string>;
    };

export const problem = (
  status: number,
  code: KelWitnessProblemCode,
  detail: string,
  extra: Partial<KelOutcome & { kind: 'problem' }> = {},
): KelOutcome => ({
  kind: 'problem',
  status,
  code,
  detail,
  ...extra,
});

/** A 422 `kel_event_invalid` with the §3.5 verifier's reason and sequence number. */
export const invalid = (reason: string, seq: number | null, detail: string): KelOutcome =>
  problem(422, 'kel_event_invalid', detail, { reason, seq });

/** The `outcome` label of the witnessed-events metric. */
export function outcomeLabel(o: KelOutcome): string {
  switch (o.kind) {
    case 'receipt':
      return 'witnessed';
    case 'accepted':
      return 'stored';
    case 'escrowed':
      return 'escrowed';
    case 'duplicity':
      return 'duplicity';
    default:
      return o.code === 'kel_not_witness' ? 'not_witness' : o.reason === 'stale' ? 'stale' : 'invalid';
  }
}
