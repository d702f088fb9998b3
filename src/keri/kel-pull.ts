/**
 * `anchor-witness kel pull` as data (SPEC §3.6.8), no I/O: read a witness's GET /query?typ=kel
 * answer (keripy `cloneEvtMsg` stream), select the first-seen chain, verify it by §3.5 rules 1–7,
 * and decide which of several results (and the existing `dir:` file) supersedes the others.
 *
 * * Chain: at sn 0 the last inception at sn 0; at each later sn the last event whose `p` is the SAID
 *   chosen at sn − 1 (keripy's stream also carries superseded events).
 * * Attachments: each event's `-A` group, then its `-G` group if any; `-V`, `-B`, `-C`, `-D`, `-E`
 *   are dropped, so the document is a valid `dir:` entry (§3.5 Attachments).
 * * Supersedes: A supersedes B when B's SAIDs are a prefix of A's, or A is a recovery over B's tip
 *   (history.ts isRecovery: a `rot` after B's last establishment event, KEL begun by `icp`).
 */
import { parseStrictJson, isJsonObject } from '../encoding/json.ts';
import { CesrError, parseWitnessAttachments } from './cesr-attachments.ts';
import type { EventType } from './event.ts';
import { isRecovery, type KelTipRef } from './history.ts';
import { parseEvents } from './parse-kel.ts';
import type { RawKel } from './types.ts';
import { verifyRange } from './verify.ts';

/** One event of the stream as received. */
export interface StreamEvent {
  value: Record<string, unknown>;
  said: string;
  sn: number;
  p: string | undefined;
  t: string;
  /** `-A` then `-G` (what a `dir:` file keeps). */
  attachment: string;
}

export class PullError extends Error {}

