/**
 * keripy's CESR 1.0 text attachments as a KERI witness meets them (SPEC §3.6.3): the
 * `CESR-ATTACHMENT` header of `POST /receipts` and `POST /`, strict and bounded.
 *
 * Grammar: an optional `-V` + 2-character count (or `-0V` + 5) of the quadlets that follow, then,
 * in any order, each group at most once:
 *
 * | group | count | item |
 * |-------|-------|------|
 * | `-A` | 1–64 | indexed controller signature (§3.5 codes A B E F 2A 2B 2E 2F) |
 * | `-G` | 1 | `0A` sequence number + `E` SAID (dip/drt only: the caller checks) |
 * | `-B` | ≤ 32 | indexed witness signature (the same codes) |
 * | `-C` | ≤ 32 | `B`/`1AAI` prefix + `0B`/`0I` signature |
 * | `-D` | ≤ 32 | `E`/key prefix + `0A` sn + `E` SAID + indexed signature (ignored) |
 * | `-E` | 1 | `0A` ordinal + `1AAG` date-time (ignored) |
 *
 * Anything else, a wrong count or trailing text is refused (CesrError). Pure: no I/O.
 */
import type { IndexedSignature, SignatureCode, SourceSeal } from './attachments.ts';
import { b64Int, b64IntText, decodeBody, decodeQb64, encodeBody, encodeQb64 } from './qb64.ts';

/** The `CESR-ATTACHMENT` header's bound (SPEC §3.6.7). */
export const MAX_ATTACHMENT_BYTES = 12_288;
export const MAX_CONTROLLER_SIGNATURES = 64;
export const MAX_WITNESS_ITEMS = 32;

export class CesrError extends Error {
  readonly code = 'malformed_cesr';
}

/** A non-transferable receipt couple: the backer's prefix and its signature over the event. */
export interface ReceiptCouple {
  prefix: string;
  signature: Uint8Array;
}

export interface WitnessAttachments {
  /** `-A`, or null when absent. */
  controller: IndexedSignature[] | null;
  /** `-G` couples (at most one). */
  sourceSeals: SourceSeal[];
  /** `-B`: indexed witness signatures (index into the event's backer list). */
  witnesses: IndexedSignature[];
  /** `-C`: non-transferable receipt couples. */
  couples: ReceiptCouple[];
  /** The `-A` group's text (and `-G`'s, after it) as a KEL document stores them. */
  controllerText: string;
  sourceSealText: string;
}

function fail(message: string): never {
  throw new CesrError(message);
}

