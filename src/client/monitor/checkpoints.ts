/**
 * A witness's log, checkpoint by checkpoint: each one verified under the pinned key and checked
 * against the high-water mark (rollback, or consistency proven from the log's tiles), and every
 * signed checkpoint seen compared by size with every other of the same log (a split view).
 */
import { encodeBase64 } from '../../encoding/base64.ts';
import { encodeHex } from '../../encoding/hex.ts';
import { parseCheckpoint, type Checkpoint } from '../../note/checkpoint.ts';
import { parseNote } from '../../note/signed-note.ts';
import { ed25519NoteVerifier, type NoteVerifier } from '../../note/vkey.ts';
import { checkConsistencyFromTiles, httpTiles } from '../consistency.ts';
import { ClientError } from '../errors.ts';
import { httpRequest, joinUrl, RESPONSE_CAPS, type HttpOptions } from '../http.ts';
import { verifyCheckpoint, verifyCosignedCheckpoint } from '../../verify/note.ts';
import { LOG_EQUIVOCATION_V } from '../../verify/log-equivocation.ts';
import { errorText, unverifiedEvidence, type AddFinding } from './findings.ts';
import type { Identified } from './identify.ts';
import { keepPeerViews, type LogView } from './log-views.ts';
import { sameBytes, type MonitorState, type WitnessRecord } from './state.ts';

/** Signed checkpoints kept per witness for split-view detection (smallest sizes dropped first). */
const MAX_CHECKPOINTS = 128;

/** What a witness's published checkpoint must carry (SPEC §4.1): cosignatures of `quorum` of `cosigners`. */
export interface LogQuorum {
  cosigners: readonly NoteVerifier[];
  quorum?: number;
}

/** The log: verify the checkpoint and check it against the high-water one. Returns the size. */
export async function checkLog(
  id: Identified,
  record: WitnessRecord,
  http: HttpOptions,
  add: AddFinding,
  witnessed?: LogQuorum,
): Promise<number | undefined> {
  let text: string;
  try {
    const res = await httpRequest(joinUrl(id.url, '/log/checkpoint'), { maxBytes: RESPONSE_CAPS.checkpoint }, http);
    if (res.status !== 200) throw new ClientError('http_failed', `HTTP ${res.status}`);
    text = res.text;
  } catch (e) {
    add({
      id: `unreachable ${id.url} checkpoint`,
      kind: 'unreachable',
      severity: 'warning',
      witness: id.name,
      message: `${id.name}: GET /log/checkpoint failed: ${errorText(e)}`,
    });
    return undefined;
  }
  let cp: Checkpoint;
  try {
    // During a rotation overlap a line by either the pinned key or the announced next key counts.
    const keys = [id.pin.publicKey, ...(id.next === undefined ? [] : [id.next])];
    cp = (
      await verifyCheckpoint(
        text,
        keys.map((k) => ed25519NoteVerifier(id.pin.logOrigin, k)),
        id.pin.logOrigin,
      )
    ).checkpoint;
  } catch (e) {
    add({
      id: `invalid ${id.name} checkpoint`,
      kind: 'invalid_response',
      severity: 'alert',
      witness: id.name,
      message: `${id.name}: its checkpoint does not verify under the pinned key: ${errorText(e)}`,
      evidence: { checkpoint: unverifiedEvidence(text) },
    });
    return undefined;
  }
  id.seen.push(text);
  id.published = { note: text, checkpoint: cp };
  if (witnessed !== undefined) await checkWitnessed(id, text, witnessed, add);
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
    add({
      id: `tiles ${id.name} ${prev.size} ${cp.size}`,
      subject: `tiles unreadable ${id.name}`,
      kind: 'tiles_mismatch',
      severity: 'warning',
      witness: id.name,
      message: `${id.name}: cannot read the tiles for ${prev.size} → ${cp.size}: ${errorText(e)}`,
    });
    return cp.size;
  }
  if (check.status === 'consistent') {
    record.checkpoint = text;
  } else if (check.status === 'tiles_mismatch') {
    add({
      id: `tiles ${id.name} ${cp.size} ${encodeBase64(cp.rootHash)}`,
      kind: 'tiles_mismatch',
      severity: 'alert',
      witness: id.name,
      message: `${id.name}: the tiles it serves do not match its checkpoint of size ${cp.size}: ${check.reason}`,
    });
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

/**
 * The published checkpoint carries the quorum (the client's verifyCosignedCheckpoint under the
 * pinned log key and the given cosigners), else `log_unwitnessed`: a log served without its
 * witnesses' cosignatures can show different trees to different clients.
 */
async function checkWitnessed(id: Identified, text: string, witnessed: LogQuorum, add: AddFinding): Promise<void> {
  try {
    await verifyCosignedCheckpoint(text, {
      cosigners: witnessed.cosigners,
      log: [ed25519NoteVerifier(id.pin.logOrigin, id.pin.publicKey)],
      ...(witnessed.quorum !== undefined ? { quorum: witnessed.quorum } : {}),
    });
  } catch (e) {
    add({
      id: `log_unwitnessed ${id.name}`,
      kind: 'log_unwitnessed',
      severity: 'alert',
      witness: id.name,
      url: id.url,
      message: `${id.name}: its published checkpoint lacks the cosigner quorum: ${errorText(e)}`,
      evidence: { checkpoint: text },
    });
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
export function splitViews(
  identified: readonly Identified[],
  state: MonitorState,
  add: AddFinding,
  peerViews: readonly LogView[] = [],
): void {
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
    for (const note of [...(rec.checkpoints ?? []), ...(rec.checkpoint === undefined ? [] : [rec.checkpoint])])
      put(`${rec.public_key} ${rec.log_origin}`, name, note, rec.log_origin);
  }
  for (const id of identified)
    for (const note of id.seen) put(`${encodeHex(id.pin.publicKey)} ${id.pin.logOrigin}`, id.name, note, id.pin.logOrigin);
  for (const p of state.peer_checkpoints ?? []) {
    const origin = parse(p.note)?.origin;
    if (origin !== undefined) put(`${p.public_key} ${origin}`, p.peer, p.note, origin);
  }
  for (const v of peerViews) put(`${v.keyHex} ${v.origin}`, v.source, v.note, v.origin);
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
  keepPeerViews(state, peerViews, parse);
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
