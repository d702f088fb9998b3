/**
 * Test KELs for a `dir:` source without KERI tooling (`anchor-witness kel init | rotate |
 * delegate`, and the `npm start` demo): single-key Ed25519 identifiers whose seeds are kept in a
 * key directory, one `<prefix>.kel-keys.json` per identifier (mode 0600, created with O_EXCL,
 * replaced by rename, refused when group- or world-readable), and whose KEL is
 * `<kel dir>/<prefix>.kel.json`, replaced by rename so a watching witness reads a whole file.
 *
 * The key file lists the seeds in rotation order: establishment event j has `seeds[j]` as its key
 * and commits to `seeds[j + 1]` as the next one. A rotation first appends a new seed to the key file,
 * then appends the event to the KEL: a run interrupted in between leaves a spare seed that the next
 * rotation uses, never a KEL whose next key is lost. Seeds are never regenerated: a KEL whose
 * current key or next-key commitment is not in its key file is refused (`kel_keys_mismatch`).
 *
 * For trying the registry, not for production identifiers: the seeds sit unencrypted on disk,
 * there is one key per event (threshold 1) and no witnesses (backers).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../client/files.ts';
import { decodeHex, encodeHex } from '../encoding/hex.ts';
import { readKeyFile, writeNewKeyFile } from '../keys/keyfile.ts';
import { commitmentTo, ed25519Signer, finalizeEvent, KelBuilder, signEvent, type KelSigner } from '../keri/build.ts';
import { hexNumber, hexText, type Seal } from '../keri/event.ts';
import { PREFIX_PATTERN } from '../keri/index.ts';
import { KelToolError } from './errors.ts';

export const KEL_KEYS_FORMAT = 'anchor-witness/kel-keys/v1';

/** A `dir:` document: `{prefix, events, attachments}`. */
export interface KelDocument {
  prefix: string;
  events: Record<string, unknown>[];
  attachments: string[];
}

interface KelKeys {
  v: typeof KEL_KEYS_FORMAT;
  prefix: string;
  seeds: string[];
}

/** What a command did to one identifier. */
export interface KelChange {
  prefix: string;
  id: string;
  /** Sequence number and SAID of the event written. */
  s: number;
  d: string;
  /** The current Ed25519 public key (hex) after the change. */
  public_key: string;
  delegator: string | null;
  kel_file: string;
  keys_file: string;
  /** The delegator's anchoring event (seal of this change), or null when none was written. */
  anchored_by: { prefix: string; s: number; d: string } | null;
}

export const kelFile = (dir: string, prefix: string): string => join(dir, `${prefix}.kel.json`);
export const kelKeysFile = (keysDir: string, prefix: string): string => join(keysDir, `${prefix}.kel-keys.json`);

const newSeed = (): string => encodeHex(randomBytes(32));
const signerOf = (seed: string): KelSigner => ed25519Signer(decodeHex(seed, 32));

function checkPrefix(prefix: string): void {
  if (!PREFIX_PATTERN.test(prefix)) throw new KelToolError('kel_missing', `not a KEL prefix: ${JSON.stringify(prefix)}`);
}

function readKeys(keysDir: string, prefix: string): KelKeys {
  const path = kelKeysFile(keysDir, prefix);
  if (!existsSync(path))
    throw new KelToolError('kel_keys_missing', `no key file ${path}: ${prefix} was not made by kel init/delegate here`);
  let doc: unknown;
  try {
    doc = JSON.parse(readKeyFile(path));
  } catch (e) {
    if (e instanceof SyntaxError) throw new KelToolError('kel_keys_invalid', `${path}: not JSON`);
    throw e;
  }
  const k = doc as Partial<KelKeys>;
  const seedOk = (s: unknown): boolean => typeof s === 'string' && /^[0-9a-f]{64}$/.test(s);
  if (k.v !== KEL_KEYS_FORMAT || k.prefix !== prefix || !Array.isArray(k.seeds) || k.seeds.length < 2 || !k.seeds.every(seedOk))
    throw new KelToolError('kel_keys_invalid', `${path}: not a ${KEL_KEYS_FORMAT} key file of ${prefix}`);
  return k as KelKeys;
}