class Cursor {
  pos = 0;
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  take(n: number, what: string): string {
    if (this.pos + n > this.text.length) fail(`truncated ${what} at offset ${this.pos}`);
    const s = this.text.slice(this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
  count(width: number, what: string): number {
    const v = b64Int(this.take(width, `${what} count`));
    if (v < 0) fail(`bad ${what} count`);
    return v;
  }
  get done(): boolean {
    return this.pos === this.text.length;
  }
}

const SIG_CODES_1: ReadonlySet<string> = new Set(['A', 'B', 'E', 'F']);
const SIG_CODES_2: ReadonlySet<string> = new Set(['2A', '2B', '2E', '2F']);
const CURRENT_ONLY: ReadonlySet<string> = new Set(['B', 'F', '2B', '2F']);

function signatureBody(c: Cursor, what: string): Uint8Array {
  const sig = decodeBody(c.take(86, what), 2, 2, 64);
  if (sig === null) fail(`${what} is not canonical base64url`);
  return sig;
}

function indexedSignature(c: Cursor): IndexedSignature {
  const first = c.text[c.pos];
  if (first !== undefined && SIG_CODES_1.has(first)) {
    c.pos += 1;
    const index = b64Int(c.take(1, 'signature index'));
    if (index < 0) fail('bad signature index');
    const code = first as SignatureCode;
    return { code, index, ondex: CURRENT_ONLY.has(code) ? null : index, signature: signatureBody(c, 'signature') };
  }
  const two = c.take(2, 'signature code');
  if (!SIG_CODES_2.has(two)) fail(`unknown indexed signature code at offset ${c.pos - 2}`);
  const index = b64Int(c.take(2, 'signature index'));
  const ondex = b64Int(c.take(2, 'signature ondex'));
  if (index < 0 || ondex < 0) fail('bad signature index');
  const code = two as SignatureCode;
  return { code, index, ondex: CURRENT_ONLY.has(code) ? null : ondex, signature: signatureBody(c, 'signature') };
}

function couple(c: Cursor): ReceiptCouple {
  const p256 = c.text.startsWith('1AAI', c.pos);
  const prefix = c.take(p256 ? 48 : 44, 'receipt prefix');
  if (decodeQb64(prefix, ['B', '1AAI']) === null) fail('a -C prefix must be a canonical B/1AAI non-transferable prefix');
  const code = c.take(2, 'receipt signature code');
  if (code !== '0B' && code !== '0I') fail(`unknown receipt signature code ${code}`);
  return { prefix, signature: signatureBody(c, 'receipt signature') };
}

function sequenceNumber(c: Cursor, what: string): bigint {
  const m = decodeQb64(c.take(24, what), ['0A']);
  if (m === null) fail(`${what} is not a canonical 0A number`);
  let s = 0n;
  for (const byte of m.raw) s = (s << 8n) | BigInt(byte);
  return s;
}

function said(c: Cursor, what: string): string {
  const d = c.take(44, what);
  if (decodeQb64(d, ['E']) === null) fail(`${what} is not a canonical E digest`);
  return d;
}

const DATER = /^1AAG\d{4}-\d\d-\d\dT\d\dc\d\dc\d\dd\d{6}p\d\dc\d\d$/;

/**
 * Parse a `CESR-ATTACHMENT` value. `requireController`: `-A` must be present (`POST /receipts`).
 * Throws CesrError (`malformed_cesr`).
 */
export function parseWitnessAttachments(text: string, requireController: boolean): WitnessAttachments {
  if (text.length > MAX_ATTACHMENT_BYTES) fail(`the attachment is ${text.length} bytes (at most ${MAX_ATTACHMENT_BYTES})`);
  if (!/^[\x21-\x7e]*$/.test(text)) fail('the attachment must be printable ASCII');
  const c = new Cursor(text);
  if (text.startsWith('-V') || text.startsWith('-0V')) {
    const big = text.startsWith('-0V');
    c.pos = big ? 3 : 2;
    const quadlets = c.count(big ? 5 : 2, '-V');
    if (text.length - c.pos !== quadlets * 4) fail(`-V counts ${quadlets} quadlets, ${(text.length - c.pos) / 4} follow`);
  }
  const out: WitnessAttachments = { controller: null, sourceSeals: [], witnesses: [], couples: [], controllerText: '', sourceSealText: '' };
  const seen = new Set<string>();
  while (!c.done) {
    const start = c.pos;
    const group = c.take(2, 'group code');
    if (seen.has(group)) fail(`group ${group} appears twice`);
    seen.add(group);
    switch (group) {
      case '-A': {
        const n = c.count(2, '-A');
        if (n < 1 || n > MAX_CONTROLLER_SIGNATURES) fail(`-A counts ${n} signatures (1 to ${MAX_CONTROLLER_SIGNATURES})`);
        out.controller = [];
        for (let j = 0; j < n; j++) out.controller.push(indexedSignature(c));
        out.controllerText = text.slice(start, c.pos);
        break;
      }
      case '-G': {
        if (c.count(2, '-G') !== 1) fail('-G must count exactly one couple');
        const s = sequenceNumber(c, '-G sequence number');
        out.sourceSeals.push({ s, d: said(c, '-G SAID') });
        out.sourceSealText = text.slice(start, c.pos);
        break;
      }
      case '-B': {
        const n = c.count(2, '-B');
        if (n > MAX_WITNESS_ITEMS) fail(`-B counts ${n} signatures (at most ${MAX_WITNESS_ITEMS})`);
        for (let j = 0; j < n; j++) out.witnesses.push(indexedSignature(c));
        break;
      }
      case '-C': {
        const n = c.count(2, '-C');
        if (n > MAX_WITNESS_ITEMS) fail(`-C counts ${n} couples (at most ${MAX_WITNESS_ITEMS})`);
        for (let j = 0; j < n; j++) out.couples.push(couple(c));
        break;
      }
      case '-D': {
        const n = c.count(2, '-D');
        if (n > MAX_WITNESS_ITEMS) fail(`-D counts ${n} quadruples (at most ${MAX_WITNESS_ITEMS})`);
        for (let j = 0; j < n; j++) {
          said(c, '-D prefix');
          sequenceNumber(c, '-D sequence number');
          said(c, '-D SAID');
          indexedSignature(c);
        }
        break;
      }
      case '-E': {
        if (c.count(2, '-E') !== 1) fail('-E must count exactly one couple');
        sequenceNumber(c, '-E ordinal');
        if (!DATER.test(c.take(36, '-E date-time'))) fail('-E date-time is not a 1AAG Dater');
        break;
      }
      default:
        fail(`unexpected group ${JSON.stringify(group)} at offset ${start}`);
    }
  }
  if (requireController && out.controller === null) fail('the attachment has no -A group (controller signatures)');
  return out;
}

// ---------------------------------------------------------------- writers

const utf8 = new TextEncoder();

/** keripy's `rct` message for an event: compact JSON `{v,t,d,i,s}`. */
export function receiptMessage(prefix: string, s: string, said: string): string {
  const body = (v: string): string => JSON.stringify({ v, t: 'rct', d: said, i: prefix, s });
  const size = utf8.encode(body('KERI10JSON000000_')).length;
  return body(`KERI10JSON${size.toString(16).padStart(6, '0')}_`);
}

/** `-C` + count + (prefix + `0B` signature) per couple. */
export function coupleGroup(couples: readonly ReceiptCouple[]): string {
  let out = `-C${b64IntText(couples.length, 2)}`;
  for (const c of couples) out += `${c.prefix}0B${encodeBody(c.signature, 2, 2)}`;
  return out;
}

/** `-B` + count + `A` + 1-character index + signature per receipt, in index order; '' when none. */
export function witnessSignatureGroup(receipts: readonly { index: number; signature: Uint8Array }[]): string {
  if (receipts.length === 0) return '';
  const sorted = [...receipts].sort((a, b) => a.index - b.index);
  let out = `-B${b64IntText(sorted.length, 2)}`;
  for (const r of sorted) out += `A${b64IntText(r.index, 1)}${encodeBody(r.signature, 2, 2)}`;
  return out;
}

/** keripy's Dater text (`1AAG` + the time with `:`→`c`, `.`→`d`, `+`→`p`). */
export function daterText(iso: string): string {
  return `1AAG${iso.replaceAll(':', 'c').replaceAll('.', 'd').replaceAll('+', 'p')}`;
}

/** The inverse of daterText. */
export function daterIso(text: string): string {
  if (!DATER.test(text)) throw new CesrError('not a 1AAG Dater');
  return text.slice(4).replaceAll('c', ':').replaceAll('d', '.').replaceAll('p', '+');
}

/** keripy's first-seen couple: `-EAB` + `0A` ordinal + Dater. */
export function firstSeenGroup(ordinal: number, iso: string): string {
  const raw = new Uint8Array(16);
  let v = BigInt(ordinal);
  for (let i = 15; i >= 0; i--) {
    raw[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return `-EAB${encodeQb64('0A', raw)}${daterText(iso)}`;
}

/** `-V` (or `-0V`) + the quadlet count of `attachments`, then `attachments`. */
export function pipelined(attachments: string): string {
  if (attachments.length % 4 !== 0) throw new RangeError('attachments are not whole quadlets');
  const q = attachments.length / 4;
  return (q < 64 * 64 ? `-V${b64IntText(q, 2)}` : `-0V${b64IntText(q, 5)}`) + attachments;
}

/** A time as keripy stamps it: `YYYY-MM-DDTHH:MM:SS.ffffff+00:00` (microseconds from the ms clock). */
export function keriTimestamp(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 23)}000+00:00`;
}
