/**
 * `--kel-url URL` (SPEC §3.6.1): where controllers reach this witness, advertised in its OOBI as one
 * `/loc/scheme` reply per URL, and the stamp that dates the set. Pure.
 */
import { isLoopbackHost } from '../encoding/host.ts';
import { keriTimestamp } from '../keri/cesr-attachments.ts';
import { KelWitnessConfigError } from './errors.ts';

export const MAX_KEL_URLS = 4;

/**
 * The `--kel-url` values, checked: 1–4 distinct absolute URLs, `https://`, or `http://` with `--dev`
 * or on a loopback host; no credentials, query or fragment. Kept as written (a controller resolves
 * exactly that string). Undefined when none is given.
 */
export function parseKelUrls(values: readonly string[] | undefined, dev: boolean): string[] | undefined {
  if (values === undefined || values.length === 0) return undefined;
  if (values.length > MAX_KEL_URLS)
    throw new KelWitnessConfigError('invalid_kel_url', `--kel-url: at most ${MAX_KEL_URLS} URLs (${values.length} given)`);
  if (new Set(values).size !== values.length) throw new KelWitnessConfigError('invalid_kel_url', '--kel-url: a URL is given twice');
  for (const v of values) {
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      throw new KelWitnessConfigError('invalid_kel_url', `--kel-url ${JSON.stringify(v)}: not an absolute URL`);
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:')
      throw new KelWitnessConfigError('invalid_kel_url', `--kel-url ${JSON.stringify(v)}: the scheme must be https (or http)`);
    if (u.protocol === 'http:' && !dev && !isLoopbackHost(u.hostname))
      throw new KelWitnessConfigError(
        'invalid_kel_url',
        `--kel-url ${JSON.stringify(v)}: http:// only on a loopback host or with --dev; controllers need https://`,
      );
    if (u.username !== '' || u.password !== '' || u.search !== '' || u.hash !== '' || v.includes('?') || v.includes('#'))
      throw new KelWitnessConfigError('invalid_kel_url', `--kel-url ${JSON.stringify(v)}: no credentials, query or fragment`);
  }
  return [...values];
}

/** keripy's `scheme` of a `/loc/scheme` reply: `http` or `https`. */
export function urlScheme(url: string): string {
  return new URL(url).protocol.slice(0, -1);
}

const STAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{6})\+00:00$/;

/**
 * The stamp of a changed URL set: now (keripy's form, microseconds from the ms clock), or one
 * microsecond past the stored stamp when the clock is not past it, so the stamp never decreases
 * (a clock stepped back, or two changes within a millisecond).
 */
export function nextKelStamp(previous: string | undefined, nowMs: number): string {
  const now = keriTimestamp(nowMs);
  const m = previous === undefined ? null : STAMP.exec(previous);
  if (m === null || now > previous!) return now;
  let seconds = Date.parse(`${m[1]!}Z`);
  let micros = Number(m[2]) + 1;
  if (micros === 1_000_000) {
    seconds += 1000;
    micros = 0;
  }
  return `${new Date(seconds).toISOString().slice(0, 19)}.${String(micros).padStart(6, '0')}+00:00`;
}

/** Before any set is stored the OOBI's replies are dated at the epoch (and no `/loc/scheme` reply is served). */
export const EPOCH_STAMP = '1970-01-01T00:00:00.000000+00:00';
