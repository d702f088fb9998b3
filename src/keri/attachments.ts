/**
 * The CESR attachment of one event (SPEC §3.5 "Attachments"): `-A` + 2-character count + that
 * many indexed signatures, optionally followed (dip/drt only) by `-G` + count + source-seal
 * couples (a `0A` sequence number and the SAID of the delegator's anchoring event). Nothing else
 * may follow. An empty attachment (git writes none when there is no signature) has no signature.
 *
 * | code | index | ondex (prior `n` index) | length |
 * |------|-------|--------------------------|--------|
 * | `A` `E` | 1 char | = index | 88 |
 * | `B` `F` (current-only) | 1 char | none | 88 |
 * | `2A` `2E` | 2 chars | 2 chars | 92 |
 * | `2B` `2F` (current-only) | 2 chars | 2 chars (ignored) | 92 |
 *
 * The code's curve (A/B Ed25519, E/F P-256) is not checked: the key's type decides the
 * algorithm (upstream emits `A` for P-256 signatures, research §0.4).
 */
import { KelError } from './errors.ts';
import { b64Int, b64IntText, decodeBody, decodeQb64, encodeBody, encodeQb64 } from './qb64.ts';

export type SignatureCode = 'A' | 'B' | 'E' | 'F' | '2A' | '2B' | '2E' | '2F';

export interface IndexedSignature {
  code: SignatureCode;
  /** Index into the signing keys. */
  index: number;
  /** Index into the prior next-key commitments, or null for current-only codes. */
  ondex: number | null;
  /** 64 bytes: Ed25519 R ‖ S, or P-256 r ‖ s. */
  signature: Uint8Array;
}

/** A `-G` couple: the delegator's anchoring event, by sequence number and SAID. */
export interface SourceSeal {
  s: bigint;
  d: string;
}

export interface EventAttachment {
  signatures: IndexedSignature[];
  sourceSeals: SourceSeal[];
}

const CURRENT_ONLY: ReadonlySet<SignatureCode> = new Set(['B', 'F', '2B', '2F']);

function fail(message: string, seq: number | null): never {
  throw new KelError('malformed', `attachment: ${message}`, seq);
}

/** Parse one event's attachment (CESR text). Throws KelError `malformed`. */
export function parseAttachment(text: string, seq: number | null = null): EventAttachment {
  const out: EventAttachment = { signatures: [], sourceSeals: [] };
  if (text === '') return out;
  let pos = 0;
  const take = (n: number, what: string): string => {
    if (pos + n > text.length) fail(`truncated ${what} at offset ${pos}`, seq);
    const s = text.slice(pos, pos + n);
    pos += n;
    return s;
  };
  if (take(2, 'group code') !== '-A') fail('must begin with -A (indexed signatures)', seq);
  const count = b64Int(take(2, 'count'));
  if (count < 0) fail('bad -A count', seq);
  for (let j = 0; j < count; j++) {
    const first = text[pos];
    let code: SignatureCode;
    let index: number;
    let ondex: number | null;
    if (first === 'A' || first === 'B' || first === 'E' || first === 'F') {
      code = first;
      pos += 1;
      index = b64Int(take(1, 'signature index'));
      ondex = code === 'A' || code === 'E' ? index : null;
    } else if (first === '2') {
      const c = take(2, 'signature code');
      if (c !== '2A' && c !== '2B' && c !== '2E' && c !== '2F') fail(`unknown indexed signature code ${c} at offset ${pos - 2}`, seq);
      code = c;
      index = b64Int(take(2, 'signature index'));
      const o = b64Int(take(2, 'signature ondex'));
      ondex = CURRENT_ONLY.has(code) ? null : o;
      if (o < 0) fail('bad signature ondex', seq);
    } else {
      fail(`unknown indexed signature code at offset ${pos}`, seq);
    }
    if (index < 0) fail('bad signature index', seq);
    const signature = decodeBody(take(86, 'signature'), 2, 2, 64);
    if (signature === null) fail(`signature ${j} is not canonical base64url`, seq);
    out.signatures.push({ code, index, ondex, signature });
  }
  if (pos === text.length) return out;
  if (take(2, 'group code') !== '-G') fail(`unexpected data after the signatures at offset ${pos - 2}`, seq);
  const couples = b64Int(take(2, 'count'));
  if (couples < 0) fail('bad -G count', seq);
  for (let j = 0; j < couples; j++) {
    const sn = decodeQb64(take(24, 'source seal sequence number'), ['0A']);
    if (sn === null) fail(`-G couple ${j}: the sequence number is not a canonical 0A number`, seq);
    const d = take(44, 'source seal SAID');
    if (decodeQb64(d, ['E']) === null) fail(`-G couple ${j}: the SAID is not canonical qb64`, seq);
    let s = 0n;
    for (const byte of sn.raw) s = (s << 8n) | BigInt(byte);
    out.sourceSeals.push({ s, d });
  }
  if (pos !== text.length) fail(`unexpected data after the -G group at offset ${pos}`, seq);
  return out;
}

/** Encode indexed signatures (and `-G` couples): the inverse of parseAttachment. */
export function encodeAttachment(attachment: EventAttachment): string {
  let out = `-A${b64IntText(attachment.signatures.length, 2)}`;
  for (const sig of attachment.signatures) {
    const body = encodeBody(sig.signature, 2, 2);
    out +=
      sig.code.length === 1
        ? `${sig.code}${b64IntText(sig.index, 1)}${body}`
        : `${sig.code}${b64IntText(sig.index, 2)}${b64IntText(sig.ondex ?? 0, 2)}${body}`;
  }
  if (attachment.sourceSeals.length > 0) {
    out += `-G${b64IntText(attachment.sourceSeals.length, 2)}`;
    for (const seal of attachment.sourceSeals) {
      const raw = new Uint8Array(16);
      let s = seal.s;
      for (let i = 15; i >= 0; i--) {
        raw[i] = Number(s & 0xffn);
        s >>= 8n;
      }
      out += encodeQb64('0A', raw) + seal.d;
    }
  }
  return out;
}

/**
 * An attachment as a KEL document carries it (SPEC §3.5 dir: source): the CESR text (starts with
 * `-`) or its hex (upstream's readKelJson). Returns the CESR text; throws KelError `malformed`.
 */
export function attachmentText(value: unknown, seq: number | null = null): string {
  if (typeof value !== 'string') fail('must be a string (CESR text or its hex)', seq);
  if (value === '' || value.startsWith('-')) return value;
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(value)) fail('neither CESR text (starting with -) nor hex', seq);
  const text = Buffer.from(value, 'hex').toString('latin1');
  if (!text.startsWith('-') || !/^[\x21-\x7e]*$/.test(text)) fail('hex does not decode to CESR text', seq);
  return text;
}
