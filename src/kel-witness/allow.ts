/**
 * Who may be witnessed (SPEC §3.6.7): `--kel-allow PREFIX|delegates-of:PREFIX|any`, repeatable.
 * Role `kel` without it refuses to start (`kel_allow_required`); `--dev` defaults to `any`.
 */
import { decodeQb64, IDENTIFIER_CODES } from '../keri/qb64.ts';
import { KelWitnessConfigError as KelAllowError } from './errors.ts';

export interface KelAllowList {
  any: boolean;
  prefixes: ReadonlySet<string>;
  delegators: ReadonlySet<string>;
}

export function parseKelAllow(values: readonly string[] | undefined, dev: boolean): KelAllowList {
  const list = values ?? [];
  if (list.length === 0) {
    if (dev) return { any: true, prefixes: new Set(), delegators: new Set() };
    throw new KelAllowError(
      'kel_allow_required',
      'role kel needs --kel-allow PREFIX|delegates-of:PREFIX|any (who this node witnesses; `any` for a public witness)',
    );
  }
  if (list.includes('any')) {
    if (list.length !== 1) throw new KelAllowError('invalid_kel_allow', '--kel-allow any stands alone');
    return { any: true, prefixes: new Set(), delegators: new Set() };
  }
  const prefixes = new Set<string>();
  const delegators = new Set<string>();
  for (const v of list) {
    const delegated = v.startsWith('delegates-of:');
    const p = delegated ? v.slice('delegates-of:'.length) : v;
    if (decodeQb64(p, IDENTIFIER_CODES) === null)
      throw new KelAllowError('invalid_kel_allow', `--kel-allow ${JSON.stringify(v)}: not a qb64 prefix, delegates-of:PREFIX or any`);
    (delegated ? delegators : prefixes).add(p);
  }
  return { any: false, prefixes, delegators };
}

/** Check 4: `delegator` is the `di` of the KEL's `dip` (null for a KEL begun by `icp` or not known). */
export function admits(allow: KelAllowList, prefix: string, delegator: string | null): boolean {
  return allow.any || allow.prefixes.has(prefix) || (delegator !== null && allow.delegators.has(delegator));
}
