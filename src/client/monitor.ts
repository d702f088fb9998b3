/**
 * Monitoring witnesses (issue "Client SDK and CLI"): poll each witness's checkpoint and, for the
 * watched seeds, its latest co-signed anchor; verify everything under pinned keys (from a witness
 * set, or trust-on-first-use recorded in the state); report
 *
 *  - withholding      a witness behind the others for a seed (or missing it) longer than a grace;
 *  - disagreement     two witnesses co-signed different heads at one index (evidence: both
 *                     co-signed anchors, and the party's duplicity proof when one key signed both);
 *  - equivocation     one witness co-signed two heads at one index (seen at different times);
 *  - duplicity        a witness reports a stored duplicity proof for a watched seed that verifies
 *                     offline under a registered party key;
 *  - forged_anchor    a witness co-signed an anchor its party never signed (the party signature
 *                     does not verify, or the key is no registered party's): never counted;
 *  - forged_duplicity a witness serves a duplicity proof that is not the registered party's;
 *  - log_rollback     a checkpoint smaller than one the monitor saw before (both signed);
 *  - log_equivocation two checkpoints of one log (same key and origin) of one size with different
 *                     roots, from /log/checkpoint or any anchor response (a split view);
 *  - log_inconsistent a larger checkpoint that does not extend an earlier one, proven from the
 *                     log's tiles (consistency.ts); evidence verifies offline;
 *  - anchor_rollback  a seed's latest anchor at a witness moved backwards (or vanished);
 *  - tiles_mismatch, invalid_response, key_changed, unknown_witness, unreachable.
 *
 * Party keys come from a registry (SPEC §3.2, the file the witnesses load): an anchor counts —
 * as a high-water mark, an observation, withholding evidence — only when its party signature
 * verifies under a key the registry lists. Heads and roots are compared as bytes, never as text.
 *
 * The state (what was seen: high-water checkpoints and anchors per witness, observations per seed)
 * is a plain JSON value the caller persists between polls, so a restarted monitor compares against
 * what it saw before and a witness restored from an old copy is caught. The poll itself does only
 * HTTP through the injected options; time is a parameter.
 */
import { decodeDuplicityProof, encodeAnchor, encodeDuplicityProof } from '../anchor/codec.ts';
import { makeDuplicityProof, verifyDuplicityProof } from '../anchor/duplicity.ts';
import { verifyPartySignature } from '../anchor/party-signature.ts';
import { keyFingerprint, type Registry } from '../anchor/registry.ts';
import type { Anchor, AnchorWire, DuplicityProof, DuplicityProofWire } from '../anchor/types.ts';
import { encodeBase64 } from '../encoding/base64.ts';
import { decodeHex, encodeHex } from '../encoding/hex.ts';
import { ProtocolError } from '../errors.ts';
import { parseNote } from '../note/signed-note.ts';
import { parseCheckpoint, type Checkpoint } from '../note/checkpoint.ts';
import { ed25519NoteVerifier } from '../note/vkey.ts';
import { tilePath } from '../tlog/tiles.ts';
import { checkConsistencyFromTiles, type TileFetcher } from './consistency.ts';
import { ClientError } from './errors.ts';
import { httpRequest, joinUrl, parseJsonBody, type HttpOptions } from './http.ts';
import { verifyCheckpointNote } from './offline.ts';
import { fetchHealth } from './submit.ts';
import { decodeResponseAnchor, parseAnchorResponse, verifyWitnessReceipt, type CosignatureWire, type PinnedWitness } from './verify-anchor.ts';
import type { WitnessSet } from './witness-set.ts';

export const MONITOR_STATE_V = 'anchor-witness/monitor-state/v1';
/** Observations kept per seed (oldest dropped first). */
const MAX_OBSERVATIONS = 256;
/** Signed checkpoints kept per witness for split-view detection (smallest sizes dropped first). */
const MAX_CHECKPOINTS = 128;
export const LOG_EQUIVOCATION_V = 'anchor-witness/log-equivocation/v1';

export interface ObservedAnchor {
  anchor: AnchorWire;
  cosignature: CosignatureWire;
  /** Unix seconds when first seen. */
  seen: number;
}

export interface WitnessRecord {
  public_key: string;
  log_origin: string;
  /** The largest checkpoint seen that extends every earlier one (signed note). */
  checkpoint?: string;
  /** Signed checkpoints seen (one per size, two when they conflict; from /log/checkpoint and anchor responses), to catch a split view. */
  checkpoints?: string[];
  /** Per seed: the highest anchor seen at this witness. */
  anchors: Record<string, ObservedAnchor>;
  /** Per seed: since when (unix seconds) this witness has been behind. */
  behind: Record<string, number>;
}

