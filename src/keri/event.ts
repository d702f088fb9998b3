/**
 * KERI 1.0 JSON key events (SPEC §3.5 "Events"): the exact member set of each event type, the
 * value rules, the canonical bytes B(e) that are signed, the `v` version string and the SAID.
 *
 * An event arrives as a parsed JSON value in any member order (upstream stores pretty-printed
 * JSON, its conformance fixtures have sorted keys). parseEvent checks it and re-serializes it
 * canonically: compact JSON, members in the order of MEMBERS, seal members in their shape's
 * order. Every leaf is a string of printable ASCII without `"` or `\`, so JSON.stringify writes
 * each value verbatim; `kt`, `nt` and `bt` may also be JSON integers (keripy's form, rev 4) and
 * `kt`/`nt` weighted lists, kept in the form received (an integer stays an integer in B(e)).
 */
import { KelError } from './errors.ts';
import { IDENTIFIER_CODES, KEY_CODES, decodeQb64, requireQb64 } from './qb64.ts';
import { SAID_PLACEHOLDER, blake3Qb64 } from './said.ts';
import type { KelKey } from './types.ts';
import { isJsonObject } from '../encoding/json.ts';

export type EventType = 'icp' | 'rot' | 'ixn' | 'dip' | 'drt';
export type EstablishmentType = Exclude<EventType, 'ixn'>;

/** The members of each event type, in canonical order. A `drt` may also end with `di` (upstream form). */
export const MEMBERS: Readonly<Record<EventType, readonly string[]>> = {
  icp: ['v', 't', 'd', 'i', 's', 'kt', 'k', 'nt', 'n', 'bt', 'b', 'c', 'a'],
  rot: ['v', 't', 'd', 'i', 's', 'p', 'kt', 'k', 'nt', 'n', 'bt', 'br', 'ba', 'a'],
  ixn: ['v', 't', 'd', 'i', 's', 'p', 'a'],
  dip: ['v', 't', 'd', 'i', 's', 'kt', 'k', 'nt', 'n', 'bt', 'b', 'c', 'a', 'di'],
  drt: ['v', 't', 'd', 'i', 's', 'p', 'kt', 'k', 'nt', 'n', 'bt', 'br', 'ba', 'a'],
};

/** Seal shapes, in their serialization order: digest, source (s,d), event (i,s,d), last-establishment-with-type, and root/identifier. */
export const SEAL_SHAPES: readonly (readonly string[])[] = [['d'], ['s', 'd'], ['i', 's', 'd'], ['i', 's', 'p', 't', 'd'], ['i']];

export const CONFIG_TRAITS: readonly string[] = ['EO', 'DND', 'RB', 'NRB'];

export const LIMITS = Object.freeze({ listEntries: 32, seals: 256, eventBytes: 64 * 1024 });

/** A seal in `a`: its members in canonical order. */
export type Seal = Readonly<Record<string, string>>;

/** The largest JSON integer `kt`, `nt` and `bt` may be (SPEC §3.5 rev 4: keripy's `intive` form). */
export const MAX_INTEGER_THRESHOLD = 2 ** 32 - 1;

export interface KelEvent {
  t: EventType;
  v: string;
  d: string;
  i: string;
  /** `s` as text and as a number (Infinity beyond 2^53). */
  s: string;
  sn: number;
  /** Prior event's SAID (not on icp/dip). */
  p: string | null;
  /**
   * Establishment members (empty / zero on ixn). `kt` and `nt` are the JSON values as received
   * (hex text, an integer, a weighted list, or anything else: rule 4 reads them, src/keri/tholder.ts);
   * `bt` is the number its hex text or integer denotes.
   */
  kt: unknown;
  k: string[];
  keys: KelKey[];
  nt: unknown;
  n: string[];
  bt: number;
  /** icp/dip `b`; rot/drt `br`, `ba`. */
  b: string[];
  br: string[];
  ba: string[];
  c: string[];
  a: Seal[];
  /** dip, and the upstream form of drt. */
  di: string | null;
  /** B(e): the canonical bytes, what is signed. */
  bytes: Uint8Array;
  /** The `v` B(e) must carry. */
  expectedVersion: string;
  /** The members in canonical order (B(e) is their compact JSON); computeSaid hashes them. */
  canonical: Readonly<Record<string, unknown>>;
}

const LEAF = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const HEX_NUMBER = /^(?:0|[1-9a-f][0-9a-f]*)$/;
const utf8 = new TextEncoder();

function fail(message: string, seq: number | null): never {
  throw new KelError('malformed', message, seq);
}

function leaf(v: unknown, where: string, seq: number | null): string {
  if (typeof v !== 'string' || !LEAF.test(v)) fail(`${where} must be a string of printable ASCII without '"' or '\\'`, seq);
  return v;
}

