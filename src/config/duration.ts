/**
 * Durations of the command line (SPEC §4.1, last paragraph): an integer with a unit, `s`, `m`, `h`
 * or `d` (`90s`, `5m`, `1h`, `7d`); a bare integer means seconds. A flag whose name carries its unit
 * (`--request-timeout-ms`, `--kel-poll-seconds`) or that is typed `S` (`--default-ttl`) keeps bare
 * integers in that unit and takes the same suffixed durations too (`--request-timeout-ms 10s`). Pure.
 */

/** The unit a time flag's bare integers are in (and its value is given in). */
export type TimeUnit = 's' | 'ms';

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86400 };
const UNIT_MS: Readonly<Record<TimeUnit, number>> = { s: 1000, ms: 1 };

/** Parse a duration to whole units (seconds by default); throws an Error naming the text when it is not one. */
export function parseDuration(text: string, unit: TimeUnit = 's'): number {
  const m = /^(0|[1-9][0-9]*)([smhd]?)$/.exec(text.trim());
  const value = m === null ? NaN : m[2] === '' ? Number(m[1]) : (Number(m[1]) * UNIT_SECONDS[m[2]!]! * UNIT_MS.s) / UNIT_MS[unit];
  if (!Number.isSafeInteger(value))
    throw new Error(
      `not a duration: ${JSON.stringify(text)} (an integer with s, m, h or d; bare = ${unit === 's' ? 'seconds' : 'milliseconds'})`,
    );
  return value;
}

/** Parse a duration to whole seconds. */
export function parseDurationSeconds(text: string): number {
  return parseDuration(text, 's');
}

/** `value` (in `unit`) the way an operator writes it: `90s`, `5m`, `1h`, `7d`; a bare integer when no unit divides it. */
export function formatDuration(value: number, unit: TimeUnit = 's'): string {
  const ms = value * UNIT_MS[unit];
  if (ms === 0) return '0';
  for (const u of ['d', 'h', 'm', 's'] as const) if (ms % (UNIT_SECONDS[u]! * 1000) === 0) return `${ms / (UNIT_SECONDS[u]! * 1000)}${u}`;
  return String(value);
}

/**
 * A commander argument parser: a duration within [min, max] units (seconds by default). The range
 * in its message is written as durations (`outside 300s..604800s`) for a flag typed as a duration,
 * or as integers of the unit (`outside 1..3600 seconds`) for one whose name carries the unit.
 */
export function durationArg(min: number, max = Number.MAX_SAFE_INTEGER, unit: TimeUnit = 's', rangeIn: 'durations' | 'unit' = 'durations') {
  const range = rangeIn === 'durations' ? `${min}${unit}..${max}${unit}` : `${min}..${max} ${unit === 's' ? 'seconds' : 'milliseconds'}`;
  return (text: string): number => {
    const v = parseDuration(text, unit);
    if (v < min || v > max) throw new Error(`${text} is outside ${range}`);
    return v;
  };
}

/** For a flag whose name carries its unit (`--timeout-ms`, `--ttl <s>`): bare integers in `unit`, or durations. */
export function unitArg(unit: TimeUnit, min: number, max = Number.MAX_SAFE_INTEGER) {
  return durationArg(min, max, unit, 'unit');
}
