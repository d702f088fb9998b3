/**
 * Durations of the command line (SPEC §4.1, "Durations"): an integer with a unit — `s`, `m`, `h`
 * or `d` (`90s`, `5m`, `1h`, `7d`) — or a bare integer, meaning seconds. No fractions, signs,
 * spaces or compound forms (`1h30m`): one reading per text.
 */
import { EncodingError } from './errors.ts';

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** Seconds of a duration text; `invalid_duration` when it is not one (or exceeds 2^53 − 1 s). */
export function parseDuration(text: string): number {
  const m = /^(0|[1-9][0-9]{0,15})([smhd]?)$/.exec(text);
  if (m === null)
    throw new EncodingError('invalid_duration', `not a duration: ${JSON.stringify(text)} (an integer with s, m, h or d; bare = seconds)`);
  const seconds = Number(m[1]) * UNIT_SECONDS[m[2] === '' ? 's' : m[2]!]!;
  if (!Number.isSafeInteger(seconds)) throw new EncodingError('invalid_duration', `duration too long: ${text}`);
  return seconds;
}
