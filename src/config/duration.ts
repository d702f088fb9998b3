/**
 * Durations of the command line (SPEC §4.1, last paragraph): an integer with a unit, `s`, `m`, `h`
 * or `d` (`90s`, `5m`, `1h`, `7d`); a bare integer means seconds. Pure.
 */

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86400 };

/** Parse a duration to whole seconds; throws an Error naming the text when it is not one. */
export function parseDurationSeconds(text: string): number {
  const m = /^(0|[1-9][0-9]*)([smhd]?)$/.exec(text.trim());
  const seconds = m === null ? NaN : Number(m[1]) * UNIT_SECONDS[m[2] === '' ? 's' : m[2]!]!;
  if (!Number.isSafeInteger(seconds))
    throw new Error(`not a duration: ${JSON.stringify(text)} (an integer with s, m, h or d; bare = seconds)`);
  return seconds;
}

/** A commander argument parser: a duration within [min, max] seconds. */
export function durationArg(minSeconds: number, maxSeconds = Number.MAX_SAFE_INTEGER) {
  return (text: string): number => {
    const s = parseDurationSeconds(text);
    if (s < minSeconds || s > maxSeconds) throw new Error(`${text} is outside ${minSeconds}s..${maxSeconds}s`);
    return s;
  };
}
