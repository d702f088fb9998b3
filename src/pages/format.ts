/** Human formats for the pages: durations, times (UTC, RFC 3339), counts. Pure. */

/** `42 s`, `5 min 3 s`, `3 h 12 min`, `2 d 4 h`; negative durations read `in …`. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '—';
  if (seconds < 0) return `in ${formatDuration(-seconds)}`;
  const s = Math.floor(seconds);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 === 0 ? `${m} min` : `${m} min ${s % 60} s`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
  const d = Math.floor(h / 24);
  return h % 24 === 0 ? `${d} d` : `${d} d ${h % 24} h`;
}

/** Unix seconds as RFC 3339 UTC (`2026-01-01T00:00:00Z`); fractions are dropped. */
export function formatUtc(unixSeconds: number): string {
  if (!Number.isFinite(unixSeconds)) return '—';
  return new Date(Math.floor(unixSeconds) * 1000).toISOString().replace('.000Z', 'Z');
}

/** `1 234 567` style grouping (narrow no-break spaces), integers only. */
export function formatCount(n: number): string {
  if (!Number.isSafeInteger(n)) return String(n);
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, '\u202f');
}

/** `n thing` / `n things`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}
