/**
 * Views of a log from more than one place (SPEC §6.1, cross-witness equivocation): for every log
 * origin whose key is pinned — a witness-set member's, a `--log-vkey`, or a witness's recorded on
 * first use — each `--peer`'s monitoring endpoint `GET /<sha256(origin) hex>/checkpoint` (only the
 * URLs the operator named, never one learned from a response). A peer's checkpoint that verifies
 * under the pinned log key joins the split-view comparison (same size, two roots); one of another
 * size than the log's own published checkpoint is checked for consistency with it from the log's
 * tiles, and a proven inconsistency is `log_equivocation` with the proof hashes as evidence.
 */
import { encodeBase64 } from '../../encoding/base64.ts';
import { encodeHex } from '../../encoding/hex.ts';
import { sha256Hex } from '../../crypto/sha256.ts';
import type { Checkpoint } from '../../note/checkpoint.ts';
import { ed25519NoteVerifier, type NoteVerifier } from '../../note/vkey.ts';
import { LOG_EQUIVOCATION_V } from '../../verify/log-equivocation.ts';
import { checkConsistencyFromTiles, httpTiles } from '../consistency.ts';
import { ClientError } from '../errors.ts';
import { httpRequest, joinUrl, RESPONSE_CAPS, type HttpOptions } from '../http.ts';
import { verifyCheckpoint } from '../../verify/note.ts';
import type { WitnessSet } from '../../verify/witness-set.ts';
import { errorText, unverifiedEvidence, type AddFinding } from './findings.ts';
import type { Identified } from './identify.ts';
import { hex32, type MonitorState, type PeerCheckpoint } from './state.ts';

/** Peer checkpoints kept in the state (one per peer, origin and size; two when they conflict). */
const MAX_PEER_CHECKPOINTS = 512;

/** A log whose key is pinned, and where its own tiles are served (a witness polled now). */
export interface PinnedLog {
  origin: string;
  verifier: NoteVerifier;
  keyHex: string;
  /** The witness of this poll that publishes it (its /log/checkpoint and tiles). */
  witness?: Identified;
}

/** A signed checkpoint of a pinned log, verified, with where it came from. */
export interface LogView {
  source: string;
  note: string;
  keyHex: string;
  origin: string;
}

/**
 * Every pinned log origin: --log-vkey first, then the witness set, then what the state recorded
 * (trust on first use); the first pin of an origin wins.
 */
export function pinnedLogs(
  logKeys: readonly NoteVerifier[],
  witnessSet: WitnessSet | undefined,
  state: MonitorState,
  identified: readonly Identified[],
): Map<string, PinnedLog> {
  const logs = new Map<string, PinnedLog>();
  const pin = (origin: string, publicKey: Uint8Array, verifier?: NoteVerifier): void => {
    if (logs.has(origin)) return;
    logs.set(origin, { origin, verifier: verifier ?? ed25519NoteVerifier(origin, publicKey), keyHex: encodeHex(publicKey) });
  };
  for (const k of logKeys) pin(k.name, k.publicKey, k);
  for (const m of witnessSet?.members ?? []) pin(m.logOrigin, m.publicKey);
  for (const id of identified) pin(id.pin.logOrigin, id.pin.publicKey);
  for (const rec of Object.values(state.witnesses)) {
    const key = hex32(rec.public_key);
    if (key !== undefined) pin(rec.log_origin, key);
  }
  for (const id of identified) {
    const log = logs.get(id.pin.logOrigin);
    if (log !== undefined && log.keyHex === encodeHex(id.pin.publicKey)) log.witness = id;
  }
  return logs;
}

export const peerLabel = (url: string): string => {
  try {
    return `peer ${new URL(url).host}`;
  } catch {
    return `peer ${url}`;
  }
};

