/**
 * keripy's key-state notice (SPEC §3.6.5 GET `/ksn`): the key-state record of a KEL as keripy's
 * `Kever.state()` writes it, members in keripy's order, and the `rpy` with route `/ksn/<witness>`
 * that carries it. Pure: the caller gives the accepted events (the first-seen chain, sn order),
 * the latest event's first-seen ordinal `f` and its first-seen time `dt`.
 *
 * The builder does not verify: it reads the members §3.5 verification already checked (or, for the
 * upstream fixture, events given as is).
 */
import { hexText } from '../keri/event.ts';
import { reply } from './replies.ts';

/** keripy's key-state record (`KeyStateRecord`), in keripy's member order. */
export interface KeyStateRecord {
  vn: [1, 0];
  i: string;
  s: string;
  p: string;
  d: string;
  f: string;
  dt: string;
  et: string;
  kt: string | unknown[];
  k: string[];
  nt: string | unknown[];
  n: string[];
  bt: string;
  b: string[];
  c: string[];
  ee: { s: string; d: string; br: string[]; ba: string[] };
  di: string;
}

export class KeyStateError extends Error {}

type EventObject = Readonly<Record<string, unknown>>;

function strings(v: unknown, name: string): string[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new KeyStateError(`${name} is not a list of strings`);
  return [...v];
}

function text(v: unknown, name: string): string {
  if (typeof v !== 'string') throw new KeyStateError(`${name} is not a string`);
  return v;
}

/**
 * A threshold as keripy's `Tholder.sith` writes it: a weighted list as is; a number (keripy's
 * integer `kt`/`nt`, SPEC §3.5) as lower-case hex text; hex text as is.
 */
function sith(v: unknown, name: string): string | unknown[] {
  if (Array.isArray(v)) return v as unknown[];
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return hexText(v);
  return text(v, name);
}

/** `bt` as keripy's `toader` writes it: hex text (an integer `bt` is re-written, SPEC §3.5). */
function toad(v: unknown): string {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return hexText(v);
  return text(v, 'bt');
}

/**
 * The key state after `events` (sn 0 … tip, the accepted chain). `fn` is the tip's first-seen
 * ordinal, `dt` its first-seen time (kept as given).
 */
export function keyStateRecord(events: readonly EventObject[], o: { fn: number; dt: string }): KeyStateRecord {
  const first = events[0];
  if (first === undefined) throw new KeyStateError('a key state needs at least the inception');
  if (first.t !== 'icp' && first.t !== 'dip') throw new KeyStateError('the first event is not an inception');
  let k: string[] = [];
  let kt: string | unknown[] = '0';
  let n: string[] = [];
  let nt: string | unknown[] = '0';
  let b: string[] = [];
  let bt = '0';
  let c: string[] = [];
  let di = '';
  let ee = { s: '0', d: '', br: [] as string[], ba: [] as string[] };
  for (const e of events) {
    switch (e.t) {
      case 'icp':
      case 'dip':
        k = strings(e.k, 'k');
        kt = sith(e.kt, 'kt');
        n = strings(e.n, 'n');
        nt = sith(e.nt, 'nt');
        b = strings(e.b, 'b');
        bt = toad(e.bt);
        c = strings(e.c, 'c');
        di = e.t === 'dip' ? text(e.di, 'di') : '';
        ee = { s: text(e.s, 's'), d: text(e.d, 'd'), br: [], ba: [] };
        break;
      case 'rot':
      case 'drt': {
        const br = strings(e.br, 'br');
        const ba = strings(e.ba, 'ba');
        k = strings(e.k, 'k');
        kt = sith(e.kt, 'kt');
        n = strings(e.n, 'n');
        nt = sith(e.nt, 'nt');
        b = [...b.filter((w) => !br.includes(w)), ...ba];
        bt = toad(e.bt);
        ee = { s: text(e.s, 's'), d: text(e.d, 'd'), br, ba };
        break;
      }
      case 'ixn':
        break;
      default:
        throw new KeyStateError(`not a KEL event type: ${String(e.t)}`);
    }
  }
  const last = events[events.length - 1]!;
  return {
    vn: [1, 0],
    i: text(last.i, 'i'),
    s: text(last.s, 's'),
    p: last.p === undefined ? '' : text(last.p, 'p'),
    d: text(last.d, 'd'),
    f: hexText(o.fn),
    dt: o.dt,
    et: text(last.t, 't'),
    kt,
    k,
    nt,
    n,
    bt,
    b,
    c,
    ee,
    di,
  };
}

/** The `rpy` a witness answers GET /ksn with: route `/ksn/<witness>`, `dt` = the record's `dt`. */
export function ksnReply(witness: string, record: KeyStateRecord): string {
  return reply(`/ksn/${witness}`, record as unknown as Record<string, unknown>, record.dt);
}
