/**
 * The signing-key lifecycle of SPEC §7 as pure state transitions over the `keys.json` entries
 * `{kid, state, not_before, retire_after}` (times on disk are RFC 3339 UTC, whole seconds):
 *
 *  - `rotate` on an empty set creates the first key, `active` at once; otherwise it adds a key in
 *    state `next` with `not_before` = now + prepublish: published in the JWKS, not yet signing
 *    (pre-publication, so relying parties have it cached before the first token it signs);
 *  - `promote` (at start, on SIGHUP and every 60 s) makes a `next` key whose `not_before` has passed
 *    `active` and retires the previous active key with `retire_after` = now + max TTL + 300 s: every
 *    token it signed has expired by then, and a JWKS cached for 300 s has seen the new key;
 *  - `prune` drops retired keys whose `retire_after` has passed.
 *
 * Invariants checked on parse: unique kids (RFC 7638 thumbprints, 43 base64url characters), at most
 * one `active` and at most one `next` key, `retire_after` set exactly on retired keys.
 *
 * SPEC §1.1 (rev 4): an entry may name a P-256 key on a PKCS#11 token instead of a `<kid>.pem` file:
 * `"ref":"pkcs11:…"` with its public key `"jwk":{"kty":"EC","crv":"P-256","x","y"}` (the JWKS is
 * built from it; that `kid` is its thumbprint is checked where keys are loaded, key-dir.ts).
 */
import { formatTimestamp, parseTimestamp } from '../encoding/time.ts';
import { BridgeConfigError } from './errors.ts';
import { isJsonObject } from '../encoding/json.ts';

export const KEY_STATES = ['active', 'next', 'retired'] as const;
export type KeyState = (typeof KEY_STATES)[number];
export const KID_RE = /^[A-Za-z0-9_-]{43}$/;
export const DEFAULT_PREPUBLISH_SECONDS = 3600;
/** How long a relying party may cache the JWKS (`Cache-Control: max-age`), added to the retention. */
export const JWKS_MAX_AGE_SECONDS = 300;

export interface KeyEntry {
  readonly kid: string;
  readonly state: KeyState;
  /** unix seconds */
  readonly notBefore: number;
  /** unix seconds; set on retired keys only */
  readonly retireAfter: number | null;
  /** A key on a PKCS#11 token (SPEC §1.1): its `pkcs11:` reference; absent for a `<kid>.pem` key. */
  readonly ref?: string;
  /** With `ref`: the token key's public JWK (RFC 7638 members only). */
  readonly jwk?: EcPublicJwk;
}

/** The RFC 7638 members of a P-256 public key: what a `ref` entry carries and its kid is the thumbprint of. */
export interface EcPublicJwk {
  readonly kty: 'EC';
  readonly crv: 'P-256';
  readonly x: string;
  readonly y: string;
}

export interface KeysJsonEntry {
  kid: string;
  state: KeyState;
  not_before: string;
  retire_after: string | null;
  ref?: string;
  jwk?: EcPublicJwk;
}

const COORD_RE = /^[A-Za-z0-9_-]{43}$/;

function parseJwk(v: unknown, where: string): EcPublicJwk {
  if (!isJsonObject(v)) fail(`${where}: must be {"kty":"EC","crv":"P-256","x","y"}`);
  const keys = Object.keys(v).sort().join(',');
  if (keys !== 'crv,kty,x,y' || v.kty !== 'EC' || v.crv !== 'P-256')
    fail(`${where}: must be exactly {"kty":"EC","crv":"P-256","x","y"} (a P-256 public key)`);
  if (typeof v.x !== 'string' || !COORD_RE.test(v.x) || typeof v.y !== 'string' || !COORD_RE.test(v.y))
    fail(`${where}: x and y must be 43 base64url characters`);
  return { kty: 'EC', crv: 'P-256', x: v.x, y: v.y };
}

/** `ref` and `jwk` of one entry: both or neither; a ref is a `pkcs11:` URI (checked in full when opened). */
function parseExternal(v: Record<string, unknown>, where: string): { ref?: string; jwk?: EcPublicJwk } {
  if (v.ref === undefined && v.jwk === undefined) return {};
  if (typeof v.ref !== 'string' || !v.ref.startsWith('pkcs11:')) fail(`${where}.ref: must be a pkcs11: URI (docs/protocol.md §1.1)`);
  if (v.jwk === undefined) fail(`${where}: an entry with "ref" needs its "jwk" (run token-bridge keys rotate --ref URI)`);
  return { ref: v.ref, jwk: parseJwk(v.jwk, `${where}.jwk`) };
}

function fail(message: string): never {
  throw new BridgeConfigError('key_dir_invalid', `keys.json: ${message}`);
}

function check(entries: readonly KeyEntry[]): readonly KeyEntry[] {
  const kids = new Set<string>();
  let active = 0;
  let next = 0;
  for (const e of entries) {
    if (kids.has(e.kid)) fail(`duplicate kid ${e.kid}`);
    kids.add(e.kid);
    if (e.state === 'active') active++;
    if (e.state === 'next') next++;
    if ((e.state === 'retired') !== (e.retireAfter !== null)) fail(`${e.kid}: retire_after must be set on retired keys only`);
  }
  if (active > 1) fail('more than one active key');
  if (next > 1) fail('more than one next key');
  return entries;
}

