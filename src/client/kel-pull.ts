/**
 * `anchor-witness kel pull` (SPEC §3.6.8): fetch a prefix's KEL from KERI witnesses
 * (`GET /query?typ=kel&pre=P&sn=0`) under §6.2's client rules — `https://` (`http://` on loopback),
 * 30 s, at most 2 × `--kel-max-bytes` read, no cross-origin redirect — select and verify each
 * witness's chain (src/keri/kel-pull.ts), and write `<P>.kel.json` into a `dir:` source only when
 * one result supersedes every other result and the file already there. The file is renamed into
 * place (written to a temporary file, fsynced, renamed), so a reader never sees a torn file.
 *
 * A witness that cannot be reached or whose answer does not verify is reported and left out (a
 * hostile witness cannot block the pull by lying); with no usable answer nothing is written.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isLoopbackHost } from '../encoding/host.ts';
import { parseKelDocument } from '../keri/document.ts';
import type { EventType } from '../keri/event.ts';
import { chooseResult, firstDivergence, parseCloneStream, PullError, selectChain, verifyChain, type PullResult } from '../keri/kel-pull.ts';
import { ClientError } from './errors.ts';
import { writeFileAtomic } from './files.ts';
import { httpRequest, type HttpOptions } from './http.ts';
import { UsageError } from '../verify/errors.ts';

export interface KelPullOptions {
  kelMaxBytes: number;
  maxEvents: number;
  http?: HttpOptions;
}

export type KelPullOutcome =
  | { status: 'written'; prefix: string; path: string; sn: number; said: string; from: string }
  | { status: 'unchanged'; prefix: string; path: string; sn: number; said: string }
  | { status: 'divergent'; prefix: string; detail: string }
  | { status: 'unavailable'; prefix: string; detail: string };

/** A note per witness that was left out. */
export type PullNote = (line: string) => void;

/** §6.2 transport rule for a witness URL: https://, or http:// to loopback. */
export function checkPullUrl(url: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError(`not a URL: ${url}`);
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && isLoopbackHost(u.hostname)))
    throw new UsageError(`${url}: https:// is required (http:// only to loopback)`);
  return u;
}

function queryUrl(base: string, prefix: string): string {
  const u = new URL(base);
  const path = u.pathname.endsWith('/') ? u.pathname : `${u.pathname}/`;
  return `${u.origin}${path}query?typ=kel&pre=${encodeURIComponent(prefix)}&sn=0`;
}

/** One witness's verified chain, or why it is left out. */
async function fetchResult(
  base: string,
  prefix: string,
  o: KelPullOptions,
): Promise<{ ok: true; result: PullResult } | { ok: false; why: string }> {
  let text: string;
  try {
    const res = await httpRequest(queryUrl(base, prefix), { maxBytes: 2 * o.kelMaxBytes }, { timeoutMs: 30_000, retries: 1, ...o.http });
    if (res.status !== 200) return { ok: false, why: `HTTP ${res.status}` };
    text = res.text;
  } catch (e) {
    return { ok: false, why: `${e instanceof ClientError ? e.code : 'http_failed'}: ${(e as Error).message}` };
  }
  let chain;
  try {
    chain = selectChain(parseCloneStream(text));
  } catch (e) {
    if (e instanceof PullError) return { ok: false, why: `malformed answer: ${e.message}` };
    throw e;
  }
  if (chain.length > o.maxEvents) return { ok: false, why: `${chain.length} events (at most ${o.maxEvents})` };
  const v = verifyChain(prefix, chain);
  return v.ok ? v : { ok: false, why: `the chain does not verify: ${v.why}` };
}

/** The existing file's SAIDs and types (as written; it was verified when pulled or authored). */
function existingChain(path: string, prefix: string, o: KelPullOptions): { saids: string[]; types: EventType[] } | null | string {
  if (!existsSync(path)) return null;
  const raw = parseKelDocument(readFileSync(path, 'utf8'), path, { maxEvents: o.maxEvents, maxBytes: o.kelMaxBytes });
  if (!('events' in raw) || raw.defect !== undefined || raw.prefix !== prefix) return `${path} is not a readable KEL document of ${prefix}`;
  const saids: string[] = [];
  const types: EventType[] = [];
  for (const e of raw.events) {
    const v = e as { d?: unknown; t?: unknown };
    if (typeof v.d !== 'string' || typeof v.t !== 'string') return `${path}: an event without d or t`;
    saids.push(v.d);
    types.push(v.t as EventType);
  }
  return { saids, types };
}

/** Pull one prefix from `urls` into `out`. */
export async function pullKel(
  prefix: string,
  urls: readonly string[],
  out: string,
  o: KelPullOptions,
  note: PullNote,
): Promise<KelPullOutcome> {
  const path = join(out, `${prefix}.kel.json`);
  const existing = existingChain(path, prefix, o);
  if (typeof existing === 'string') return { status: 'divergent', prefix, detail: existing };
  const results: { url: string; result: PullResult }[] = [];
  for (const url of urls) {
    const r = await fetchResult(url, prefix, o);
    if (r.ok) results.push({ url, result: r.result });
    else note(`${prefix}: ${url} left out: ${r.why}`);
  }
  if (results.length === 0) return { status: 'unavailable', prefix, detail: 'no witness gave a verifying KEL' };
  const chosen = chooseResult(
    results.map((r) => r.result),
    existing,
  );
  if (chosen === null) {
    const lines: string[] = [];
    const all = [
      ...results.map((r) => ({ from: r.url, saids: r.result.saids })),
      ...(existing === null ? [] : [{ from: path, saids: existing.saids }]),
    ];
    for (let i = 0; i < all.length; i++)
      for (let j = i + 1; j < all.length; j++) {
        const d = firstDivergence(all[i]!.saids, all[j]!.saids);
        if (d !== null && d.a !== undefined && d.b !== undefined)
          lines.push(`at sn ${d.sn}: ${all[i]!.from} has ${d.a}, ${all[j]!.from} has ${d.b}`);
      }
    return { status: 'divergent', prefix, detail: lines.join('; ') || 'no result supersedes the others' };
  }
  const from = results.find((r) => r.result === chosen)!.url;
  const sn = chosen.saids.length - 1;
  const said = chosen.saids[sn]!;
  if (existing !== null && existing.saids.length === chosen.saids.length && existing.saids.every((d, j) => chosen.saids[j] === d))
    return { status: 'unchanged', prefix, path, sn, said };
  const doc = { prefix, events: chosen.events, attachments: chosen.attachments };
  mkdirSync(out, { recursive: true });
  writeFileAtomic(path, JSON.stringify(doc) + '\n', 0o644);
  return { status: 'written', prefix, path, sn, said, from };
}