export interface Observation extends ObservedAnchor {
  witness: string;
}

export interface MonitorState {
  v: typeof MONITOR_STATE_V;
  /** By witness name. */
  witnesses: Record<string, WitnessRecord>;
  /** By seed (hex): distinct (witness, index, head) observations. */
  seeds: Record<string, { observations: Observation[] }>;
}

export type FindingKind =
  | 'withholding'
  | 'disagreement'
  | 'equivocation'
  | 'duplicity'
  | 'forged_anchor'
  | 'forged_duplicity'
  | 'log_rollback'
  | 'log_equivocation'
  | 'log_inconsistent'
  | 'anchor_rollback'
  | 'tiles_mismatch'
  | 'invalid_response'
  | 'key_changed'
  | 'unknown_witness'
  | 'unreachable';

export interface Finding {
  /** Stable identity (same condition, same id), for de-duplication. */
  id: string;
  kind: FindingKind;
  severity: 'alert' | 'warning';
  /** One line for humans. */
  message: string;
  witness?: string;
  seed?: string;
  /** JSON-able evidence (signed notes, co-signed anchors, proofs). */
  evidence?: Record<string, unknown>;
}

export interface WitnessStatus {
  url: string;
  name?: string;
  reachable: boolean;
  logSize?: number;
  /** Per watched seed: the latest index this witness co-signed (null: none). */
  anchors: Record<string, number | null>;
}

export interface PollReport {
  time: number;
  findings: Finding[];
  witnesses: WitnessStatus[];
}

export interface MonitorConfig {
  /** Base URLs of the witnesses. */
  witnesses: readonly string[];
  /** Pins keys and log origins; without it, keys are trusted on first use and recorded. */
  witnessSet?: WitnessSet;
  /** Seeds to watch (hex or bytes). */
  seeds: readonly (string | Uint8Array)[];
  /**
   * The parties' keys (SPEC §3.2 registry, `parseRegistry`): an anchor counts only when its party
   * signature verifies under a key listed here; a duplicity proof is the party's only when its key
   * is listed. Required when `seeds` is not empty or `allDuplicities` is set.
   */
  registry?: Registry;
  /** Seconds a witness may be behind before withholding is reported (default 0). */
  withholdingGraceSec?: number;
  /** Also page through every stored duplicity proof of every witness. */
  allDuplicities?: boolean;
  http?: HttpOptions;
}

export function emptyMonitorState(): MonitorState {
  return { v: MONITOR_STATE_V, witnesses: {}, seeds: {} };
}

/** Check the shape of a loaded state document. */
export function parseMonitorState(doc: unknown): MonitorState {
  const bad = (m: string): never => {
    throw new ClientError('state_invalid', `monitor state: ${m}`);
  };
  if (typeof doc !== 'object' || doc === null) return bad('not an object');
  const d = doc as Partial<MonitorState>;
  if (d.v !== MONITOR_STATE_V) bad(`v must be ${MONITOR_STATE_V}`);
  if (typeof d.witnesses !== 'object' || typeof d.seeds !== 'object') bad('witnesses and seeds must be objects');
  for (const [name, w] of Object.entries(d.witnesses as Record<string, Partial<WitnessRecord>>)) {
    if (typeof w.public_key !== 'string' || typeof w.log_origin !== 'string' || typeof w.anchors !== 'object' || typeof w.behind !== 'object') bad(`witness ${name} is malformed`);
    if (w.checkpoints !== undefined && !(Array.isArray(w.checkpoints) && w.checkpoints.every((c) => typeof c === 'string'))) bad(`witness ${name}: checkpoints must be an array of signed notes`);
  }
  for (const [seed, s] of Object.entries(d.seeds as Record<string, { observations?: unknown }>)) {
    if (!Array.isArray(s.observations)) bad(`seed ${seed} is malformed`);
  }
  return d as MonitorState;
}

const short = (hex: string): string => hex.slice(0, 16);
const seedHex = (s: string | Uint8Array): string => (typeof s === 'string' ? s.toLowerCase() : encodeHex(s));
const errorText = (e: unknown): string => (e instanceof ProtocolError ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e));

