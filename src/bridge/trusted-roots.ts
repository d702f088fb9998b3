/**
 * The trusted-roots file (`--trusted-roots`, SPEC §7): the party registry of SPEC §3.2, validated by
 * the registry parser, plus a `revoked` list (`{"device_public_key": hex}` or `{"rid": string}`).
 * A party binds its `id` to its Ed25519 keys: a chain whose `chain[0].issuer` is exactly that id may
 * use any of them as `root_public_key`, and the id becomes the token's `sub` (so 6–255 characters,
 * what STS takes: `stsSubjectProblem`).
 */
import { parseRegistry, parseRegistryFile } from '../anchor/registry.ts';
import type { Registry, RegistryFile, RegistryParty } from '../anchor/registry.ts';
import { decodeHex, encodeHex } from '../encoding/hex.ts';
import { ProtocolError } from '../errors.ts';
import { BridgeConfigError } from './errors.ts';
import { stsSubjectProblem } from './sts-subject.ts';
import { isJsonObject } from '../encoding/json.ts';

export interface TrustedRoots {
  readonly registry: Registry;
  /** lowercase hex device keys */
  readonly revokedKeys: ReadonlySet<string>;
  readonly revokedRids: ReadonlySet<string>;
  /**
   * SPEC §7.1 (rev 4), only with `--kel-source`: the ids (`did:keri:<P>`) of the *KEL roots*, the
   * entries without `keys`, whose current keys come from P's accepted KEL state. Entries with `keys`
   * stay in `registry` (static; a KEL for them is shadowed).
   */
  readonly kelRoots?: ReadonlySet<string>;
  /** With `--kel-source`: every entry, as the KEL registry reads them. */
  readonly file?: RegistryFile;
}

export const EMPTY_TRUSTED_ROOTS: TrustedRoots = { registry: { parties: new Map() }, revokedKeys: new Set(), revokedRids: new Set() };

export interface TrustedRootsOptions {
  /** A KEL source is configured: entries may omit `keys` (KEL roots, SPEC §7.1). */
  kel?: boolean;
}

/** The static parties and the KEL roots of a document read for a KEL source. */
function parseKelEntries(list: unknown): { registry: Registry; kelRoots: Set<string>; file: RegistryFile } {
  const file = parseRegistryFile({ parties: list });
  const parties = new Map<string, RegistryParty>();
  const kelRoots = new Set<string>();
  file.entries.forEach((e, i) => {
    if (e.delegates)
      fail(`parties[${i}].delegates: not used by the token bridge (a root's delegated agents sign its anchors, not its chains)`);
    if (e.keys === undefined) {
      kelRoots.add(e.id);
      return;
    }
    parties.set(e.id, {
      id: e.id,
      keys: e.keys,
      limits: e.limits,
      ...(e.delegator === undefined ? {} : { delegator: e.delegator }),
    });
  });
  return { registry: { parties }, kelRoots, file };
}

function fail(message: string): never {
  throw new BridgeConfigError('invalid_trusted_roots', message);
}

/** Validate a trusted-roots document (already read from JSON or YAML). Throws BridgeConfigError. */
export function parseTrustedRoots(doc: unknown, opts: TrustedRootsOptions = {}): TrustedRoots {
  if (!isJsonObject(doc)) fail('trusted roots must be an object with "parties" (and optionally "revoked")');
  for (const k of Object.keys(doc)) if (k !== 'parties' && k !== 'revoked') fail(`unknown field ${JSON.stringify(k)}`);
  let registry: Registry;
  let kel: { kelRoots: Set<string>; file: RegistryFile } | undefined;
  try {
    if (opts.kel === true) {
      const parsed = parseKelEntries(doc.parties ?? []);
      registry = parsed.registry;
      kel = { kelRoots: parsed.kelRoots, file: parsed.file };
    } else registry = parseRegistry({ parties: doc.parties ?? [] });
  } catch (e) {
    if (e instanceof ProtocolError) fail(e.message);
    throw e;
  }
  // a party id is the token's `sub`: one STS cannot take would only ever mint refused tokens
  [...registry.parties.keys(), ...(kel?.kelRoots ?? [])].forEach((id, i) => {
    const problem = stsSubjectProblem(id);
    if (problem !== null) fail(`parties[${i}].id: ${JSON.stringify(id.length > 80 ? id.slice(0, 80) + '…' : id)} ${problem}`);
  });
  const revokedKeys = new Set<string>();
  const revokedRids = new Set<string>();
  const list = doc.revoked ?? [];
  if (!Array.isArray(list)) fail('revoked must be an array');
  list.forEach((r: unknown, i) => {
    const where = `revoked[${i}]`;
    if (!isJsonObject(r)) fail(`${where}: must be an object`);
    const keys = Object.keys(r);
    if (keys.length !== 1 || (keys[0] !== 'device_public_key' && keys[0] !== 'rid')) {
      fail(`${where}: must be exactly one of {"device_public_key": hex} or {"rid": string}`);
    }
    if (r.device_public_key !== undefined) {
      if (typeof r.device_public_key !== 'string') fail(`${where}.device_public_key: must be hex`);
      try {
        revokedKeys.add(encodeHex(decodeHex(r.device_public_key, 32)));
      } catch {
        fail(`${where}.device_public_key: must be 32 bytes of hex`);
      }
    } else {
      if (typeof r.rid !== 'string' || r.rid === '') fail(`${where}.rid: must be a non-empty string`);
      revokedRids.add(r.rid);
    }
  });
  return { registry, revokedKeys, revokedRids, ...(kel === undefined ? {} : kel) };
}