const keysText = (keys: KelKeys): string => JSON.stringify(keys, null, 2) + '\n';

export function readKelDocument(dir: string, prefix: string): KelDocument {
  checkPrefix(prefix);
  const path = kelFile(dir, prefix);
  let doc: Partial<KelDocument>;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8')) as Partial<KelDocument>;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new KelToolError('kel_missing', `cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : (code ?? (e as Error).message)}`);
  }
  if (doc.prefix !== prefix || !Array.isArray(doc.events) || !Array.isArray(doc.attachments) || doc.events.length === 0)
    throw new KelToolError('kel_missing', `${path}: not a KEL document of ${prefix}`);
  return doc as KelDocument;
}

function writeKel(dir: string, doc: KelDocument): string {
  const path = kelFile(dir, doc.prefix);
  writeFileAtomic(path, JSON.stringify(doc) + '\n', 0o644);
  return path;
}

/** The last establishment event's keys and next-key commitments, and the delegator. */
function keyState(doc: KelDocument): { k: string[]; n: string[]; delegator: string | null; establishments: number } {
  let k: string[] = [];
  let n: string[] = [];
  let establishments = 0;
  for (const e of doc.events) {
    if (e.t === 'ixn') continue;
    k = e.k as string[];
    n = e.n as string[];
    establishments++;
  }
  const first = doc.events[0]!;
  return { k, n, delegator: first.t === 'dip' ? (first.di as string) : null, establishments };
}

/** The index j of the current seed (seeds[j] is the key, seeds[j + 1] the committed next key). */
function currentSeedIndex(doc: KelDocument, keys: KelKeys, keysDir: string): number {
  const state = keyState(doc);
  if (state.k.length !== 1 || state.n.length !== 1)
    throw new KelToolError('kel_keys_mismatch', `${doc.prefix}: not a single-key KEL (kel init/delegate make those)`);
  for (let j = 0; j + 1 < keys.seeds.length; j++) {
    if (signerOf(keys.seeds[j]!).key.qb64 === state.k[0] && commitmentTo(signerOf(keys.seeds[j + 1]!)) === state.n[0]) return j;
  }
  throw new KelToolError(
    'kel_keys_mismatch',
    `${kelKeysFile(keysDir, doc.prefix)} holds neither the current key of ${doc.prefix} nor its next one: refusing to touch the KEL`,
  );
}

function append(doc: KelDocument, members: Record<string, unknown>, signer: KelSigner, ondex: number | null): { s: number; d: string } {
  const last = doc.events.at(-1)!;
  const s = hexNumber(last.s as string) + 1;
  const event = finalizeEvent({ ...members, i: doc.prefix, s: hexText(s), p: last.d });
  doc.events.push(event);
  doc.attachments.push(signEvent(event, [signer], { ondex: [ondex] }));
  return { s, d: event.d as string };
}

/** Have `delegatorPrefix` anchor `seal` with an `ixn` signed by its current key (its key file must be in keysDir). */
function anchorSeal(dir: string, keysDir: string, delegatorPrefix: string, seal: Seal): { prefix: string; s: number; d: string } {
  const doc = readKelDocument(dir, delegatorPrefix);
  const keys = readKeys(keysDir, delegatorPrefix);
  const j = currentSeedIndex(doc, keys, keysDir);
  const built = append(doc, { t: 'ixn', a: [seal] }, signerOf(keys.seeds[j]!), 0);
  writeKel(dir, doc);
  return { prefix: delegatorPrefix, ...built };
}