interface Identified {
  url: string;
  name: string;
  pin: PinnedWitness & { name: string };
  /** The party keys (registry), by keyFingerprint → party id. */
  parties: PartyKeys;
  /** Signed checkpoints (verified under the pin) seen in this poll. */
  seen: string[];
}

type PartyKeys = ReadonlyMap<string, string>;

function partyKeys(registry: Registry | undefined): PartyKeys {
  const keys = new Map<string, string>();
  for (const p of registry?.parties.values() ?? []) for (const k of p.keys) keys.set(keyFingerprint(k.curve, k.publicKey), p.id);
  return keys;
}

/** Why an anchor is not the party's (undefined: it is: a registered key, and the signature verifies). */
function notThePartys(anchor: Anchor, parties: PartyKeys): string | undefined {
  const sp = anchor.sigParty;
  if (!parties.has(keyFingerprint(sp.curve, sp.publicKey))) return `its party key ${sp.curve}:${encodeHex(sp.publicKey)} is not a key of any party in the registry`;
  if (!verifyPartySignature(anchor)) return `its party signature does not verify under the registered key of ${parties.get(keyFingerprint(sp.curve, sp.publicKey))}`;
  return undefined;
}

/** A duplicity proof is the party's when it verifies offline and its (one) key is a registered party key. */
function partyDuplicity(proof: DuplicityProof, parties: PartyKeys): { valid: true; party: string } | { valid: false; reason: string } {
  const verdict = verifyDuplicityProof(proof);
  if (!verdict.valid) return verdict;
  const sp = proof.anchorA.sigParty;
  const party = parties.get(keyFingerprint(sp.curve, sp.publicKey));
  if (party === undefined) return { valid: false, reason: `it verifies, but is not signed by a key of any party in the registry (${sp.curve}:${encodeHex(sp.publicKey)})` };
  return { valid: true, party };
}

/** 32 bytes of hex, either case (undefined when not). */
function hex32(text: unknown): Uint8Array | undefined {
  try {
    return typeof text === 'string' ? decodeHex(text, 32) : undefined;
  } catch {
    return undefined;
  }
}
/** Head bytes of a stored wire anchor (undefined when undecodable). */
const headOf = (w: AnchorWire): Uint8Array | undefined => hex32(w.head);
const sameBytes = (a: Uint8Array | undefined, b: Uint8Array | undefined): boolean => a !== undefined && b !== undefined && Buffer.compare(a, b) === 0;

/**
 * Drop from the state every anchor the registry does not vouch for (a state written before the
 * monitor checked party signatures may hold a forged high-water mark or observation).
 */
function purgeUnsigned(state: MonitorState, parties: PartyKeys): void {
  const ok = (w: AnchorWire): boolean => {
    try {
      return notThePartys(decodeResponseAnchor(w), parties) === undefined;
    } catch {
      return false;
    }
  };
  for (const record of Object.values(state.witnesses)) {
    for (const [seed, o] of Object.entries(record.anchors)) if (!ok(o.anchor)) Reflect.deleteProperty(record.anchors, seed);
  }
  for (const entry of Object.values(state.seeds)) entry.observations = entry.observations.filter((o) => ok(o.anchor));
}

/** One poll of every witness; mutates `state` (persist it afterwards). */
export async function monitorPoll(config: MonitorConfig, state: MonitorState, now: number): Promise<PollReport> {
  const findings: Finding[] = [];
  const add = (f: Finding): void => {
    if (!findings.some((x) => x.id === f.id)) findings.push(f);
  };
  const http = config.http ?? {};
  const seeds = [...new Set(config.seeds.map(seedHex))];
  if ((seeds.length > 0 || config.allDuplicities === true) && config.registry === undefined) {
    throw new ClientError('usage', "watching seeds or duplicities needs the parties' keys: give the registry (SPEC §3.2) the witnesses use");
  }
  const parties = partyKeys(config.registry);
  if (config.registry !== undefined) purgeUnsigned(state, parties);
  const current = new Map<string, Map<string, number | null>>(); // witness → seed → index
  const identified: Identified[] = [];
  const statuses = await Promise.all(
    config.witnesses.map(async (url): Promise<WitnessStatus> => {
      const status: WitnessStatus = { url, reachable: false, anchors: {} };
      const id = await identify(url, config, state, http, add, parties);
      if (id === undefined) return status;
      identified.push(id);
      status.name = id.name;
      status.reachable = true;
      const record = state.witnesses[id.name]!;
      status.logSize = await checkLog(id, record, http, add);
      const perSeed = new Map<string, number | null>();
      current.set(id.name, perSeed);
      await Promise.all(
        seeds.map(async (seed) => {
          const index = await checkSeed(id, record, seed, state, http, add, now);
          if (index !== undefined) perSeed.set(seed, index);
          if (index !== undefined) status.anchors[seed] = index;
        }),
      );
      if (config.allDuplicities === true) await scanDuplicities(id, http, add);
      return status;
    }),
  );
  splitViews(identified, state, add);
  for (const seed of seeds) {
    crossCheck(seed, state, parties, add);
    withholding(seed, state, current, now, config.withholdingGraceSec ?? 0, add);
  }
  return { time: now, findings, witnesses: statuses };
}

