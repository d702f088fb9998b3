/**
 * Witness-network log lists (`logs/v0`, `--logs-list FILE`): parsed as written, then resolved to
 * origins and Ed25519 keys. Pure except loadLogList; what a list may change in the cosigned set
 * is decided by mergeKnownLogs (logs.ts).
 */
import { readFileSync } from 'node:fs';
import { parseCanonicalSize } from '../note/checkpoint.ts';
import type { NoteVerifier } from '../note/vkey.ts';
import { LogsConfigError } from './errors.ts';
import { MAX_QPD, isValidOrigin, parseLogVkey } from './log-keys.ts';

function listError(message: string): LogsConfigError {
  return new LogsConfigError('invalid_log_list', message);
}

/** One log of a logs/v0 list, as written. */
export interface LogListEntry {
  /** 1-based line number of its `vkey` line. */
  readonly line: number;
  readonly vkey: string;
  /** The `origin` value; undefined when absent or `none` (then the origin is the vkey's name). */
  readonly origin: string | undefined;
  readonly qpd: number | undefined;
  readonly bastion: string | undefined;
  readonly contact: string | undefined;
}

const LIST_HEADER = 'logs/v0';
const LIST_FIELDS = new Set(['origin', 'qpd', 'bastion', 'contact']);

/**
 * Parse a witness-network log list (`logs/v0`). Lines are trimmed; blank lines and `#` comments are
 * skipped; the first line left must be `logs/v0`. Each log starts with `vkey <vkey>`, followed by
 * optional `origin <origin|none>`, `qpd <n>`, `bastion <url|none>`, `contact <text>` lines in any
 * order, each at most once. Other keywords are ignored (forward compatibility, as litewitness's
 * `witnessctl pull-logs` does). Pure. Throws LogsConfigError `invalid_log_list`.
 */
export function parseLogList(text: string): LogListEntry[] {
  const entries: LogListEntry[] = [];
  let header = false;
  let current: { line: number; vkey: string; fields: Map<string, string> } | undefined;
  const flush = (): void => {
    if (current === undefined) return;
    const f = current.fields;
    const originValue = f.get('origin');
    const qpdText = f.get('qpd');
    let qpd: number | undefined;
    if (qpdText !== undefined) {
      const n = parseCanonicalSize(qpdText);
      if (n === null || n < 1 || n > MAX_QPD) throw listError(`line ${current.line}: qpd must be an integer 1..${MAX_QPD}`);
      qpd = n;
    }
    const bastion = f.get('bastion');
    entries.push({
      line: current.line,
      vkey: current.vkey,
      origin: originValue === 'none' ? undefined : originValue,
      qpd,
      bastion: bastion === 'none' ? undefined : bastion,
      contact: f.get('contact'),
    });
    current = undefined;
  };
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    const n = i + 1;
    if (line === '' || line.startsWith('#')) continue;
    if (!header) {
      if (line !== LIST_HEADER) throw listError(`line ${n}: expected the header ${JSON.stringify(LIST_HEADER)}`);
      header = true;
      continue;
    }
    const space = line.search(/\s/);
    const keyword = space < 0 ? line : line.slice(0, space);
    const value = space < 0 ? '' : line.slice(space + 1).trim();
    if (keyword === 'vkey') {
      flush();
      if (value === '' || /\s/.test(value)) throw listError(`line ${n}: expected "vkey <vkey>"`);
      current = { line: n, vkey: value, fields: new Map() };
      continue;
    }
    if (!LIST_FIELDS.has(keyword)) continue;
    if (current === undefined) throw listError(`line ${n}: "${keyword}" before the first "vkey" line`);
    if (value === '') throw listError(`line ${n}: "${keyword}" needs a value`);
    if (current.fields.has(keyword)) throw listError(`line ${n}: "${keyword}" given twice for the log of line ${current.line}`);
    current.fields.set(keyword, value);
  }
  if (!header) throw listError(`missing the header ${JSON.stringify(LIST_HEADER)}`);
  flush();
  return entries;
}

/** A list entry resolved to an origin and a usable key, or the reason it cannot be used. */
export type ResolvedListEntry =
  | { readonly ok: true; readonly origin: string; readonly verifier: NoteVerifier; readonly qpd: number | undefined; readonly line: number }
  | { readonly ok: false; readonly origin: string | undefined; readonly line: number; readonly reason: string };

/** Resolve entries: parse each vkey (Ed25519 only), apply `origin none` = the vkey's name. Pure. */
export function resolveLogList(entries: readonly LogListEntry[]): ResolvedListEntry[] {
  return entries.map((e): ResolvedListEntry => {
    let verifier: NoteVerifier;
    try {
      verifier = parseLogVkey(e.vkey);
    } catch (err) {
      return { ok: false, origin: e.origin, line: e.line, reason: (err as Error).message };
    }
    const origin = e.origin ?? verifier.name;
    if (!isValidOrigin(origin)) return { ok: false, origin, line: e.line, reason: 'invalid origin' };
    return { ok: true, origin, verifier, qpd: e.qpd, line: e.line };
  });
}

/** Read, parse and resolve a logs/v0 list file. */
export function loadLogList(path: string): ResolvedListEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw listError(`${path}: ${(e as Error).message}`);
  }
  try {
    return resolveLogList(parseLogList(text));
  } catch (e) {
    throw listError(`${path}: ${(e as Error).message}`);
  }
}
