/** The flags of a witnessed own log (SPEC §4.1): the peer witnesses and how often they are fed. */
import { checkTable, text, time, type OptionValues } from '../config/option-table.ts';

export const LOG_WITNESS_OPTIONS = checkTable({
  logWitnesses: text(
    '--log-witnesses <file>',
    "peer witnesses that cosign this node's own log, and their quorum (JSON or YAML; docs/protocol.md §4.1)",
    'logWitnesses',
  ),
  logWitnessInterval: time(
    '--log-witness-interval <duration>',
    'how often the newest checkpoint goes to the log witnesses (1s..1h)',
    'logWitnesses',
    's',
    [1, 3600],
    { default: 1 },
  ),
  logWitnessAlertLag: time(
    '--log-witness-alert-lag <duration>',
    'a log witness further behind than this is a /health warning (status stays ok)',
    'logWitnesses',
    's',
    [1, 365 * 86_400],
    { default: 600 },
  ),
});

/** The log witnesses, when `--log-witnesses` is given (the timings in ms). */
export function logWitnessConfig(
  v: OptionValues<typeof LOG_WITNESS_OPTIONS>,
): { logWitnessesFile: string; logWitnessIntervalMs: number; logWitnessAlertLagMs: number } | Record<string, never> {
  if (v.logWitnesses === undefined) return {};
  return {
    logWitnessesFile: v.logWitnesses,
    logWitnessIntervalMs: v.logWitnessInterval * 1000,
    logWitnessAlertLagMs: v.logWitnessAlertLag * 1000,
  };
}