async function identify(url: string, config: MonitorConfig, state: MonitorState, http: HttpOptions, add: (f: Finding) => void, parties: PartyKeys): Promise<Identified | undefined> {
  let health;
  try {
    health = await fetchHealth(url, http);
  } catch (e) {
    add({ id: `unreachable ${url}`, kind: 'unreachable', severity: 'warning', message: `${url} is unreachable: ${errorText(e)}` });
    return undefined;
  }
  const keyHex = encodeHex(health.publicKey);
  let pin: PinnedWitness & { name: string };
  if (config.witnessSet !== undefined) {
    const member = config.witnessSet.members.find((m) => encodeHex(m.publicKey) === keyHex);
    if (member === undefined) {
      add({ id: `unknown ${url} ${keyHex}`, kind: 'unknown_witness', severity: 'alert', message: `${url} claims to be ${health.name} with key ${keyHex}, which is not in the witness set` });
      return undefined;
    }
    pin = { name: member.name, publicKey: member.publicKey, logOrigin: member.logOrigin };
  } else {
    const known = state.witnesses[health.name];
    if (known !== undefined && (known.public_key !== keyHex || known.log_origin !== health.logOrigin)) {
      add({
        id: `key ${health.name} ${keyHex}`,
        kind: 'key_changed',
        severity: 'alert',
        witness: health.name,
        message: `${health.name} at ${url} now claims key ${keyHex} / origin ${health.logOrigin}; first seen with ${known.public_key} / ${known.log_origin} (not trusted)`,
      });
      return undefined;
    }
    pin = { name: health.name, publicKey: health.publicKey, logOrigin: health.logOrigin };
  }
  const pinHex = encodeHex(pin.publicKey);
  const record = state.witnesses[pin.name];
  if (record === undefined || record.public_key !== pinHex || record.log_origin !== pin.logOrigin) {
    if (record !== undefined) {
      add({ id: `key ${pin.name} ${pinHex}`, kind: 'key_changed', severity: 'warning', witness: pin.name, message: `${pin.name}: the witness set pins another key or origin than the recorded one; its record starts afresh` });
    }
    state.witnesses[pin.name] = { public_key: pinHex, log_origin: pin.logOrigin, anchors: {}, behind: {} };
  }
  return { url, name: pin.name, pin, parties, seen: [] };
}

function httpTiles(url: string, http: HttpOptions): TileFetcher {
  return async (tile) => {
    const res = await httpRequest(joinUrl(url, `/log/${tilePath(tile)}`), {}, http);
    if (res.status !== 200) throw new ClientError('tiles_unavailable', `${tilePath(tile)}: HTTP ${res.status}`);
    return res.bytes;
  };
}