/** The value of a canonical lowercase hex number (`0|[1-9a-f][0-9a-f]*`); Infinity beyond 2^53 − 1. */
export function hexNumber(text: string): number {
  if (!HEX_NUMBER.test(text)) return NaN;
  if (text.length > 13) return Infinity;
  const v = Number.parseInt(text, 16);
  return v > Number.MAX_SAFE_INTEGER ? Infinity : v;
}

/** Lowercase hex without leading zeros: the form of `s`, `kt`, `nt`, `bt`. */
export function hexText(n: number): string {
  return n.toString(16);
}

function hexMember(v: unknown, where: string, seq: number | null): { text: string; value: number } {
  const text = leaf(v, where, seq);
  const value = hexNumber(text);
  if (Number.isNaN(value)) fail(`${where} must be lowercase hex without leading zeros`, seq);
  return { text, value };
}

/**
 * `kt` or `nt`: kept as received for B(e), whatever its form; a value of the wrong form is rule 4's
 * `threshold_invalid`, never `malformed` (SPEC §3.5 rev 4).
 */
function threshold(v: unknown): unknown {
  return v;
}

/** `bt`: hex text or a JSON integer `0|[1-9][0-9]*` ≤ 2^32 − 1 (keripy's form), kept as received. */
function backerThreshold(v: unknown, seq: number | null): { json: string | number; value: number } {
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0 || v > MAX_INTEGER_THRESHOLD)
      fail(`bt ${v} is not an integer from 0 to ${MAX_INTEGER_THRESHOLD}`, seq);
    return { json: v, value: v };
  }
  const h = hexMember(v, 'bt', seq);
  return { json: h.text, value: h.value };
}

function stringList(v: unknown, where: string, seq: number | null, max: number): string[] {
  if (!Array.isArray(v)) fail(`${where} must be an array of strings`, seq);
  if (v.length > max) fail(`${where} has ${v.length} entries (at most ${max})`, seq);
  return v.map((x, i) => leaf(x, `${where}[${i}]`, seq));
}

function digest(v: string, where: string, seq: number | null): string {
  requireQb64(v, ['E'], where, seq);
  return v;
}

function identifier(v: string, where: string, seq: number | null): string {
  requireQb64(v, IDENTIFIER_CODES, where, seq);
  return v;
}

function seal(v: unknown, where: string, seq: number | null): Seal {
  if (!isJsonObject(v)) fail(`${where} must be a seal object`, seq);
  const names = Object.keys(v);
  const shape = SEAL_SHAPES.find((s) => s.length === names.length && s.every((m) => Object.hasOwn(v, m)));
  if (shape === undefined) fail(`${where} is not one of the seal shapes {d}, {s,d}, {i,s,d}, {i,s,p,t,d}, {i}`, seq);
  const out: Record<string, string> = {};
  for (const m of shape) out[m] = leaf(v[m], `${where}.${m}`, seq);
  if (out.s !== undefined && Number.isNaN(hexNumber(out.s))) fail(`${where}.s must be lowercase hex without leading zeros`, seq);
  if (out.i !== undefined) identifier(out.i, `${where}.i`, seq);
  return out;
}

function decodeKey(text: string, where: string, seq: number | null): KelKey {
  const m = requireQb64(text, KEY_CODES, where, seq);
  return { curve: m.code === 'D' || m.code === 'B' ? 'ed25519' : 'p256', raw: m.raw, qb64: text };
}

/** The `v` of an event whose canonical serialization is `size` bytes long. */
export function versionString(size: number): string {
  return `KERI10JSON${size.toString(16).padStart(6, '0')}_`;
}

/** Compact JSON of `members` in their insertion order (the caller inserts in canonical order). */
function serialize(members: Record<string, unknown>): Uint8Array {
  return utf8.encode(JSON.stringify(members));
}

/**
 * Parse and check one event (SPEC §3.5 "Events") at position `seq` (for messages). Throws KelError
 * `malformed` for anything outside the event grammar: wrong member set, a value of the wrong form,
 * non-canonical qb64, too many entries, more than 64 KiB. Semantic rules (sequence, chaining,
 * thresholds, signatures, …) are the verifier's.
 */
