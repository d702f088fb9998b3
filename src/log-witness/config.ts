/**
 * `--log-witnesses FILE` (SPEC §4.1): the peer witnesses that cosign this node's own log, and the
 * quorum of them a published checkpoint needs. JSON, or YAML for .yaml/.yml; reloaded like the
 * registry (src/config/reloadable.ts).
 *
 *   {"quorum": 2, "witnesses": [{"url": "https://w1.example/", "vkeys": ["w1.example+1a2b3c4d+BA…"]}]}
 *
 * Rules: 1 ≤ quorum ≤ witnesses; URLs are http(s) submission prefixes without credentials, query
 * or fragment (a missing final `/` is added), distinct; each witness has 1–4 cosigner vkeys of type
 * 0x04 (Ed25519 cosignature/v1) or 0x06 (ML-DSA-44 subtree/v1; refused where the runtime has no
 * ML-DSA-44), distinct across the whole file. A public key listed twice, whatever the names on its
 * vkeys, is `log_witness_key_duplicate` (SPEC §4.1 rev 4): cosignature/v1 does not sign the name,
 * so one key's line would count for two witnesses. Unknown members are refused.
 */
import { readDocument } from '../config/config-file.ts';
import { inputFileMessage } from '../config/input-file.ts';
import { mlDsa44Supported } from '../crypto/ml-dsa.ts';
import { SIG_TYPE_COSIGNATURE_V1, SIG_TYPE_SUBTREE_V1 } from '../note/signed-note.ts';
import { parseVkey, type NoteVerifier } from '../note/vkey.ts';
import { Policy, sharedKey, witness } from '../verify/policy.ts';
import { LogWitnessConfigError } from './errors.ts';
import { isJsonObject } from '../encoding/json.ts';

/** Most witnesses in one file, and vkeys per witness: with the node's own line a served note stays within 64 signatures. */
export const MAX_LOG_WITNESSES = 15;
export const MAX_WITNESS_VKEYS = 4;

export interface LogWitnessPeer {
  /** The submission prefix, ending in `/`: requests go to `<url>add-checkpoint`. */
  url: string;
  verifiers: NoteVerifier[];
}

export interface LogWitnessSet {
  quorum: number;
  witnesses: LogWitnessPeer[];
}

function bad(message: string): LogWitnessConfigError {
  return new LogWitnessConfigError('invalid_log_witnesses', message);
}

function onlyKeys(o: Record<string, unknown>, keys: readonly string[], where: string): void {
  for (const k of Object.keys(o)) if (!keys.includes(k)) throw bad(`${where}: unknown member ${JSON.stringify(k)}`);
}

