/** The anchor role's flags (SPEC §3, §9): the party registry and the per-party quota defaults. */
import { DEFAULT_QUOTA, type QuotaDefaults } from '../anchor/quota-window.ts';
import { checkTable, flag, int, text, type OptionValues } from '../config/option-table.ts';

export const ANCHORING_OPTIONS = checkTable({
  registry: text('--registry <file>', 'party registry (JSON or YAML), reloaded on SIGHUP and rename-into-place', 'anchor'),
  allowUnderivedSeeds: flag(
    '--allow-underived-seeds',
    'let whoever anchors a seed first own it, even when it does not derive from the party',
    'anchor',
  ),
  partyAnchorsPerMinute: int('--party-anchors-per-minute <n>', 'default per-party quota of co-signed anchors per minute', 'anchor', [0], {
    default: DEFAULT_QUOTA.anchorsPerMinute,
  }),
  partyNewSeedsPerDay: int('--party-new-seeds-per-day <n>', 'default per-party quota of new seeds per day', 'anchor', [0], {
    default: DEFAULT_QUOTA.newSeedsPerDay,
  }),
});

export function anchoringConfig(v: OptionValues<typeof ANCHORING_OPTIONS>): {
  registryFile: string | undefined;
  allowUnderivedSeeds: boolean;
  quota: QuotaDefaults;
} {
  return {
    registryFile: v.registry,
    allowUnderivedSeeds: v.allowUnderivedSeeds,
    quota: { anchorsPerMinute: v.partyAnchorsPerMinute, newSeedsPerDay: v.partyNewSeedsPerDay },
  };
}
