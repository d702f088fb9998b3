/**
 * Witness sets (the one implementation; `anchor-witness/client` re-exports it): the
 * witnesses a party relies on and how many must co-sign an anchor before it is final. Parses the
 * `anchor-witness/witness-set/v1` document and computes its SAID, the KERI self-addressing digest
 * over JCS with `url` left out (format and the choice of hash: docs/client.md).
 */
import { checkEd25519PublicKey } from '../crypto/ed25519-strict.ts';
import { encodeBase64url } from '../encoding/base64.ts';
import { decodeHex, encodeHex } from '../encoding/hex.ts';
import { canonicalBytes } from '../encoding/jcs.ts';
import { compareBytes } from '../encoding/portable.ts';
import { isValidName } from '../note/checkpoint.ts';
import { sha256 } from './crypto.ts';
import { VerificationError } from './errors.ts';
import type { PinnedWitnessBytes } from './receipt.ts';
import { isJsonObject } from '../encoding/json.ts';

export const WITNESS_SET_V = 'anchor-witness/witness-set/v1';
/** Most members a set may have. */
export const MAX_WITNESS_SET_MEMBERS = 64;
const SAID_PLACEHOLDER = '#'.repeat(44);

export interface WitnessSetMember {
  /** Witness name (its `--name`; the `witness_name` of its cosignatures). */
  name: string;
  curve: 'ed25519';
  /** The witness key (Ed25519, 32 bytes): signs cosignatures and log checkpoints. */
  publicKey: Uint8Array;
  /** The witness's log origin (key name of its checkpoints); default `<name>/anchors`. */
  logOrigin: string;
  /** Base URL of the witness (not part of the digest). */
  url?: string;
}

export interface WitnessSet {
  threshold: number;
  /** Sorted by name (byte order). */
  members: WitnessSetMember[];
}

export interface WitnessSetMemberWire {
  name: string;
  curve: 'ed25519';
  public_key: string;
  log_origin: string;
  url?: string;
}

export interface WitnessSetWire {
  v: typeof WITNESS_SET_V;
  d: string;
  threshold: number;
  members: WitnessSetMemberWire[];
}

function bad(message: string): never {
  throw new VerificationError('witness_set_invalid', `invalid witness set: ${message}`);
}

const UTF8 = new TextEncoder();
const byName = (a: { name: string }, b: { name: string }): number => compareBytes(UTF8.encode(a.name), UTF8.encode(b.name));