/** The submission prefix of a witness URL (ending in `/`), or a LogWitnessConfigError. */
export function parseWitnessUrl(text: unknown, where: string): string {
  if (typeof text !== 'string') throw bad(`${where}: url must be a string`);
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw bad(`${where}: url ${JSON.stringify(text)} is not a URL`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw bad(`${where}: url must be http:// or https://`);
  if (u.username !== '' || u.password !== '') throw bad(`${where}: url must not carry credentials`);
  if (u.search !== '' || u.hash !== '' || text.includes('?') || text.includes('#'))
    throw bad(`${where}: url must have no query or fragment`);
  const s = u.toString();
  return s.endsWith('/') ? s : `${s}/`;
}

/** Validate a parsed witnesses document. */
export function parseLogWitnesses(doc: unknown): LogWitnessSet {
  if (!isJsonObject(doc)) throw bad('the log witnesses file must be an object {"quorum", "witnesses"}');
  onlyKeys(doc, ['quorum', 'witnesses'], 'log witnesses');
  const list = doc.witnesses;
  if (!Array.isArray(list) || list.length === 0) throw bad('"witnesses" must be a non-empty array');
  if (list.length > MAX_LOG_WITNESSES) throw bad(`at most ${MAX_LOG_WITNESSES} witnesses`);
  const urls = new Set<string>();
  const keys = new Map<string, { where: string; vkey: string }>();
  const witnesses = list.map((w: unknown, i): LogWitnessPeer => {
    const where = `witnesses[${i}]`;
    if (!isJsonObject(w)) throw bad(`${where} must be an object {"url", "vkeys"}`);
    onlyKeys(w, ['url', 'vkeys'], where);
    const url = parseWitnessUrl(w.url, where);
    if (urls.has(url)) throw bad(`${where}: url ${url} is listed twice`);
    urls.add(url);
    const vkeys = w.vkeys;
    if (!Array.isArray(vkeys) || vkeys.length === 0 || vkeys.length > MAX_WITNESS_VKEYS)
      throw bad(`${where}: "vkeys" must hold 1–${MAX_WITNESS_VKEYS} vkeys`);
    const verifiers = vkeys.map((text: unknown, j) => {
      if (typeof text !== 'string') throw bad(`${where}.vkeys[${j}] must be a string`);
      let v: NoteVerifier;
      try {
        v = parseVkey(text);
      } catch (e) {
        throw bad(`${where}.vkeys[${j}]: ${(e as Error).message}`);
      }
      if (v.type !== SIG_TYPE_COSIGNATURE_V1 && v.type !== SIG_TYPE_SUBTREE_V1)
        throw bad(`${where}.vkeys[${j}]: a witness vkey must be of type 0x04 (cosignature/v1) or 0x06 (ML-DSA-44 subtree/v1)`);
      if (v.type === SIG_TYPE_SUBTREE_V1 && !mlDsa44Supported())
        throw bad(`${where}.vkeys[${j}]: ML-DSA-44 vkeys need Node ≥ 24.6 with OpenSSL ≥ 3.5`);
      // Lines are matched by (name, key ID): two different keys there would be ambiguous. The same
      // key twice is log_witness_key_duplicate, below.
      const id = `${v.name}+${v.keyId}`;
      const owner = keys.get(id);
      if (owner !== undefined && owner.vkey !== v.vkey)
        throw bad(`${where}.vkeys[${j}]: key ${v.vkey} has the name and key ID of another key (${owner.where})`);
      keys.set(id, { where, vkey: v.vkey });
      return v;
    });
    return { url, verifiers };
  });
  const shared = sharedKey(witnesses.map((w, i) => ({ id: `witnesses[${i}]`, keys: w.verifiers })));
  if (shared !== undefined)
    throw new LogWitnessConfigError(
      'log_witness_key_duplicate',
      `log_witness_key_duplicate: ${shared.second}: the public key of ${shared.key.vkey} is already listed (${shared.first}); two witnesses may not share a key, whatever their names (a cosignature does not sign the name, so one signer would count twice)`,
    );
  const q = doc.quorum;
  if (typeof q !== 'number' || !Number.isSafeInteger(q) || q < 1 || q > witnesses.length)
    throw bad(`"quorum" must be an integer from 1 to the number of witnesses (${witnesses.length})`);
  return { quorum: q, witnesses };
}

/** The publishing quorum (src/verify/policy.ts): each configured witness, by URL, is one vote. */
export function logWitnessQuorum(set: LogWitnessSet): Policy<NoteVerifier> {
  return Policy.threshold(
    set.quorum,
    set.witnesses.map((w) => witness(w.url, w.verifiers)),
  );
}

/** Read and validate the witnesses file (the Reloadable loader). */
export function loadLogWitnesses(path: string): LogWitnessSet {
  let doc: unknown;
  try {
    doc = readDocument(path);
  } catch (e) {
    throw bad(inputFileMessage('--log-witnesses', path, e));
  }
  try {
    return parseLogWitnesses(doc);
  } catch (e) {
    if (e instanceof LogWitnessConfigError) throw new LogWitnessConfigError(e.code, `--log-witnesses ${path}: ${e.message}`);
    throw e;
  }
}