const VERSION = /^\{"v":"KERI10JSON([0-9a-f]{6})_"/;

/** Split a cloneEvtMsg stream into events (strict: every message a KEL event, every attachment group framed by -V). */
export function parseCloneStream(text: string): StreamEvent[] {
  const out: StreamEvent[] = [];
  let pos = 0;
  while (pos < text.length) {
    const m = VERSION.exec(text.slice(pos, pos + 32));
    if (m === null) throw new PullError(`offset ${pos}: not a KERI10JSON message`);
    const size = Number.parseInt(m[1]!, 16);
    if (pos + size > text.length) throw new PullError(`offset ${pos}: a message of ${size} bytes is truncated`);
    const raw = text.slice(pos, pos + size);
    pos += size;
    let value: unknown;
    try {
      value = parseStrictJson(raw, { maxDepth: 8 });
    } catch (e) {
      throw new PullError(`offset ${pos - size}: ${(e as Error).message}`);
    }
    if (!isJsonObject(value) || typeof value.d !== 'string' || typeof value.s !== 'string' || typeof value.t !== 'string')
      throw new PullError(`offset ${pos - size}: not a key event`);
    if (!/^(?:0|[1-9a-f][0-9a-f]{0,12})$/.test(value.s)) throw new PullError(`offset ${pos - size}: s is not hex`);
    // The attachments: -V + count (or -0V + 5) and that many quadlets.
    let head: number;
    if (text.startsWith('-V', pos)) head = 4;
    else if (text.startsWith('-0V', pos)) head = 8;
    else throw new PullError(`offset ${pos}: the event has no -V attachment group`);
    const quadlets = b64Count(text.slice(pos + (head === 4 ? 2 : 3), pos + head));
    const end = pos + head + quadlets * 4;
    if (end > text.length) throw new PullError(`offset ${pos}: the attachment group is truncated`);
    let att;
    try {
      att = parseWitnessAttachments(text.slice(pos, end), false);
    } catch (e) {
      if (e instanceof CesrError) throw new PullError(`offset ${pos}: ${e.message}`);
      throw e;
    }
    pos = end;
    out.push({
      value,
      said: value.d,
      sn: Number.parseInt(value.s, 16),
      p: typeof value.p === 'string' ? value.p : undefined,
      t: value.t,
      attachment: att.controllerText + att.sourceSealText,
    });
  }
  return out;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function b64Count(text: string): number {
  let v = 0;
  for (const ch of text) {
    const i = B64.indexOf(ch);
    if (i < 0) throw new PullError(`bad -V count ${JSON.stringify(text)}`);
    v = v * 64 + i;
  }
  return v;
}

/** The first-seen chain of a stream: at each sn the last event chaining to the one chosen before. */
export function selectChain(events: readonly StreamEvent[]): StreamEvent[] {
  const chain: StreamEvent[] = [];
  for (let sn = 0; ; sn++) {
    const prior = chain[sn - 1]?.said;
    let pick: StreamEvent | undefined;
    for (const e of events) {
      if (e.sn !== sn) continue;
      if (sn === 0 ? e.p === undefined : e.p === prior) pick = e;
    }
    if (pick === undefined) return chain;
    chain.push(pick);
  }
}

/** A verified result: the chain as a `dir:` document and what supersession needs. */
export interface PullResult {
  prefix: string;
  events: Record<string, unknown>[];
  attachments: string[];
  saids: string[];
  types: EventType[];
}

/** Rules 1–7 over a chain (null: verified; else the reason). */
export function verifyChain(prefix: string, chain: readonly StreamEvent[]): { ok: true; result: PullResult } | { ok: false; why: string } {
  if (chain.length === 0) return { ok: false, why: 'no inception in the answer' };
  const raw: RawKel = {
    prefix,
    events: chain.map((e) => e.value),
    attachments: chain.map((e) => e.attachment),
    bytes: 0,
    sourceHash: '',
    source: 'kel pull',
  };
  const parsed = parseEvents(raw, 0, null);
  if (!parsed.ok) return { ok: false, why: `${parsed.reason} at ${String(parsed.seq)}: ${parsed.detail}` };
  const walk = verifyRange(prefix, parsed.events, 0, null);
  if (!walk.ok) return { ok: false, why: `${walk.reason} at ${String(walk.seq)}: ${walk.detail}` };
  return {
    ok: true,
    result: {
      prefix,
      events: chain.map((e) => e.value),
      attachments: chain.map((e) => e.attachment),
      saids: chain.map((e) => e.said),
      types: parsed.events.map((e) => e.event.t),
    },
  };
}

/** The tip of a result with its last establishment event (what isRecovery compares against). */
function tipRef(r: Pick<PullResult, 'saids' | 'types'>): KelTipRef {
  let est = r.types.length - 1;
  while (est > 0 && r.types[est] === 'ixn') est--;
  return { s: r.saids.length - 1, d: r.saids[r.saids.length - 1]!, estS: est, estD: r.saids[est]! };
}

/** Whether `a` supersedes `b`: b is a prefix of a, or a is a recovery over b. */
export function supersedes(a: Pick<PullResult, 'saids' | 'types'>, b: Pick<PullResult, 'saids' | 'types'>): boolean {
  if (b.saids.length <= a.saids.length && b.saids.every((d, j) => a.saids[j] === d)) return true;
  return isRecovery({ saids: a.saids, types: a.types }, tipRef(b));
}

/**
 * The result that supersedes every other result and the existing file, or null (divergence: then
 * nothing may be written). Among equal results the first is returned.
 */
export function chooseResult(results: readonly PullResult[], existing: Pick<PullResult, 'saids' | 'types'> | null): PullResult | null {
  for (const r of results) {
    if (existing !== null && !supersedes(r, existing)) continue;
    if (results.every((o) => supersedes(r, o))) return r;
  }
  return null;
}

/** Where two SAID lists first differ (for the divergence report). */
export function firstDivergence(
  a: readonly string[],
  b: readonly string[],
): { sn: number; a: string | undefined; b: string | undefined } | null {
  const n = Math.max(a.length, b.length);
  for (let j = 0; j < n; j++) if (a[j] !== b[j]) return { sn: j, a: a[j], b: b[j] };
  return null;
}
