/**
 * The party registry (SPEC §3.2) as a validated, immutable snapshot. Parsing a document (already
 * read from JSON or YAML by the caller) either yields a whole Registry or throws; there is no
 * partially valid registry.
 */
import { decodeHex, encodeHex } from '../encoding/hex.ts';
import { ProtocolError } from '../errors.ts';
import { checkPartyPublicKey } from './party-signature.ts';
import { normalizeKeriId } from './did.ts';
import { AnchorError } from './errors.ts';
import { PUBLIC_KEY_LENGTH } from './types.ts';
import type { Curve } from './types.ts';
import { isJsonObject } from '../encoding/json.ts';

export interface PartyLimits {
  anchorsPerMinute?: number;
  newSeedsPerDay?: number;
}

export interface RegistryKey {
  curve: Curve;
  publicKey: Uint8Array;
}

export interface RegistryParty {
  /** `did:keri:<prefix>` */
  id: string;
  keys: RegistryKey[];
  delegator?: string;
  limits: PartyLimits;
  /** With a KEL source (SPEC §3.5): what the party's accepted KEL state says beyond its keys. */
  kel?: { revoked: boolean; abandoned: boolean };
}

/** Why a registry party without a usable KEL state is refused (SPEC §3.5 check 2). */
export interface WithheldParty {
  /** `unknown`: no accepted state (403 unknown_party); `behind`: the store knows a newer tip (503 registry_behind). */
  reason: 'unknown' | 'behind';
  detail: string;
}

export interface Registry {
  readonly parties: ReadonlyMap<string, RegistryParty>;
  /** With a KEL source: registry parties that have no usable KEL state now, and why. */
  readonly withheld?: ReadonlyMap<string, WithheldParty>;
}

function fail(message: string): never {
  throw new AnchorError('invalid_registry', message);
}

function onlyKeys(o: Record<string, unknown>, allowed: string[], where: string): void {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) fail(`${where}: unknown field ${JSON.stringify(k)}`);
}

function limit(v: unknown, where: string): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) fail(`${where}: must be a non-negative integer`);
  return v;
}

export const keyFingerprint = (curve: Curve, publicKey: Uint8Array): string => `${curve}:${encodeHex(publicKey)}`;

/** One entry of a registry file read for a KEL source (SPEC §3.5 "Registry file with KELs"). */
export interface RegistryEntry {
  /** `did:keri:<prefix>` */
  id: string;
  /** Static keys (checked as §3.2); absent: the keys come from the entry's KEL. */
  keys?: RegistryKey[];
  /** Only with `keys`. */
  delegator?: string;
  /** Every agent whose accepted KEL begins with a `dip` delegated by this entry is a party too. */
  delegates: boolean;
  limits: PartyLimits;
}

export interface RegistryFile {
  readonly entries: readonly RegistryEntry[];
}

function parseKeys(list: unknown, where: string, id: string, keyOwner: Map<string, string>): RegistryKey[] {
  if (!Array.isArray(list) || list.length === 0) fail(`${where}.keys: must be a non-empty array`);
  return list.map((k: unknown, j): RegistryKey => {
    const kw = `${where}.keys[${j}]`;
    if (!isJsonObject(k)) fail(`${kw}: must be an object`);
    onlyKeys(k, ['curve', 'public_key'], kw);
    const curve = k.curve;
    if (curve !== 'ed25519' && curve !== 'p256') fail(`${kw}.curve: must be "ed25519" or "p256"`);
    if (typeof k.public_key !== 'string') fail(`${kw}.public_key: must be hex`);
    let publicKey: Uint8Array;
    try {
      publicKey = decodeHex(k.public_key, PUBLIC_KEY_LENGTH[curve]);
      checkPartyPublicKey(curve, publicKey);
    } catch (e) {
      if (e instanceof ProtocolError) fail(`${kw}.public_key: ${e.message}`);
      throw e;
    }
    const fp = keyFingerprint(curve, publicKey);
    const owner = keyOwner.get(fp);
    if (owner !== undefined) fail(`${kw}: key already belongs to ${owner}`);
    keyOwner.set(fp, id);
    return { curve, publicKey };
  });
}

