/**
 * KEL sources as data (SPEC §3.5 "Sources"), with no I/O: the reader (src/registry… or the CLI)
 * reads the bytes; these functions turn them into a RawKel for evaluateKels.
 *
 * - `dir:` file `<prefix>.kel.json`: `{"prefix": P, "events": [event…], "attachments": [string…]}`,
 *   `tip` and `source` (written by upstream `readKelJson`) allowed and ignored, nothing else;
 *   each attachment is CESR text (starts with `-`) or its hex.
 * - `git:` per-event blobs `events/<seq>.json` and `events/<seq>.attachments.cesr`.
 *
 * Once the prefix is known, a defective source still yields a RawKel (with `defect`), so that
 * evaluateKels refuses it while the prefix's last accepted state stays in force. Only a document
 * whose prefix cannot be read at all is returned as a bare failure; the reader then knows the
 * prefix from the file name and passes `defectiveKel(…)` instead.
 */
import { sha256Hex } from '../crypto/sha256.ts';
import { isJsonObject, parseStrictJson } from '../encoding/json.ts';
import { KelError, type KelReason } from './errors.ts';
import { attachmentText } from './attachments.ts';
import type { KelLimits, RawKel } from './types.ts';

const DOCUMENT_MEMBERS = new Set(['prefix', 'events', 'attachments', 'tip', 'source']);
/** A qb64 identifier prefix as it may appear in a file or ref name (SPEC §3.5: `^[A-Za-z0-9_-]{44}$`). */
export const PREFIX_PATTERN = /^[A-Za-z0-9_-]{44}$/;

const utf8 = new TextEncoder();

export type KelSourceFailure = { prefix: string | null; reason: KelReason; detail: string };

/** A RawKel that evaluateKels refuses with `reason` (the source could not be read as a KEL). */
export function defectiveKel(prefix: string, source: string, bytes: number, sourceHash: string, reason: KelReason, detail: string): RawKel {
  return { prefix, events: [], attachments: [], bytes, sourceHash, source, defect: { reason, detail } };
}

/**
 * Parse a `dir:` KEL document. `source` labels it in evaluations and logs (e.g. `dir:/path/X.kel.json`).
 * The caller checks that the prefix is the file stem.
 */
export function parseKelDocument(text: string, source: string, limits: KelLimits): RawKel | KelSourceFailure {
  const bytes = utf8.encode(text).length;
  const sourceHash = sha256Hex(text);
  if (bytes > limits.maxBytes) return { prefix: null, reason: 'oversize', detail: `${bytes} bytes (at most ${limits.maxBytes})` };
  let doc: unknown;
  try {
    doc = parseStrictJson(text, { maxDepth: 8 });
  } catch (err) {
    return { prefix: null, reason: 'malformed', detail: `not strict JSON: ${(err as Error).message}` };
  }
  if (!isJsonObject(doc) || typeof doc.prefix !== 'string' || !PREFIX_PATTERN.test(doc.prefix)) {
    return { prefix: null, reason: 'malformed', detail: 'not a KEL document: no "prefix" of 44 qb64 characters' };
  }
  const prefix = doc.prefix;
  const defect = (reason: KelReason, detail: string): RawKel => defectiveKel(prefix, source, bytes, sourceHash, reason, detail);
  const extra = Object.keys(doc).filter((k) => !DOCUMENT_MEMBERS.has(k));
  if (extra.length > 0) return defect('malformed', `unexpected member(s) ${extra.join(', ')}`);
  if (!Array.isArray(doc.events) || !Array.isArray(doc.attachments))
    return defect('malformed', '"events" and "attachments" must be arrays');
  if (doc.events.length > limits.maxEvents) return defect('oversize', `${doc.events.length} events (at most ${limits.maxEvents})`);
  if (doc.attachments.length !== doc.events.length) {
    return defect('malformed', `${doc.events.length} events but ${doc.attachments.length} attachments (one per event)`);
  }
  const attachments: string[] = [];
  for (let j = 0; j < doc.attachments.length; j++) {
    try {
      attachments.push(attachmentText(doc.attachments[j], j));
    } catch (err) {
      return defect('malformed', `attachments[${j}]: ${(err as KelError).message}`);
    }
  }
  return { prefix, events: doc.events, attachments, bytes, sourceHash, source };
}

/** Parse one event blob's text as strict JSON (throws on anything else). */
export const parseEventBlob = (text: string): unknown => parseStrictJson(text, { maxDepth: 8 });

/**
 * Assemble a `git:` KEL from its blobs in sequence order (`events/<seq>.json` text and
 * `events/<seq>.attachments.cesr` text, '' when there is none). The caller checks that the
 * sequence numbers are contiguous from 0 and the blob sizes against limits.maxBytes first.
 * `parse(j)` gives event j's JSON value (default: parseEventBlob of its text; a reader that
 * shares blobs between KELs passes one that parses each blob once).
 */
export function kelFromEventBlobs(
  prefix: string,
  blobs: Array<{ event: string; attachment: string }>,
  source: string,
  limits: KelLimits,
  parse: (j: number) => unknown = (j) => parseEventBlob(blobs[j]!.event),
): RawKel | KelSourceFailure {
  let bytes = 0;
  const hash: string[] = [];
  for (const b of blobs) {
    const e = utf8.encode(b.event).length;
    const a = utf8.encode(b.attachment).length;
    bytes += e + a;
    // Length-prefixed, so that moving bytes between blobs changes the hash.
    hash.push(`${e}:${b.event}${a}:${b.attachment}`);
  }
  const sourceHash = sha256Hex(hash.join(''));
  const defect = (reason: KelReason, detail: string): RawKel => defectiveKel(prefix, source, bytes, sourceHash, reason, detail);
  if (bytes > limits.maxBytes) return defect('oversize', `${bytes} bytes of blobs (at most ${limits.maxBytes})`);
  if (blobs.length > limits.maxEvents) return defect('oversize', `${blobs.length} events (at most ${limits.maxEvents})`);
  const events: unknown[] = [];
  const attachments: string[] = [];
  for (let j = 0; j < blobs.length; j++) {
    const b = blobs[j]!;
    try {
      events.push(parse(j));
    } catch (err) {
      return defect('malformed', `events/${j}: not strict JSON: ${(err as Error).message}`);
    }
    if (b.attachment !== '' && !b.attachment.startsWith('-')) return defect('malformed', `events/${j}: the attachment is not CESR text`);
    attachments.push(b.attachment);
  }
  return { prefix, events, attachments, bytes, sourceHash, source };
}