function time(v: unknown, where: string): number {
  if (typeof v !== 'string') fail(`${where}: must be an RFC 3339 UTC time (YYYY-MM-DDTHH:MM:SSZ)`);
  try {
    return parseTimestamp(v);
  } catch {
    return fail(`${where}: must be an RFC 3339 UTC time (YYYY-MM-DDTHH:MM:SSZ)`);
  }
}

/** Validate a parsed keys.json document. */
export function parseKeysJson(doc: unknown): readonly KeyEntry[] {
  if (!isJsonObject(doc) || !Array.isArray(doc.keys)) fail('must be {"keys": [...]}');
  const list: unknown[] = doc.keys;
  return check(
    list.map((v: unknown, i): KeyEntry => {
      const where = `keys[${i}]`;
      if (!isJsonObject(v)) fail(`${where}: must be an object`);
      if (typeof v.kid !== 'string' || !KID_RE.test(v.kid)) fail(`${where}.kid: must be an RFC 7638 thumbprint (43 base64url characters)`);
      if (typeof v.state !== 'string' || !(KEY_STATES as readonly string[]).includes(v.state))
        fail(`${where}.state: must be active, next or retired`);
      return {
        kid: v.kid,
        state: v.state as KeyState,
        notBefore: time(v.not_before, `${where}.not_before`),
        retireAfter: v.retire_after === null || v.retire_after === undefined ? null : time(v.retire_after, `${where}.retire_after`),
        ...parseExternal(v, where),
      };
    }),
  );
}

export function encodeKeysJson(entries: readonly KeyEntry[]): { keys: KeysJsonEntry[] } {
  return {
    keys: entries.map((e) => ({
      kid: e.kid,
      state: e.state,
      not_before: formatTimestamp(e.notBefore),
      retire_after: e.retireAfter === null ? null : formatTimestamp(e.retireAfter),
      ...(e.ref === undefined ? {} : { ref: e.ref, jwk: e.jwk }),
    })),
  };
}

/** Retention of a retired key: max TTL + the JWKS cache lifetime (SPEC: at least max TTL + 300 s). */
export function retentionSeconds(maxTtl: number): number {
  return maxTtl + JWKS_MAX_AGE_SECONDS;
}

/**
 * Add a key: the first one is active at once, later ones are `next` after `prepublish` seconds.
 * `external` names a key on a token (its `ref` and `jwk`) instead of a `<kid>.pem` file.
 */
export function addKey(
  entries: readonly KeyEntry[],
  kid: string,
  now: number,
  prepublish: number,
  external?: { ref: string; jwk: EcPublicJwk },
): readonly KeyEntry[] {
  if (entries.some((e) => e.kid === kid)) throw new BridgeConfigError('key_dir_invalid', `kid ${kid} is already in keys.json`);
  const pending = entries.find((e) => e.state === 'next');
  if (pending !== undefined) {
    throw new BridgeConfigError(
      'next_key_pending',
      `key ${pending.kid} is already waiting to become active at ${formatTimestamp(pending.notBefore)}; rotate again after it has`,
    );
  }
  const extra = external === undefined ? {} : { ref: external.ref, jwk: external.jwk };
  if (!entries.some((e) => e.state === 'active'))
    return check([...entries, { kid, state: 'active', notBefore: now, retireAfter: null, ...extra }]);
  return check([...entries, { kid, state: 'next', notBefore: now + prepublish, retireAfter: null, ...extra }]);
}

/** Promote a due `next` key; returns the same array when nothing changed. */
export function promote(entries: readonly KeyEntry[], now: number, retention: number): readonly KeyEntry[] {
  const next = entries.find((e) => e.state === 'next');
  if (next === undefined || next.notBefore > now) return entries;
  return check(
    entries.map((e): KeyEntry => {
      if (e === next) return { ...e, state: 'active' };
      if (e.state === 'active') return { ...e, state: 'retired', retireAfter: now + retention };
      return e;
    }),
  );
}

/** Drop retired keys past `retire_after`. */
export function prune(entries: readonly KeyEntry[], now: number): { kept: readonly KeyEntry[]; dropped: readonly KeyEntry[] } {
  const dropped = entries.filter((e) => e.state === 'retired' && e.retireAfter !== null && e.retireAfter <= now);
  return { kept: entries.filter((e) => !dropped.includes(e)), dropped };
}

/** JWKS order: the active key, then the next one, then retired keys (most recently retired first). */
export function publicationOrder(entries: readonly KeyEntry[]): KeyEntry[] {
  const rank = (e: KeyEntry): number => (e.state === 'active' ? 0 : e.state === 'next' ? 1 : 2);
  return [...entries].sort((a, b) => rank(a) - rank(b) || (b.retireAfter ?? 0) - (a.retireAfter ?? 0));
}