/** The log: verify the checkpoint and check it against the high-water one. Returns the size. */
async function checkLog(id: Identified, record: WitnessRecord, http: HttpOptions, add: (f: Finding) => void): Promise<number | undefined> {
  let text: string;
  try {
    const res = await httpRequest(joinUrl(id.url, '/log/checkpoint'), {}, http);
    if (res.status !== 200) throw new ClientError('http_failed', `HTTP ${res.status}`);
    text = res.text;
  } catch (e) {
    add({ id: `unreachable ${id.url} checkpoint`, kind: 'unreachable', severity: 'warning', witness: id.name, message: `${id.name}: GET /log/checkpoint failed: ${errorText(e)}` });
    return undefined;
  }
  let cp: Checkpoint;
  try {
    cp = verifyCheckpointNote(text, [ed25519NoteVerifier(id.pin.logOrigin, id.pin.publicKey)], id.pin.logOrigin).checkpoint;
  } catch (e) {
    add({ id: `invalid ${id.name} checkpoint`, kind: 'invalid_response', severity: 'alert', witness: id.name, message: `${id.name}: its checkpoint does not verify under the pinned key: ${errorText(e)}`, evidence: { checkpoint: text } });
    return undefined;
  }
  id.seen.push(text);
  if (record.checkpoint === undefined) {
    record.checkpoint = text;
    return cp.size;
  }
  const prev = parseCheckpoint(parseNote(record.checkpoint).text);
  if (cp.size < prev.size) {
    add({
      id: `log_rollback ${id.name} ${prev.size} ${cp.size}`,
      kind: 'log_rollback',
      severity: 'alert',
      witness: id.name,
      message: `${id.name}: log rolled back from size ${prev.size} to ${cp.size} (both checkpoints signed by the witness key)`,
      evidence: { previous: record.checkpoint, current: text },
    });
    return cp.size;
  }
  // Same size: one root is nothing new; two roots are a split view, reported by splitViews (which
  // compares every checkpoint seen). The high-water mark stays.
  if (cp.size === prev.size) return cp.size;
  let check;
  try {
    check = await checkConsistencyFromTiles(prev, cp, httpTiles(id.url, http));
  } catch (e) {
    add({ id: `tiles ${id.name} ${prev.size} ${cp.size}`, kind: 'tiles_mismatch', severity: 'warning', witness: id.name, message: `${id.name}: cannot read the tiles for ${prev.size} → ${cp.size}: ${errorText(e)}` });
    return cp.size;
  }
  if (check.status === 'consistent') {
    record.checkpoint = text;
  } else if (check.status === 'tiles_mismatch') {
    add({ id: `tiles ${id.name} ${cp.size} ${encodeBase64(cp.rootHash)}`, kind: 'tiles_mismatch', severity: 'alert', witness: id.name, message: `${id.name}: the tiles it serves do not match its checkpoint of size ${cp.size}: ${check.reason}` });
  } else {
    add({
      id: `log_inconsistent ${id.name} ${prev.size} ${encodeBase64(prev.rootHash)} ${cp.size} ${encodeBase64(cp.rootHash)}`,
      kind: 'log_inconsistent',
      severity: 'alert',
      witness: id.name,
      message: `${id.name}: checkpoint of size ${cp.size} does not extend the one of size ${prev.size} (proven from its tiles)`,
      evidence: {
        previous: record.checkpoint,
        current: text,
        old_root_from_tiles: encodeBase64(check.evidence.oldRootFromTiles),
        consistency_proof: check.evidence.proof.map(encodeBase64),
      },
    });
  }
  return cp.size;
}

