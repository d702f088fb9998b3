/** The flags of parties' keys from key event logs (SPEC §3.5): `--kel-source` and its limits. */
import { checkTable, int, list, time, type OptionValues } from '../config/option-table.ts';
import { DEFAULT_KEL_LIMITS, type KelLimits } from '../keri/index.ts';
import { DEFAULT_KEL_AGGREGATE, type KelAggregateLimits } from './kel-evaluator.ts';

export const KEL_SOURCE_OPTIONS = checkTable({
  kelSource: list(
    '--kel-source <dir:PATH|git:PATH>',
    "parties' keys from key event logs (docs/protocol.md §3.5); needs --registry; repeatable: the copy that supersedes the others wins",
    'kel',
  ),
  kelPollSeconds: time(
    '--kel-poll-seconds <seconds>',
    'how often the KEL source is re-read (seconds, or 5m, 1h, …; 0 = only on SIGHUP and, for dir:, renames)',
    'kel',
    's',
    [0],
    { default: 30 },
  ),
  kelMaxEvents: int('--kel-max-events <n>', 'most events one KEL may have', 'kel', [1], { default: DEFAULT_KEL_LIMITS.maxEvents }),
  kelMaxBytes: int('--kel-max-bytes <n>', 'most bytes one KEL may have (the file, or the sum of its blobs)', 'kel', [1], {
    default: DEFAULT_KEL_LIMITS.maxBytes,
  }),
  kelMaxIdentifiers: int(
    '--kel-max-identifiers <n>',
    'most identifiers one KEL source reload reads (the parties and their delegators first); the rest are refused as oversize',
    'kel',
    [1],
    { default: DEFAULT_KEL_AGGREGATE.maxIdentifiers },
  ),
  kelMaxTotalBytes: int('--kel-max-total-bytes <n>', 'most bytes one KEL source reload reads in all', 'kel', [1], {
    default: DEFAULT_KEL_AGGREGATE.maxTotalBytes,
  }),
  kelMaxHeap: int(
    '--kel-max-heap <mib>',
    'heap limit of the KEL worker thread, in MiB (an identifier that exhausts it is refused as oversize; the worker restarts)',
    'kel',
    [16, 65536],
    { default: DEFAULT_KEL_AGGREGATE.maxHeapMb },
  ),
});

/** The KEL source, when `--kel-source` is given. */
export function kelSourceConfig(
  v: OptionValues<typeof KEL_SOURCE_OPTIONS>,
): { source: string[]; pollSeconds: number; limits: KelLimits; aggregate: KelAggregateLimits } | undefined {
  if (v.kelSource === undefined || v.kelSource.length === 0) return undefined;
  return {
    source: v.kelSource,
    pollSeconds: v.kelPollSeconds,
    limits: { maxEvents: v.kelMaxEvents, maxBytes: v.kelMaxBytes },
    aggregate: { maxIdentifiers: v.kelMaxIdentifiers, maxTotalBytes: v.kelMaxTotalBytes, maxHeapMb: v.kelMaxHeap },
  };
}