export function parseEvent(value: unknown, seq: number | null = null): KelEvent {
  if (!isJsonObject(value)) fail('an event must be a JSON object', seq);
  const t = value.t;
  if (t !== 'icp' && t !== 'rot' && t !== 'ixn' && t !== 'dip' && t !== 'drt') fail(`unknown event type ${JSON.stringify(t)}`, seq);
  const names = [...MEMBERS[t]];
  if (t === 'drt' && Object.hasOwn(value, 'di')) names.push('di');
  const given = Object.keys(value);
  const missing = names.filter((m) => !Object.hasOwn(value, m));
  const extra = given.filter((m) => !names.includes(m));
  if (missing.length > 0 || extra.length > 0) {
    fail(
      `${t} members: ${missing.length > 0 ? `missing ${missing.join(',')}` : ''}${missing.length > 0 && extra.length > 0 ? '; ' : ''}${extra.length > 0 ? `unexpected ${extra.join(',')}` : ''}`,
      seq,
    );
  }
  const establishment = t !== 'ixn';
  const canonical: Record<string, unknown> = {};
  const v = leaf(value.v, 'v', seq);
  const d = digest(leaf(value.d, 'd', seq), 'd', seq);
  const i = identifier(leaf(value.i, 'i', seq), 'i', seq);
  const s = hexMember(value.s, 's', seq);
  const p = t === 'icp' || t === 'dip' ? null : digest(leaf(value.p, 'p', seq), 'p', seq);
  let kt: unknown = '0';
  let nt: unknown = '0';
  let bt = 0;
  let k: string[] = [];
  let keys: KelKey[] = [];
  let n: string[] = [];
  let b: string[] = [];
  let br: string[] = [];
  let ba: string[] = [];
  let c: string[] = [];
  let di: string | null = null;
  const max = LIMITS.listEntries;
  canonical.v = v;
  canonical.t = t;
  canonical.d = d;
  canonical.i = i;
  canonical.s = s.text;
  if (p !== null) canonical.p = p;
  if (establishment) {
    kt = threshold(value.kt);
    canonical.kt = kt;
    k = stringList(value.k, 'k', seq, max);
    keys = k.map((x, j) => decodeKey(x, `k[${j}]`, seq));
    canonical.k = k;
    nt = threshold(value.nt);
    canonical.nt = nt;
    n = stringList(value.n, 'n', seq, max).map((x, j) => digest(x, `n[${j}]`, seq));
    canonical.n = n;
    const btm = backerThreshold(value.bt, seq);
    bt = btm.value;
    canonical.bt = btm.json;
    if (t === 'icp' || t === 'dip') {
      b = stringList(value.b, 'b', seq, max).map((x, j) => identifier(x, `b[${j}]`, seq));
      canonical.b = b;
      c = stringList(value.c, 'c', seq, max);
      for (const trait of c) if (!CONFIG_TRAITS.includes(trait)) fail(`c: unknown configuration trait ${JSON.stringify(trait)}`, seq);
      if (new Set(c).size !== c.length) fail('c: a configuration trait is repeated', seq);
      canonical.c = c;
    } else {
      br = stringList(value.br, 'br', seq, max).map((x, j) => identifier(x, `br[${j}]`, seq));
      canonical.br = br;
      ba = stringList(value.ba, 'ba', seq, max).map((x, j) => identifier(x, `ba[${j}]`, seq));
      canonical.ba = ba;
    }
  }
  if (!Array.isArray(value.a)) fail('a must be an array of seals', seq);
  if (value.a.length > LIMITS.seals) fail(`a has ${value.a.length} seals (at most ${LIMITS.seals})`, seq);
  const a = value.a.map((x, j) => seal(x, `a[${j}]`, seq));
  canonical.a = a;
  if (names.includes('di')) {
    di = identifier(leaf(value.di, 'di', seq), 'di', seq);
    canonical.di = di;
  }
  const bytes = serialize(canonical);
  if (bytes.length > LIMITS.eventBytes) fail(`event is ${bytes.length} bytes (at most ${LIMITS.eventBytes})`, seq);
  return {
    t,
    v,
    d,
    i,
    s: s.text,
    sn: s.value,
    p,
    kt,
    k,
    keys,
    nt,
    n,
    bt,
    b,
    br,
    ba,
    c,
    a,
    di,
    bytes,
    expectedVersion: versionString(bytes.length),
    canonical,
  };
}

/**
 * computeSaid's answers, per event object (events are not changed after parseEvent): a SAID is
 * hashed once however many checks ask for it (statelessCheck and rule 2 of the same event).
 */
const saids = new WeakMap<KelEvent, string>();

/**
 * SAID(e): the `E` digest of B(e'), where e' has `d` (and an icp/dip's self-addressing `i`) set to
 * 44 `#` and `v` for e''s size. The placeholder is as long as an `E` SAID, so e' and e have the same size.
 */
export function computeSaid(e: KelEvent): string {
  const known = saids.get(e);
  if (known !== undefined) return known;
  const hashed: Record<string, unknown> = { ...e.canonical, v: e.expectedVersion, d: SAID_PLACEHOLDER };
  if ((e.t === 'icp' || e.t === 'dip') && e.i.startsWith('E')) hashed.i = SAID_PLACEHOLDER;
  const said = blake3Qb64(serialize(hashed));
  saids.set(e, said);
  return said;
}

/**
 * Record `said` as computeSaid's answer for `e`, computed by computeSaid on an equal event
 * elsewhere (a verification worker: src/kel-witness/offload.ts), so it is not hashed again here.
 */
export function rememberSaid(e: KelEvent, said: string): void {
  saids.set(e, said);
}

/** True when `i` is a self-addressing prefix (an `E` digest) rather than a basic (key) prefix. */
export function isSelfAddressing(prefix: string): boolean {
  return decodeQb64(prefix, ['E']) !== null;
}