/** One seed at one witness. Returns the latest index (null: none), undefined when unknown. */
async function checkSeed(id: Identified, record: WitnessRecord, seed: string, state: MonitorState, http: HttpOptions, add: (f: Finding) => void, now: number): Promise<number | null | undefined> {
  let res;
  try {
    res = await httpRequest(joinUrl(id.url, `/v1/anchor/${seed}`), {}, http);
  } catch (e) {
    add({ id: `unreachable ${id.url} ${seed}`, kind: 'unreachable', severity: 'warning', witness: id.name, seed, message: `${id.name}: GET /v1/anchor/${short(seed)}… failed: ${errorText(e)}` });
    return undefined;
  }
  const prev = record.anchors[seed];
  if (res.status === 404) {
    if (prev !== undefined) {
      add({
        id: `anchor_rollback ${id.name} ${seed} ${prev.anchor.index} none`,
        kind: 'anchor_rollback',
        severity: 'alert',
        witness: id.name,
        seed,
        message: `${id.name}: seed ${short(seed)}… is gone; it co-signed index ${prev.anchor.index} before`,
        evidence: { previous: prev },
      });
    }
    return null;
  }
  let observed: ObservedAnchor;
  let duplicity: boolean;
  let anchor: Anchor;
  try {
    if (res.status !== 200) throw new ClientError('http_failed', `HTTP ${res.status}`);
    const body = parseAnchorResponse(parseJsonBody(res.text));
    anchor = decodeResponseAnchor(body.anchor);
    if (encodeHex(anchor.seedId) !== seed) throw new ClientError('anchor_mismatch', 'the response is for another seed');
    verifyWitnessReceipt(anchor, body, id.pin);
    id.seen.push(body.inclusion.checkpoint);
    // Stored in canonical form (lowercase hex): what is compared later is what was signed.
    observed = { anchor: encodeAnchor(anchor), cosignature: body.cosignature, seen: now };
    duplicity = body.duplicity === true;
  } catch (e) {
    add({ id: `invalid ${id.name} ${seed}`, kind: 'invalid_response', severity: 'alert', witness: id.name, seed, message: `${id.name}: its anchor for seed ${short(seed)}… does not verify: ${errorText(e)}` });
    return undefined;
  }
  // The witness signed it; did the party? A witness can co-sign anything, including an anchor at
  // index 10^12 under a garbage signature or a key of its own: that is the witness's misbehaviour,
  // never a high-water mark, an observation or evidence that the others withhold.
  const forged = notThePartys(anchor, id.parties);
  if (forged !== undefined) {
    add({
      id: `forged_anchor ${id.name} ${seed} ${anchor.index} ${encodeHex(anchor.head)}`,
      kind: 'forged_anchor',
      severity: 'alert',
      witness: id.name,
      seed,
      message: `${id.name} co-signed index ${anchor.index} of seed ${short(seed)}… that the party never signed: ${forged}`,
      evidence: { anchor: observed.anchor, cosignature: observed.cosignature },
    });
    return undefined;
  }
  const index = observed.anchor.index;
  if (prev !== undefined && index < prev.anchor.index) {
    add({
      id: `anchor_rollback ${id.name} ${seed} ${prev.anchor.index} ${index}`,
      kind: 'anchor_rollback',
      severity: 'alert',
      witness: id.name,
      seed,
      message: `${id.name}: seed ${short(seed)}… moved back from index ${prev.anchor.index} to ${index}`,
      evidence: { previous: prev, current: observed },
    });
  } else if (prev === undefined || index > prev.anchor.index) {
    record.anchors[seed] = observed;
  }
  const entry = (state.seeds[seed] ??= { observations: [] });
  if (!entry.observations.some((o) => o.witness === id.name && o.anchor.index === index && sameBytes(headOf(o.anchor), anchor.head))) {
    entry.observations.push({ witness: id.name, ...observed });
    if (entry.observations.length > MAX_OBSERVATIONS) entry.observations.splice(0, entry.observations.length - MAX_OBSERVATIONS);
  }
  if (duplicity) await reportedDuplicity(id, seed, http, add);
  return index;
}

async function reportedDuplicity(id: Identified, seed: string, http: HttpOptions, add: (f: Finding) => void): Promise<void> {
  try {
    const res = await httpRequest(joinUrl(id.url, `/v1/duplicity/${seed}`), {}, http);
    if (res.status !== 200) throw new ClientError('http_failed', `HTTP ${res.status}`);
    const doc = parseJsonBody(res.text);
    const wire = doc as DuplicityProofWire;
    if (typeof doc !== 'object' || doc === null || !sameBytes(hex32(wire.seed_id), hex32(seed))) {
      throw new ClientError('anchor_mismatch', 'the proof served is for another seed');
    }
    duplicityFinding(id, wire, add);
  } catch (e) {
    add({ id: `invalid ${id.name} duplicity ${seed}`, kind: 'invalid_response', severity: 'warning', witness: id.name, seed, message: `${id.name}: says seed ${short(seed)}… is frozen, but its duplicity proof is unavailable: ${errorText(e)}` });
  }
}

function duplicityFinding(id: Identified, wire: DuplicityProofWire, add: (f: Finding) => void): void {
  const proof = decodeDuplicityProof(wire);
  const verdict = partyDuplicity(proof, id.parties);
  const seed = encodeHex(proof.seedId);
  if (!verdict.valid) {
    add({
      id: `forged_duplicity ${id.name} ${seed} ${proof.index} ${encodeHex(proof.anchorA.head)} ${encodeHex(proof.anchorB.head)}`,
      kind: 'forged_duplicity',
      severity: 'alert',
      witness: id.name,
      seed,
      message: `${id.name}: serves a duplicity proof for ${short(seed)}… at index ${proof.index} that is not the party's: ${verdict.reason}`,
      evidence: { duplicity_proof: wire },
    });
    return;
  }
  add({
    id: `duplicity ${seed} ${proof.index} ${encodeHex(proof.anchorA.head)} ${encodeHex(proof.anchorB.head)}`,
    kind: 'duplicity',
    severity: 'alert',
    witness: id.name,
    seed,
    message: `party duplicity of ${verdict.party} on seed ${short(seed)}… at index ${proof.index} (reported by ${id.name}; the proof verifies offline under the party's registered key)`,
    evidence: { duplicity_proof: encodeDuplicityProof(proof) },
  });
}