function incept(dir: string, keysDir: string, delegator: string | null): KelChange {
  const seeds = [newSeed(), newSeed()];
  const kel = KelBuilder.incept({
    signers: [signerOf(seeds[0]!)],
    next: [signerOf(seeds[1]!)],
    ...(delegator === null ? {} : { delegator }),
  });
  const keysPath = kelKeysFile(keysDir, kel.prefix);
  // the key file first, with O_EXCL: a KEL file never exists without its keys
  writeNewKeyFile(keysPath, keysText({ v: KEL_KEYS_FORMAT, prefix: kel.prefix, seeds }));
  const doc = kel.document();
  const kelPath = writeKel(dir, doc);
  return {
    prefix: kel.prefix,
    id: `did:keri:${kel.prefix}`,
    s: 0,
    d: doc.events[0]!.d as string,
    public_key: encodeHex(signerOf(seeds[0]!).key.raw),
    delegator,
    kel_file: kelPath,
    keys_file: keysPath,
    anchored_by: null,
  };
}

/** `kel init`: a new self-addressing identifier (`icp`). */
export function initKel(dir: string, keysDir: string): KelChange {
  return incept(dir, keysDir, null);
}

/**
 * `kel delegate`: a new agent (`dip`) delegated by `delegatorPrefix`, and the delegator's `ixn`
 * anchoring it (the delegator's key file must be in `keysDir`).
 */
export function delegateKel(dir: string, keysDir: string, delegatorPrefix: string): KelChange {
  // check the delegator before anything is written
  currentSeedIndex(readKelDocument(dir, delegatorPrefix), readKeys(keysDir, delegatorPrefix), keysDir);
  const agent = incept(dir, keysDir, delegatorPrefix);
  const anchoredBy = anchorSeal(dir, keysDir, delegatorPrefix, { i: agent.prefix, s: '0', d: agent.d });
  return { ...agent, anchored_by: anchoredBy };
}

/**
 * `kel rotate`: rotate to the committed next key and commit to a new one (`rot`, or `drt` for a
 * delegated identifier). A `drt` is anchored by the delegator at once when its key file is in
 * `keysDir`; otherwise it stays pending (the old key current) until the delegator anchors the seal.
 */
export function rotateKel(dir: string, keysDir: string, prefix: string): KelChange {
  const doc = readKelDocument(dir, prefix);
  const keys = readKeys(keysDir, prefix);
  const j = currentSeedIndex(doc, keys, keysDir);
  const { delegator } = keyState(doc);
  const keysPath = kelKeysFile(keysDir, prefix);
  if (keys.seeds.length < j + 3) {
    keys.seeds.push(newSeed());
    writeFileAtomic(keysPath, keysText(keys), 0o600);
  }
  const signer = signerOf(keys.seeds[j + 1]!);
  const built = append(
    doc,
    {
      t: delegator === null ? 'rot' : 'drt',
      kt: '1',
      k: [signer.key.qb64],
      nt: '1',
      n: [commitmentTo(signerOf(keys.seeds[j + 2]!))],
      bt: '0',
      br: [],
      ba: [],
      a: [],
    },
    signer,
    0,
  );
  const kelPath = writeKel(dir, doc);
  let anchoredBy: KelChange['anchored_by'] = null;
  if (delegator !== null && existsSync(kelKeysFile(keysDir, delegator)))
    anchoredBy = anchorSeal(dir, keysDir, delegator, { i: prefix, s: hexText(built.s), d: built.d });
  return {
    prefix,
    id: `did:keri:${prefix}`,
    ...built,
    public_key: encodeHex(signer.key.raw),
    delegator,
    kel_file: kelPath,
    keys_file: keysPath,
    anchored_by: anchoredBy,
  };
}

/** The Ed25519 seed of an identifier's current key (per its KEL's last establishment event). */
export function currentSeed(dir: string, keysDir: string, prefix: string): Uint8Array {
  const keys = readKeys(keysDir, prefix);
  return decodeHex(keys.seeds[currentSeedIndex(readKelDocument(dir, prefix), keys, keysDir)]!, 32);
}

/**
 * Write a key file from seeds kept elsewhere (the demo's older `kel-demo.json`); refuses to
 * overwrite one.
 */
export function importKelSeeds(keysDir: string, prefix: string, seeds: readonly string[]): void {
  writeNewKeyFile(kelKeysFile(keysDir, prefix), keysText({ v: KEL_KEYS_FORMAT, prefix, seeds: [...seeds] }));
}