function parseId(v: unknown, where: string): string {
  if (typeof v !== 'string') fail(`${where}: must be a string`);
  try {
    return normalizeKeriId(v);
  } catch (e) {
    fail(`${where}: ${(e as Error).message}`);
  }
}

function parseLimits(v: unknown, where: string): PartyLimits {
  const limits: PartyLimits = {};
  if (v === undefined) return limits;
  if (!isJsonObject(v)) fail(`${where}: must be an object`);
  onlyKeys(v, ['anchors_per_minute', 'new_seeds_per_day'], where);
  const apm = limit(v.anchors_per_minute, `${where}.anchors_per_minute`);
  const nspd = limit(v.new_seeds_per_day, `${where}.new_seeds_per_day`);
  if (apm !== undefined) limits.anchorsPerMinute = apm;
  if (nspd !== undefined) limits.newSeedsPerDay = nspd;
  return limits;
}

/** The entries of a registry document, validated; `kel` allows the §3.5 members. */
function parseEntries(doc: unknown, kel: boolean): RegistryEntry[] {
  if (!isJsonObject(doc)) fail('registry must be an object with a "parties" array');
  onlyKeys(doc, ['parties'], 'registry');
  const list = doc.parties;
  if (!Array.isArray(list)) fail('registry.parties must be an array');
  const ids = new Set<string>();
  const keyOwner = new Map<string, string>();
  return list.map((p: unknown, i): RegistryEntry => {
    const where = `parties[${i}]`;
    if (!isJsonObject(p)) fail(`${where}: must be an object`);
    onlyKeys(p, kel ? ['id', 'keys', 'delegator', 'delegates', 'limits'] : ['id', 'keys', 'delegator', 'limits'], where);
    const id = parseId(p.id, `${where}.id`);
    if (ids.has(id)) fail(`${where}.id: duplicate party ${id}`);
    ids.add(id);
    const keys = !kel || p.keys !== undefined ? parseKeys(p.keys, where, id, keyOwner) : undefined;
    if (p.delegates !== undefined && typeof p.delegates !== 'boolean') fail(`${where}.delegates: must be true or false`);
    const delegates = p.delegates === true;
    if (keys !== undefined && delegates) fail(`${where}: "delegates" needs the entry's own KEL, so it cannot have "keys"`);
    if (keys === undefined && p.delegator !== undefined)
      fail(`${where}.delegator: only for entries with "keys" (a KEL names its delegator)`);
    const delegator = p.delegator === undefined ? undefined : parseId(p.delegator, `${where}.delegator`);
    const limits = parseLimits(p.limits, `${where}.limits`);
    return {
      id,
      ...(keys === undefined ? {} : { keys }),
      ...(delegator === undefined ? {} : { delegator }),
      delegates,
      limits,
    };
  });
}

/** Validate a registry document: ids unique after normalisation, each key in at most one party, keys valid. */
export function parseRegistry(doc: unknown): Registry {
  const parties = new Map<string, RegistryParty>();
  for (const e of parseEntries(doc, false)) {
    const party: RegistryParty = { id: e.id, keys: e.keys!, limits: e.limits };
    if (e.delegator !== undefined) party.delegator = e.delegator;
    parties.set(e.id, party);
  }
  return { parties };
}

/**
 * Validate a registry document used with a KEL source (SPEC §3.5): as §3.2, except that `keys` is
 * optional (absent: the keys come from the entry's KEL), `delegator` only goes with `keys`, and
 * `"delegates": true` (without `keys`) admits the entry's delegated agents.
 */
export function parseRegistryFile(doc: unknown): RegistryFile {
  return { entries: parseEntries(doc, true) };
}
