/**
 * Witness-network log lists, format `logs/v0` (SPEC §5.5; transparency-dev/witness-network
 * log-list-format.md). Pure: text in, entries and the reasons for skipped entries out; what a list
 * may change in the cosigned set is decided by planListImport (list-merge.ts).
 *
 *   logs/v0
 *   vkey <vkey>              starts an entry
 *   origin <origin>          optional; default: the vkey's key name
 *   qpd <n>                  required: canonical decimal, 1 ≤ n < 2^31
 *   contact <text>           optional
 *
 * Lines are trimmed; blank and `#` lines are skipped; the first other line must be `logs/v0`, else
 * the whole list is refused (`invalid_log_list`). Other keys are ignored, as are lines before the
 * first `vkey`. Anything else wrong with an entry skips that entry only.
 */
import { LogsConfigError, type LogListSkipCode } from './errors.ts';
import { isValidOrigin } from './log-keys.ts';

/** The first line of a list. */
export const LIST_HEADER = 'logs/v0';
/** qpd values are below 2^31 (the format's range). */
export const LIST_QPD_LIMIT = 2 ** 31;

/** Who may not appear in a list, and how long an origin may be. */
export interface LogListRules {
  /** This node's own log origin (a witness does not cosign its own log). */
  readonly ownOrigin?: string | undefined;
  /** The witness name. */
  readonly witnessName?: string | undefined;
  /** Longest origin in bytes (255 with an ML-DSA-44 cosign key: subtree/v1 has a 1-byte length). */
  readonly maxOriginBytes?: number | undefined;
}

/** One usable-looking entry (its vkey is checked later: parsing keys is the costly part). */
export interface LogListEntry {
  /** 1-based line number of its `vkey` line. */
  readonly line: number;
  readonly vkey: string;
  /** The `origin` value, or the vkey's key name. */
  readonly origin: string;
  readonly qpd: number;
  readonly contact: string | undefined;
}

export interface SkippedListEntry {
  readonly line: number;
  /** The entry's origin when it has one. */
  readonly origin: string | undefined;
  readonly code: LogListSkipCode;
  readonly message: string;
}

export interface ParsedLogList {
  readonly entries: LogListEntry[];
  readonly skipped: SkippedListEntry[];
}

const FIELDS = new Set(['origin', 'qpd', 'contact']);
const QPD_RE = /^[1-9][0-9]{0,9}$/;

/** The key name of a vkey (everything before its first `+`); undefined without one. */
export function vkeyName(vkey: string): string | undefined {
  const i = vkey.indexOf('+');
  return i <= 0 ? undefined : vkey.slice(0, i);
}

interface Pending {
  line: number;
  vkey: string;
  fields: Map<string, string>;
  duplicate: string | undefined;
}

function finish(p: Pending, rules: LogListRules): LogListEntry | SkippedListEntry {
  const given = p.fields.get('origin');
  const name = vkeyName(p.vkey);
  const origin = given ?? name;
  const skip = (code: LogListSkipCode, message: string): SkippedListEntry => ({ line: p.line, origin, code, message });
  if (p.duplicate !== undefined) return skip('duplicate_field', `"${p.duplicate}" given twice`);
  if (p.vkey === '' || /\s/.test(p.vkey) || name === undefined) return skip('invalid_vkey', 'expected "vkey <name>+<key ID>+<key>"');
  if (origin === undefined || !isValidOrigin(origin)) return skip('invalid_origin', 'the origin is empty or has control characters');
  const qpdText = p.fields.get('qpd');
  if (qpdText === undefined) return skip('missing_qpd', 'no qpd line');
  const qpd = QPD_RE.test(qpdText) ? Number(qpdText) : NaN;
  if (!(qpd >= 1 && qpd < LIST_QPD_LIMIT))
    return skip('invalid_qpd', `qpd ${JSON.stringify(qpdText)} is not a canonical integer 1..2^31−1`);
  if (rules.ownOrigin !== undefined && origin === rules.ownOrigin) return skip('own_origin', "this node's own log origin");
  if (rules.witnessName !== undefined && origin === rules.witnessName) return skip('witness_name', 'the origin is the witness name');
  const bytes = Buffer.byteLength(origin, 'utf8');
  if (rules.maxOriginBytes !== undefined && bytes > rules.maxOriginBytes) {
    return skip('origin_too_long', `the origin is ${bytes} bytes; ML-DSA-44 cosignatures allow ${rules.maxOriginBytes}`);
  }
  return { line: p.line, vkey: p.vkey, origin, qpd, contact: p.fields.get('contact') };
}

/**
 * Parse a logs/v0 list. Throws LogsConfigError `invalid_log_list` only when the header is wrong or
 * missing; every other problem skips one entry (`skipped`, in line order).
 */
export function parseLogList(text: string, rules: LogListRules = {}): ParsedLogList {
  const entries: LogListEntry[] = [];
  const skipped: SkippedListEntry[] = [];
  let header = false;
  let current: Pending | undefined;
  const flush = (): void => {
    if (current === undefined) return;
    const r = finish(current, rules);
    if ('code' in r) skipped.push(r);
    else entries.push(r);
    current = undefined;
  };
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (!header) {
      if (line !== LIST_HEADER) {
        throw new LogsConfigError('invalid_log_list', `line ${i + 1}: expected the header ${JSON.stringify(LIST_HEADER)}`);
      }
      header = true;
      continue;
    }
    const space = line.search(/\s/);
    const key = space < 0 ? line : line.slice(0, space);
    const value = space < 0 ? '' : line.slice(space + 1).trim();
    if (key === 'vkey') {
      flush();
      current = { line: i + 1, vkey: value, fields: new Map(), duplicate: undefined };
      continue;
    }
    if (current === undefined || !FIELDS.has(key)) continue;
    if (current.fields.has(key)) current.duplicate ??= key;
    else current.fields.set(key, value);
  }
  if (!header) throw new LogsConfigError('invalid_log_list', `missing the header ${JSON.stringify(LIST_HEADER)}`);
  flush();
  return { entries, skipped };
}
