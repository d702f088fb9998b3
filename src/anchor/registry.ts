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
}

export interface Registry {
  readonly parties: ReadonlyMap<string, RegistryParty>;
}

function fail(message: string): never {
  throw new AnchorError('invalid_registry', message);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
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

/** Validate a registry document: ids unique after normalisation, each key in at most one party, keys valid. */
export function parseRegistry(doc: unknown): Registry {
  if (!isObject(doc)) fail('registry must be an object with a "parties" array');
  onlyKeys(doc, ['parties'], 'registry');
  const list = doc.parties;
  if (!Array.isArray(list)) fail('registry.parties must be an array');
  const parties = new Map<string, RegistryParty>();
  const keyOwner = new Map<string, string>();
  list.forEach((p: unknown, i) => {
    const where = `parties[${i}]`;
    if (!isObject(p)) fail(`${where}: must be an object`);
    onlyKeys(p, ['id', 'keys', 'delegator', 'limits'], where);
    if (typeof p.id !== 'string') fail(`${where}.id: must be a string`);
    let id: string;
    try {
      id = normalizeKeriId(p.id);
    } catch (e) {
      fail(`${where}.id: ${(e as Error).message}`);
    }
    if (parties.has(id)) fail(`${where}.id: duplicate party ${id}`);
    if (!Array.isArray(p.keys) || p.keys.length === 0) fail(`${where}.keys: must be a non-empty array`);
    const keys = p.keys.map((k: unknown, j): RegistryKey => {
      const kw = `${where}.keys[${j}]`;
      if (!isObject(k)) fail(`${kw}: must be an object`);
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
    let delegator: string | undefined;
    if (p.delegator !== undefined) {
      if (typeof p.delegator !== 'string') fail(`${where}.delegator: must be a string`);
      try {
        delegator = normalizeKeriId(p.delegator);
      } catch (e) {
        fail(`${where}.delegator: ${(e as Error).message}`);
      }
    }
    const limits: PartyLimits = {};
    if (p.limits !== undefined) {
      if (!isObject(p.limits)) fail(`${where}.limits: must be an object`);
      onlyKeys(p.limits, ['anchors_per_minute', 'new_seeds_per_day'], `${where}.limits`);
      const apm = limit(p.limits.anchors_per_minute, `${where}.limits.anchors_per_minute`);
      const nspd = limit(p.limits.new_seeds_per_day, `${where}.limits.new_seeds_per_day`);
      if (apm !== undefined) limits.anchorsPerMinute = apm;
      if (nspd !== undefined) limits.newSeedsPerDay = nspd;
    }
    parties.set(id, delegator === undefined ? { id, keys, limits } : { id, keys, delegator, limits });
  });
  return { parties };
}