async function scanDuplicities(id: Identified, http: HttpOptions, add: (f: Finding) => void): Promise<void> {
  let after: string | null = null;
  for (let page = 0; page < 100; page++) {
    let doc: { items?: unknown; next?: unknown };
    try {
      const res = await httpRequest(joinUrl(id.url, `/v1/duplicity?limit=100${after === null ? '' : `&after=${after}`}`), {}, http);
      if (res.status !== 200) throw new ClientError('http_failed', `HTTP ${res.status}`);
      doc = parseJsonBody(res.text) as { items?: unknown; next?: unknown };
      if (!Array.isArray(doc.items)) throw new ClientError('malformed_json', 'items must be an array');
    } catch (e) {
      add({ id: `unreachable ${id.url} duplicities`, kind: 'unreachable', severity: 'warning', witness: id.name, message: `${id.name}: GET /v1/duplicity failed: ${errorText(e)}` });
      return;
    }
    for (const item of doc.items as DuplicityProofWire[]) {
      try {
        duplicityFinding(id, item, add);
      } catch (e) {
        add({ id: `invalid ${id.name} duplicity list`, kind: 'invalid_response', severity: 'alert', witness: id.name, message: `${id.name}: malformed duplicity proof in its list: ${errorText(e)}` });
      }
    }
    if (typeof doc.next !== 'string') return;
    after = doc.next;
  }
}

/**
 * Split views: every signed checkpoint seen in this poll (from /log/checkpoint and from anchor
 * responses, each verified under the pinned log key) is compared with every other one of the same
 * log — same key and origin, at any witness name, this poll or kept from earlier ones — by size:
 * two roots (as bytes) at one size is log equivocation, both signed notes the evidence. Each
 * witness then keeps one checkpoint per size, both when two conflict (the MAX_CHECKPOINTS largest
 * sizes).
 */
function splitViews(identified: readonly Identified[], state: MonitorState, add: (f: Finding) => void): void {
  interface Seen {
    witness: string;
    note: string;
    cp: Checkpoint;
  }
  const parse = (note: string): Checkpoint | undefined => {
    try {
      return parseCheckpoint(parseNote(note).text);
    } catch {
      return undefined;
    }
  };
  const groups = new Map<string, Seen[]>();
  const put = (key: string, witness: string, note: string, origin: string): void => {
    const cp = parse(note);
    if (cp === undefined || cp.origin !== origin) return;
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = []));
    g.push({ witness, note, cp });
  };
  for (const [name, rec] of Object.entries(state.witnesses)) {
    for (const note of [...(rec.checkpoints ?? []), ...(rec.checkpoint === undefined ? [] : [rec.checkpoint])]) put(`${rec.public_key} ${rec.log_origin}`, name, note, rec.log_origin);
  }
  for (const id of identified) for (const note of id.seen) put(`${encodeHex(id.pin.publicKey)} ${id.pin.logOrigin}`, id.name, note, id.pin.logOrigin);
  for (const seen of groups.values()) {
    const bySize = new Map<number, Seen[]>();
    for (const s of seen) {
      const same = bySize.get(s.cp.size);
      if (same === undefined) bySize.set(s.cp.size, [s]);
      else if (!same.some((o) => sameBytes(o.cp.rootHash, s.cp.rootHash))) same.push(s);
    }
    for (const [size, views] of bySize) {
      for (let i = 0; i < views.length; i++) {
        for (let j = i + 1; j < views.length; j++) {
          const [x, y] = Buffer.compare(views[i]!.cp.rootHash, views[j]!.cp.rootHash) < 0 ? [views[i]!, views[j]!] : [views[j]!, views[i]!];
          const who = x.witness === y.witness ? x.witness : `${x.witness},${y.witness}`;
          add({
            id: `log_equivocation ${x.cp.origin} ${size} ${encodeBase64(x.cp.rootHash)} ${encodeBase64(y.cp.rootHash)}`,
            kind: 'log_equivocation',
            severity: 'alert',
            witness: who,
            message: `${who}: two checkpoints of log ${x.cp.origin} at size ${size} with different roots, both signed by its log key (a split view)`,
            evidence: { v: LOG_EQUIVOCATION_V, origin: x.cp.origin, a: x.note, b: y.note },
          });
        }
      }
    }
  }
  // Keep one note per size — two when they conflict, so a proven split view is reported at every
  // poll (and after a restart), as a proven fork is.
  for (const id of identified) {
    const rec = state.witnesses[id.name]!;
    const kept = new Map<number, { note: string; root: Uint8Array }[]>();
    for (const note of [...(rec.checkpoints ?? []), ...id.seen]) {
      const cp = parse(note);
      if (cp === undefined) continue;
      const same = kept.get(cp.size);
      if (same === undefined) kept.set(cp.size, [{ note, root: cp.rootHash }]);
      else if (same.length < 2 && !same.some((o) => sameBytes(o.root, cp.rootHash))) same.push({ note, root: cp.rootHash });
    }
    rec.checkpoints = [...kept.entries()]
      .sort(([a], [b]) => a - b)
      .slice(-MAX_CHECKPOINTS)
      .flatMap(([, notes]) => notes.map((n) => n.note));
  }
}