/** GET each peer's monitoring endpoint for each pinned origin; the checkpoints that verify. */
export async function readPeers(
  peers: readonly string[],
  logs: ReadonlyMap<string, PinnedLog>,
  http: HttpOptions,
  add: AddFinding,
): Promise<LogView[]> {
  const views: LogView[] = [];
  await Promise.all(
    peers.flatMap((peer) =>
      [...logs.values()].map(async (log) => {
        const source = peerLabel(peer);
        const path = `/${sha256Hex(log.origin)}/checkpoint`;
        let text: string;
        try {
          const res = await httpRequest(joinUrl(peer, path), { maxBytes: RESPONSE_CAPS.checkpoint }, http);
          if (res.status === 404) return; // this peer does not cosign that log
          if (res.status !== 200) throw new ClientError('http_failed', `HTTP ${res.status}`);
          text = res.text;
        } catch (e) {
          add({
            id: `unreachable ${peer} ${log.origin}`,
            kind: 'unreachable',
            severity: 'warning',
            witness: source,
            url: peer,
            message: `${source}: GET ${path} (log ${log.origin}) failed: ${errorText(e)}`,
          });
          return;
        }
        try {
          await verifyCheckpoint(text, [log.verifier], log.origin);
        } catch (e) {
          add({
            id: `invalid ${peer} ${log.origin}`,
            kind: 'invalid_response',
            severity: 'alert',
            witness: source,
            url: peer,
            message: `${source}: its checkpoint of log ${log.origin} does not verify under the pinned log key: ${errorText(e)}`,
            evidence: { checkpoint: unverifiedEvidence(text) },
          });
          return;
        }
        views.push({ source, note: text, keyHex: log.keyHex, origin: log.origin });
      }),
    ),
  );
  return views;
}

/**
 * A peer's checkpoint of another size than the log's own published one (this poll): consistency
 * between the two, computed from the log's tiles. Proven inconsistent → `log_equivocation` with
 * the proof; tiles that cannot be read or do not match prove nothing here (the log's own checks
 * report its tiles).
 */
export async function crossConsistency(
  views: readonly LogView[],
  logs: ReadonlyMap<string, PinnedLog>,
  http: HttpOptions,
  add: AddFinding,
): Promise<void> {
  await Promise.all(
    views.map(async (view) => {
      const log = logs.get(view.origin);
      const own = log?.witness?.published;
      if (log?.witness === undefined || own === undefined || log.keyHex !== view.keyHex) return;
      const peer = (await verifyCheckpoint(view.note, [log.verifier], log.origin)).checkpoint;
      if (peer.size === own.checkpoint.size) return; // same size: splitViews compares the roots
      const [older, newer]: [{ note: string; cp: Checkpoint; from: string }, { note: string; cp: Checkpoint; from: string }] =
        peer.size < own.checkpoint.size
          ? [
              { note: view.note, cp: peer, from: view.source },
              { note: own.note, cp: own.checkpoint, from: log.witness.name },
            ]
          : [
              { note: own.note, cp: own.checkpoint, from: log.witness.name },
              { note: view.note, cp: peer, from: view.source },
            ];
      let check;
      try {
        check = await checkConsistencyFromTiles(older.cp, newer.cp, httpTiles(log.witness.url, http));
      } catch {
        return;
      }
      if (check.status !== 'inconsistent') return;
      add({
        id: `log_equivocation ${log.origin} ${older.cp.size} ${encodeBase64(older.cp.rootHash)} ${newer.cp.size} ${encodeBase64(newer.cp.rootHash)}`,
        kind: 'log_equivocation',
        severity: 'alert',
        witness: `${older.from},${newer.from}`,
        message: `log ${log.origin}: ${older.from} shows size ${older.cp.size} and ${newer.from} size ${newer.cp.size}, both signed by its log key, and the larger does not extend the smaller (proven from the tiles of ${log.witness.name})`,
        evidence: {
          v: LOG_EQUIVOCATION_V,
          origin: log.origin,
          a: older.note,
          b: newer.note,
          old_root_from_tiles: encodeBase64(check.evidence.oldRootFromTiles),
          consistency_proof: check.evidence.proof.map(encodeBase64),
        },
      });
    }),
  );
}

/** Keep the peers' checkpoints in the state: one per (peer, origin, size), both when two conflict. */
export function keepPeerViews(state: MonitorState, views: readonly LogView[], parse: (note: string) => Checkpoint | undefined): void {
  const kept: PeerCheckpoint[] = [];
  const seen = new Map<string, Uint8Array[]>();
  for (const p of [...(state.peer_checkpoints ?? []), ...views.map((v) => ({ peer: v.source, public_key: v.keyHex, note: v.note }))]) {
    const cp = parse(p.note);
    if (cp === undefined) continue;
    const key = `${p.peer} ${p.public_key} ${cp.origin} ${cp.size}`;
    const roots = seen.get(key) ?? [];
    if (roots.length >= 2 || roots.some((r) => Buffer.compare(r, cp.rootHash) === 0)) continue;
    roots.push(cp.rootHash);
    seen.set(key, roots);
    kept.push(p);
  }
  state.peer_checkpoints = kept.slice(-MAX_PEER_CHECKPOINTS);
}