function checkUrl(url: string, at: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    bad(`${at}: not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') bad(`${at}: must be an http(s) URL`);
}

/** Validate and normalise (sort) a set built in code. */
export function makeWitnessSet(
  threshold: number,
  members: readonly (Omit<WitnessSetMember, 'curve' | 'logOrigin'> & { curve?: 'ed25519'; logOrigin?: string })[],
): WitnessSet {
  if (members.length < 1) bad('at least one member is required');
  if (members.length > MAX_WITNESS_SET_MEMBERS) bad(`at most ${MAX_WITNESS_SET_MEMBERS} members`);
  if (!Number.isSafeInteger(threshold) || threshold < 1 || threshold > members.length)
    bad(`threshold must be an integer in 1..${members.length}`);
  const names = new Set<string>();
  const keys = new Set<string>();
  const origins = new Set<string>();
  const out: WitnessSetMember[] = members.map((m, i) => {
    const at = `members[${i}]`;
    if (typeof m.name !== 'string' || !isValidName(m.name)) bad(`${at}.name is not a valid witness name`);
    if ((m.curve as string | undefined) !== undefined && m.curve !== 'ed25519') bad(`${at}.curve: witness keys are ed25519`);
    try {
      checkEd25519PublicKey(m.publicKey);
    } catch (e) {
      bad(`${at}.public_key: ${(e as Error).message}`);
    }
    const logOrigin = m.logOrigin ?? `${m.name}/anchors`;
    if (!isValidName(logOrigin)) bad(`${at}.log_origin is not a valid log origin`);
    if (names.has(m.name)) bad(`duplicate member name ${m.name}`);
    const hex = encodeHex(m.publicKey);
    if (keys.has(hex)) bad(`duplicate member key ${hex}`);
    if (origins.has(logOrigin)) bad(`duplicate log origin ${logOrigin}`);
    names.add(m.name);
    keys.add(hex);
    origins.add(logOrigin);
    const member: WitnessSetMember = { name: m.name, curve: 'ed25519', publicKey: Uint8Array.from(m.publicKey), logOrigin };
    if (m.url !== undefined) {
      checkUrl(m.url, `${at}.url`);
      member.url = m.url;
    }
    return member;
  });
  return { threshold, members: out.sort(byName) };
}

function canonicalObject(set: WitnessSet, d: string): Record<string, unknown> {
  return {
    v: WITNESS_SET_V,
    d,
    threshold: set.threshold,
    members: [...set.members]
      .sort(byName)
      .map((m) => ({ name: m.name, curve: m.curve, public_key: encodeHex(m.publicKey), log_origin: m.logOrigin })),
  };
}

/** The bytes whose SHA-256 the SAID encodes: JCS of the set with `d` = 44 × "#", members sorted, no `url`. */
function witnessSetSaidInput(set: WitnessSet): Uint8Array {
  return canonicalBytes(canonicalObject(set, SAID_PLACEHOLDER));
}

/** "I" + base64url(0x00 ‖ digest) without its first character: the CESR SHA2-256 shape. */
function saidFromDigest(digest: Uint8Array): string {
  const padded = new Uint8Array(33);
  padded.set(digest, 1);
  return 'I' + encodeBase64url(padded).slice(1);
}

/** The set's SAID (what anchors carry in `witness_set.said`). */
export async function witnessSetSaid(set: WitnessSet): Promise<string> {
  return saidFromDigest(await sha256(witnessSetSaidInput(set)));
}

/** The wire form, `d` filled in (the set's SAID). */
export async function encodeWitnessSet(set: WitnessSet): Promise<WitnessSetWire> {
  return {
    v: WITNESS_SET_V,
    d: await witnessSetSaid(set),
    threshold: set.threshold,
    members: set.members.map((m) => {
      const w: WitnessSetMemberWire = { name: m.name, curve: m.curve, public_key: encodeHex(m.publicKey), log_origin: m.logOrigin };
      if (m.url !== undefined) w.url = m.url;
      return w;
    }),
  };
}

function onlyKeys(o: Record<string, unknown>, allowed: readonly string[], at: string): void {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) bad(`${at}: unknown field ${JSON.stringify(k)}`);
}

/** Parse a witness set document's shape and members (strict: unknown fields refused); `d` as given, not yet checked. */
function parseWitnessSetShape(doc: unknown): { set: WitnessSet; d?: unknown } {
  if (!isJsonObject(doc)) bad('not a JSON object');
  onlyKeys(doc, ['v', 'd', 'threshold', 'members'], 'set');
  if (doc.v !== undefined && doc.v !== WITNESS_SET_V) bad(`v must be ${WITNESS_SET_V}`);
  if (typeof doc.threshold !== 'number') bad('threshold must be an integer');
  if (!Array.isArray(doc.members)) bad('members must be an array');
  const members = doc.members.map((m: unknown, i) => {
    const at = `members[${i}]`;
    if (!isJsonObject(m)) bad(`${at} is not an object`);
    onlyKeys(m, ['name', 'curve', 'public_key', 'log_origin', 'url'], at);
    if (typeof m.name !== 'string') bad(`${at}.name must be a string`);
    if (m.curve !== undefined && m.curve !== 'ed25519') bad(`${at}.curve: witness keys are ed25519`);
    if (typeof m.public_key !== 'string') bad(`${at}.public_key must be hex`);
    let publicKey: Uint8Array;
    try {
      publicKey = decodeHex(m.public_key, 32);
    } catch {
      bad(`${at}.public_key must be 32 bytes of hex`);
    }
    if (m.log_origin !== undefined && typeof m.log_origin !== 'string') bad(`${at}.log_origin must be a string`);
    if (m.url !== undefined && typeof m.url !== 'string') bad(`${at}.url must be a string`);
    return {
      name: m.name,
      publicKey,
      ...(typeof m.log_origin === 'string' ? { logOrigin: m.log_origin } : {}),
      ...(typeof m.url === 'string' ? { url: m.url } : {}),
    };
  });
  const set = makeWitnessSet(doc.threshold, members);
  return doc.d === undefined ? { set } : { set, d: doc.d };
}

/** Parse a witness set document (strict: unknown fields refused; a present `d` must be the SAID). */
export async function parseWitnessSet(doc: unknown): Promise<WitnessSet> {
  const { set, d } = parseWitnessSetShape(doc);
  if (d !== undefined) {
    const said = await witnessSetSaid(set);
    if (d !== said) bad(`d is ${JSON.stringify(d)} but the set's SAID is ${said}`);
  }
  return set;
}

/** The pinned identity of a member, for verifyAnchorResponse. */
export function memberPin(m: WitnessSetMember): PinnedWitnessBytes & { name: string } {
  return { name: m.name, publicKey: m.publicKey, logOrigin: m.logOrigin };
}

export function findMember(set: WitnessSet, name: string): WitnessSetMember | undefined {
  return set.members.find((m) => m.name === name);
}
