/**
 * Timestamps. Two forms:
 *  - the anchor form `YYYY-MM-DDTHH:MM:SSZ` exactly (whole seconds, UTC) ↔ unix seconds;
 *  - general RFC 3339 (offsets, 'T'/'t', 'Z'/'z', up to 9 fraction digits) ↔ {seconds, nanos},
 *    re-printed in UTC with 0, 3, 6 or 9 fraction digits (nanosecond-faithful, as chrono does).
 * Calendar arithmetic is done here (days-from-civil), not with Date, so years 0000–9999 are exact.
 */
import { EncodingError } from './errors.ts';

function fail(message: string): never {
  throw new EncodingError('invalid_timestamp', message);
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(m) ? 30 : 31;
}

/** Days since 1970-01-01 of a proleptic Gregorian date. */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(z0: number): [number, number, number] {
  const z = z0 + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

const pad = (n: number, w: number): string => String(n).padStart(w, '0');

function fieldsToSeconds(y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  if (mo < 1 || mo > 12) fail('month out of range');
  if (d < 1 || d > daysInMonth(y, mo)) fail('day out of range');
  if (h > 23 || mi > 59 || s > 59) fail('time of day out of range');
  return daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
}

const ANCHOR_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/;

/** `YYYY-MM-DDTHH:MM:SSZ` → unix seconds. */
export function parseTimestamp(text: string): number {
  const m = ANCHOR_RE.exec(text);
  if (m === null) fail('timestamp must be YYYY-MM-DDTHH:MM:SSZ (whole seconds, UTC)');
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  return fieldsToSeconds(y, mo, d, h, mi, s);
}

/** Unix seconds → `YYYY-MM-DDTHH:MM:SSZ`. */
export function formatTimestamp(seconds: number): string {
  if (!Number.isSafeInteger(seconds)) fail('seconds must be an integer');
  const days = Math.floor(seconds / 86400);
  const rem = seconds - days * 86400;
  const [y, mo, d] = civilFromDays(days);
  if (y < 0 || y > 9999) fail('year out of range');
  return `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(Math.floor(rem / 3600), 2)}:${pad(Math.floor((rem % 3600) / 60), 2)}:${pad(rem % 60, 2)}Z`;
}

export interface Instant {
  seconds: number;
  nanos: number;
}

const RFC3339_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** General RFC 3339 date-time → instant (UTC seconds + nanoseconds). */
export function parseRfc3339(text: string): Instant {
  const m = RFC3339_RE.exec(text);
  if (m === null) fail('not an RFC 3339 date-time');
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  let seconds = fieldsToSeconds(y, mo, d, h, mi, s);
  const nanos = m[7] === undefined ? 0 : Number(m[7].padEnd(9, '0'));
  if (m[8] === undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) fail('offset out of range');
    const off = (oh * 3600 + om * 60) * (m[9] === '-' ? -1 : 1);
    seconds -= off;
  }
  return { seconds, nanos };
}

/** Instant → RFC 3339 UTC with 0, 3, 6 or 9 fraction digits (the fewest that are exact). */
export function formatRfc3339(t: Instant): string {
  const base = formatTimestamp(t.seconds).slice(0, -1);
  if (t.nanos === 0) return base + 'Z';
  if (!Number.isInteger(t.nanos) || t.nanos < 0 || t.nanos > 999_999_999) fail('nanos out of range');
  let frac = pad(t.nanos, 9);
  if (frac.endsWith('000000')) frac = frac.slice(0, 3);
  else if (frac.endsWith('000')) frac = frac.slice(0, 6);
  return `${base}.${frac}Z`;
}