/** Different heads (as bytes) at one index among the observations of a seed. */
function crossCheck(seed: string, state: MonitorState, parties: PartyKeys, add: (f: Finding) => void): void {
  const obs = state.seeds[seed]?.observations ?? [];
  for (let i = 0; i < obs.length; i++) {
    for (let j = i + 1; j < obs.length; j++) {
      const a = obs[i]!;
      const b = obs[j]!;
      const ha = headOf(a.anchor);
      const hb = headOf(b.anchor);
      if (a.anchor.index !== b.anchor.index || ha === undefined || hb === undefined || sameBytes(ha, hb)) continue;
      const [x, y, hx, hy] = Buffer.compare(ha, hb) < 0 ? [a, b, ha, hb] : [b, a, hb, ha];
      const same = x.witness === y.witness;
      const evidence: Record<string, unknown> = {
        index: x.anchor.index,
        a: { witness: x.witness, anchor: x.anchor, cosignature: x.cosignature },
        b: { witness: y.witness, anchor: y.anchor, cosignature: y.cosignature },
      };
      let proofNote = 'the two anchors are signed by different party keys (no duplicity proof)';
      try {
        const proof = makeDuplicityProof(decodeResponseAnchor(x.anchor), decodeResponseAnchor(y.anchor));
        if (partyDuplicity(proof, parties).valid) {
          evidence.duplicity_proof = encodeDuplicityProof(proof);
          proofNote = 'the party signed both: duplicity proof attached (verifies offline)';
        }
      } catch {
        // different party keys: the co-signed anchors are the evidence
      }
      add({
        id: `${same ? 'equivocation' : 'disagreement'} ${seed} ${x.anchor.index} ${encodeHex(hx)} ${encodeHex(hy)} ${x.witness} ${y.witness}`,
        kind: same ? 'equivocation' : 'disagreement',
        severity: 'alert',
        seed,
        witness: same ? x.witness : `${x.witness},${y.witness}`,
        message: same
          ? `${x.witness} co-signed two heads at index ${x.anchor.index} of seed ${short(seed)}…: ${short(encodeHex(hx))}… and ${short(encodeHex(hy))}…; ${proofNote}`
          : `witnesses disagree on seed ${short(seed)}… index ${x.anchor.index}: ${x.witness} co-signed head ${short(encodeHex(hx))}…, ${y.witness} co-signed ${short(encodeHex(hy))}…; ${proofNote}`,
        evidence,
      });
    }
  }
}

function withholding(seed: string, state: MonitorState, current: Map<string, Map<string, number | null>>, now: number, grace: number, add: (f: Finding) => void): void {
  let best = -1;
  let bestBy = '';
  for (const [name, w] of Object.entries(state.witnesses).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const seen = w.anchors[seed]?.anchor.index;
    if (seen !== undefined && seen > best) {
      best = seen;
      bestBy = name;
    }
  }
  if (best < 0) return;
  for (const [name, perSeed] of current) {
    if (!perSeed.has(seed)) continue;
    const index = perSeed.get(seed) as number | null;
    const record = state.witnesses[name]!;
    if (index !== null && index >= best) {
      Reflect.deleteProperty(record.behind, seed);
      continue;
    }
    const since = record.behind[seed] ?? now;
    record.behind[seed] = since;
    if (now - since < grace) continue;
    add({
      id: `withholding ${name} ${seed} ${index ?? 'none'} ${best}`,
      kind: 'withholding',
      severity: 'alert',
      witness: name,
      seed,
      message: `${name} is behind on seed ${short(seed)}…: ${index === null ? 'no anchor' : `index ${index}`} while ${bestBy} co-signed index ${best} (behind for ${now - since} s)`,
      evidence: { index, expected: best, by: bestBy, since },
    });
  }
}
