/**
 * `token-bridge serve`'s flags for roots from KELs (SPEC §7.1) and the witness-finalized freshness
 * gate (SPEC §7.2): one row each (src/config/option-table.ts). The KEL limits are the witness's
 * rows (src/registry/options.ts); only `--kel-source` reads differently here.
 */
import { checkTable, flag, int, list, text, time, value, type OptionValues } from '../config/option-table.ts';
import { parseRateLimit } from '../server/rate-limit.ts';
import { KEL_SOURCE_OPTIONS } from '../registry/options.ts';
import type { GateConfig } from './gate-part.ts';
import type { KelRootsConfig } from './kel-part.ts';

const KEL_LIMIT_OPTIONS = {
  kelPollSeconds: KEL_SOURCE_OPTIONS.kelPollSeconds,
  kelMaxEvents: KEL_SOURCE_OPTIONS.kelMaxEvents,
  kelMaxBytes: KEL_SOURCE_OPTIONS.kelMaxBytes,
  kelMaxIdentifiers: KEL_SOURCE_OPTIONS.kelMaxIdentifiers,
  kelMaxTotalBytes: KEL_SOURCE_OPTIONS.kelMaxTotalBytes,
  kelMaxHeap: KEL_SOURCE_OPTIONS.kelMaxHeap,
};

/** `--anchor-floor-rate`: RPS[:BURST], never off. */
function floorRate(t: string): { rps: number; burst: number } {
  const r = parseRateLimit(t);
  if (r === null) throw new Error('must be RPS[:BURST] with RPS > 0 (the route is always rate limited)');
  return r;
}

export const BRIDGE_GATE_OPTIONS = checkTable({
  kelSource: list(
    '--kel-source <dir:PATH|git:PATH>',
    'trusted roots without "keys" take their current keys from this KEL source (docs/protocol.md §7.1; needs a durable nonce store)',
    'kel',
  ),
  ...KEL_LIMIT_OPTIONS,
  requireFinalizedAnchor: flag(
    '--require-finalized-anchor',
    'mint only with a fresh k-of-n finalized anchor committing to the presented chain (docs/protocol.md §7.2)',
    'tokens',
  ),
  anchorWitnessSet: list(
    '--anchor-witness-set <file>',
    'the pinned anchor-witness/witness-set/v1 (repeatable: both sets during a witness-key rotation)',
    'tokens',
  ),
  anchorFreshness: time('--anchor-freshness <duration>', 'oldest finalized anchor accepted (1m..24h)', 'tokens', 's', [60, 86_400], {
    default: 600,
  }),
  anchorScope: text('--anchor-scope <scope>', 'the seed scope of the chain-state anchors (default auths-bridge/chain-state/v1)', 'tokens'),
  anchorFloorMaxSeeds: int(
    '--anchor-floor-max-seeds <n>',
    'most seeds with an anchor floor (beyond: 503 anchor_floor_full; default 1000000)',
    'tokens',
    [1],
  ),
  anchorFloorRate: value('--anchor-floor-rate <rps[:burst]>', 'per-client-IP limit on POST /anchor-floor', 'tokens', floorRate, {
    default: { rps: 1, burst: 10 },
    defaultHelp: '1:10',
  }),
});

/** The KEL-roots and gate settings of the bridge's configuration. */
export function bridgeGateConfig(v: OptionValues<typeof BRIDGE_GATE_OPTIONS>): KelRootsConfig & GateConfig {
  const kel = (v.kelSource ?? []).length > 0;
  return {
    ...(kel
      ? {
          kelSources: v.kelSource,
          kelPollSeconds: v.kelPollSeconds,
          kelLimits: { maxEvents: v.kelMaxEvents, maxBytes: v.kelMaxBytes },
          kelAggregate: { maxIdentifiers: v.kelMaxIdentifiers, maxTotalBytes: v.kelMaxTotalBytes, maxHeapMb: v.kelMaxHeap },
        }
      : {}),
    ...(v.requireFinalizedAnchor ? { requireFinalizedAnchor: true } : {}),
    ...(v.anchorWitnessSet === undefined ? {} : { anchorWitnessSetFiles: v.anchorWitnessSet }),
    anchorFreshnessSeconds: v.anchorFreshness,
    ...(v.anchorScope === undefined ? {} : { anchorScope: v.anchorScope }),
    ...(v.anchorFloorMaxSeeds === undefined ? {} : { anchorFloorMaxSeeds: v.anchorFloorMaxSeeds }),
    anchorFloorRate: v.anchorFloorRate,
  };
}
