/** The cosign role's flags (SPEC §5, §9): its keys, known logs, log lists and sign-subtree. */
import { checkTable, int, list, negation, text, time, value, type OptionValues } from '../config/option-table.ts';
import { parseRateLimit, type RateLimitSpec } from '../server/rate-limit.ts';
import { DEFAULT_LIST_INTERVAL_SECONDS, DEFAULT_LIST_LIMITS, MAX_LIST_INTERVAL_SECONDS, MIN_LIST_INTERVAL_SECONDS } from './list-import.ts';
import type { ListLimits } from './list-merge.ts';

export const COSIGN_OPTIONS = checkTable({
  cosignKey: list(
    '--cosign-key <file>',
    'cosign key (Ed25519 or ML-DSA-44 PKCS#8 PEM, mode 0600, type from the OID; or an Ed25519 ssh-agent:/pkcs11: reference, docs/keys.md), required with role cosign; repeatable: one cosignature line per key, in order',
    'cosign',
  ),
  logs: text('--logs <file>', 'known logs of the cosign role (JSON or YAML), reloaded on SIGHUP and rename-into-place', 'cosign'),
  logsList: list(
    '--logs-list <src>',
    'logs/v0 list to import, a file or an https:// URL (adds new origins only, kept in the store; repeatable)',
    'cosign',
  ),
  logsListInterval: time(
    '--logs-list-interval <duration>',
    're-read every list this often (5m..7d; s, m, h or d)',
    'cosign',
    's',
    [MIN_LIST_INTERVAL_SECONDS, MAX_LIST_INTERVAL_SECONDS],
    { default: DEFAULT_LIST_INTERVAL_SECONDS },
  ),
  logsListMaxQpd: int('--logs-list-max-qpd <n>', 'imported qpd values are clamped to this', 'cosign', [1, 2 ** 31 - 1], {
    default: DEFAULT_LIST_LIMITS.maxQpd,
  }),
  logsListMaxNew: int('--logs-list-max-new <n>', 'new origins one list read may add (the rest wait)', 'cosign', [1], {
    default: DEFAULT_LIST_LIMITS.maxNew,
  }),
  logsListMaxOrigins: int('--logs-list-max-origins <n>', 'origins imported from lists in all', 'cosign', [0], {
    default: DEFAULT_LIST_LIMITS.maxOrigins,
  }),
  noSignSubtree: negation(
    '--no-sign-subtree',
    'do not serve POST /sign-subtree (served by default when an ML-DSA-44 cosign key is configured)',
    'cosign',
  ),
  signSubtreeRate: value(
    '--sign-subtree-rate <rps[:burst]>',
    'per-client-IP rate limit of POST /sign-subtree, besides --rate-limit; 0 = off',
    'cosign',
    parseRateLimit,
    { default: parseRateLimit('2:10'), defaultHelp: '2:10' },
  ),
});

export function cosignConfig(v: OptionValues<typeof COSIGN_OPTIONS>): {
  cosignKeyFiles: string[] | undefined;
  logsFile: string | undefined;
  logsLists: string[] | undefined;
  logsListIntervalSeconds: number;
  logsListLimits: ListLimits;
  signSubtree: boolean;
  signSubtreeRate: RateLimitSpec | null;
} {
  return {
    cosignKeyFiles: v.cosignKey,
    logsFile: v.logs,
    logsLists: v.logsList,
    logsListIntervalSeconds: v.logsListInterval,
    logsListLimits: { maxQpd: v.logsListMaxQpd, maxNew: v.logsListMaxNew, maxOrigins: v.logsListMaxOrigins },
    signSubtree: !v.noSignSubtree,
    signSubtreeRate: v.signSubtreeRate,
  };
}
