/**
 * Shared pieces of the reliability suites (test/reliability): the profile (default or long), the
 * figures each suite reports, the set of documented problem codes, percentiles, and HTTP clients
 * bound to several loopback addresses (the per-IP connection cap is 64, and all of 127.0.0.0/8 is
 * loopback on Linux).
 *
 * Profiles: the default is bounded so the whole reliability folder runs in a few minutes on a
 * 2-core machine (it is also part of `npm test`); `REL_PROFILE=long` (`npm run test:reliability:long`)
 * multiplies the fuzzing and the fault counts.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

export const LONG = process.env.REL_PROFILE === 'long';

export const PROFILE = {
  name: LONG ? 'long' : 'default',
  /** multiplier of the fuzzing run counts (REL_FUZZ overrides, e.g. 0.1 for a quick look) */
  fuzz: Number(process.env.REL_FUZZ ?? (LONG ? 10 : 1)),
  /** SIGKILL cycles of the crash loop */
  crashCycles: Number(process.env.REL_CRASH_CYCLES ?? (LONG ? 60 : 20)),
  /** concurrent slow sockets */
  slowSockets: LONG ? 2_000 : 1_000,
  /** seconds of sustained overload */
  overloadSeconds: LONG ? 30 : 8,
} as const;

export const REPO = join(import.meta.dirname, '..', '..');
export const SPEC_PATH = join(REPO, '..', 'shared', 'SPEC.md');

/**
 * A suite's own figures: printed as a test diagnostic (visible in the spec and TAP reporters) and,
 * when REL_REPORT names a file, appended to it as one JSON line.
 */
export function figures(t: TestContext, suite: string, data: Record<string, unknown>): void {
  const line = JSON.stringify({ suite, profile: PROFILE.name, ...data });
  t.diagnostic(line);
  const file = process.env.REL_REPORT;
  if (file !== undefined && file !== '') appendFileSync(file, line + '\n');
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export const round = (v: number, digits = 1): number => Number(v.toFixed(digits));

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---- documented problem codes ------------------------------------------------------------------

/**
 * Every problem `code` a route may answer with, from the tables of SPEC §2, §3.3, §3.4, §6, §7 and
 * docs/http.md ("Codes beyond SPEC's tables"). `documentedCodes()` checks that each one really is
 * written down there, so this list cannot drift from the documents.
 */
export const DOCUMENTED_CODES: ReadonlySet<string> = new Set([
  // SPEC §2 (every route, both programs)
  'body_too_large',
  'overloaded',
  'request_timeout',
  'rate_limited',
  'not_found',
  'method_not_allowed',
  'unsupported_media_type',
  'malformed_body',
  'internal',
  'store_unavailable',
  // docs/http.md
  'malformed_params',
  'malformed_headers',
  'malformed_request',
  'malformed_url',
  'headers_too_large',
  'expectation_failed',
  // SPEC §3.3, §3.4 (anchor role)
  'unknown_party',
  'registry_behind', // SPEC §3.5 (with a KEL source)
  'delegation_revoked', // SPEC §3.5 (with a KEL source)
  'delegation_mismatch',
  'key_not_current',
  'bad_signature',
  'timestamp_in_future',
  'seed_owned_by_other_party',
  'seed_not_derived',
  'party_quota_exceeded',
  'index_taken',
  'conflicting_replay',
  'non_monotone',
  'malformed_seed',
  'malformed_query',
  // SPEC §6
  'no_build_attestation',
  // SPEC §7 (token bridge)
  'ttl_too_large',
  'chain_signature_invalid',
  'chain_broken',
  'attestation_expired',
  'attestation_revoked',
  'attestation_future',
  'pop_required',
  'pop_invalid',
  'pop_stale',
  'pop_replayed',
  'untrusted_root',
  'capability_escalation',
  'insufficient_capabilities',
  'audience_not_allowed',
  // docs/http.md (token bridge, STS limits)
  'subject_unsupported',
]);

/** The documented codes, after checking each appears in backticks in SPEC.md or docs/http.md. */
export function documentedCodes(): ReadonlySet<string> {
  const text = readFileSync(SPEC_PATH, 'utf8') + readFileSync(join(REPO, 'docs', 'http.md'), 'utf8');
  const missing = [...DOCUMENTED_CODES].filter((c) => !text.includes('`' + c + '`'));
  if (missing.length > 0) throw new Error(`codes listed as documented but not found in SPEC.md/docs/http.md: ${missing.join(', ')}`);
  return DOCUMENTED_CODES;
}

/** Cosign route (SPEC §5, C2SP): one line of text/plain (409: text/x.tlog.size), these statuses. */
export const COSIGN_STATUSES: ReadonlySet<number> = new Set([200, 400, 403, 404, 409, 413, 415, 422, 429, 503]);

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * What is wrong with a refusal (undefined when nothing): a 5xx other than a 503 with Retry-After
 * and a documented code, a problem body that is not exactly {type,title,status,detail,code}, or a
 * code that is not documented. 409 duplicity bodies are JSON proofs, not problems.
 */
export function refusalDefect(a: Answer, codes: ReadonlySet<string> = DOCUMENTED_CODES): string | undefined {
  if (a.status < 400) return undefined;
  const type = String(a.headers['content-type'] ?? '');
  if (a.status === 409 && type.startsWith('application/json')) return undefined; // duplicity proof
  if (!type.startsWith('application/problem+json')) return `status ${a.status} without problem+json (${type}): ${a.text.slice(0, 200)}`;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(a.text) as Record<string, unknown>;
  } catch {
    return `status ${a.status}: problem body is not JSON: ${a.text.slice(0, 200)}`;
  }
  const keys = Object.keys(body).sort().join(',');
  if (keys !== 'code,detail,status,title,type') return `problem members ${keys}`;
  if (body.status !== a.status) return `problem status ${String(body.status)} ≠ ${a.status}`;
  if (typeof body.code !== 'string' || !codes.has(body.code))
    return `undocumented code ${JSON.stringify(body.code)} (status ${a.status}): ${String(body.detail)}`;
  if (a.status >= 500 && !(a.status === 503 && (body.code === 'overloaded' || body.code === 'store_unavailable'))) {
    return `server error ${a.status} ${body.code}: ${String(body.detail)}`;
  }
  if (a.status === 503 && a.headers['retry-after'] === undefined) return `503 ${body.code} without Retry-After`;
  return undefined;
}

/** The code of a problem+json answer, or `<status>` when the body is something else. */
export function codeOf(a: Answer): string {
  try {
    const b = JSON.parse(a.text) as { code?: unknown };
    return typeof b.code === 'string' ? b.code : String(a.status);
  } catch {
    return String(a.status);
  }
}

// ---- HTTP over several loopback source addresses -----------------------------------------------

/** `n` loopback source addresses 127.0.X.Y (Y in 2..201: never 127.0.0.1, which probes use). */
export function loopbackAddresses(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `127.0.${Math.floor(i / 200)}.${2 + (i % 200)}`);
}

/** Keep-alive agents, one per source address, each within the per-IP cap. */
export function agentsFor(addresses: readonly string[], socketsPerAddress: number): http.Agent[] {
  return addresses.map((localAddress) => new http.Agent({ keepAlive: true, maxSockets: socketsPerAddress, localAddress }));
}

export interface TimedAnswer extends Answer {
  ms: number;
}

/** One HTTP request; resolves with the status, headers, body text and elapsed ms. */
export function httpRequest(
  url: string,
  opts: {
    method?: string;
    headers?: Record<string, string>;
    body?: string | Uint8Array;
    agent?: http.Agent | false;
    timeoutMs?: number;
  } = {},
): Promise<TimedAnswer> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(url, { method: opts.method ?? 'GET', headers: opts.headers ?? {}, agent: opts.agent ?? false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
          ms: performance.now() - t0,
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (opts.timeoutMs !== undefined) {
      req.setTimeout(opts.timeoutMs, () => {
        req.destroy(new Error(`timeout after ${opts.timeoutMs} ms`));
      });
    }
    req.end(opts.body);
  });
}

/** JSON.stringify with bigints as integer literals. */
export function toJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
}

export interface RawAnswer {
  /** 0 when the server closed (or the time ran out) without a complete status line and headers */
  status: number;
  headers: Record<string, string>;
  text: string;
  /** the server closed the connection */
  closed: boolean;
  ms: number;
}

/**
 * Write `data` on a fresh connection and read one response: resolves when a complete response
 * (by Content-Length) arrived plus `lingerMs`, when the server closes, or after `timeoutMs`.
 */
export function rawRequest(
  port: number,
  data: string | Buffer,
  opts: { localAddress?: string; timeoutMs?: number; lingerMs?: number } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const sock = net.connect({ port, host: '127.0.0.1', ...(opts.localAddress === undefined ? {} : { localAddress: opts.localAddress }) });
    let buf = Buffer.alloc(0);
    let settled = false;
    let parsed: { status: number; headers: Record<string, string>; bodyStart: number; length: number | undefined } | undefined;
    const finish = (closed: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      const p = parsed;
      const body =
        p === undefined ? '' : buf.subarray(p.bodyStart, p.length === undefined ? undefined : p.bodyStart + p.length).toString('utf8');
      resolve({ status: p?.status ?? 0, headers: p?.headers ?? {}, text: body, closed, ms: performance.now() - t0 });
    };
    const timer = setTimeout(() => {
      finish(false);
    }, opts.timeoutMs ?? 5_000);
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (parsed === undefined) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
        const headers: Record<string, string> = {};
        for (const line of lines.slice(1)) {
          const i = line.indexOf(':');
          if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
        }
        const cl = headers['content-length'];
        parsed = {
          status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0),
          headers,
          bodyStart: end + 4,
          length: cl === undefined ? undefined : Number(cl),
        };
      }
      if (parsed.length !== undefined && buf.length >= parsed.bodyStart + parsed.length) {
        setTimeout(() => {
          finish(false);
        }, opts.lingerMs ?? 0);
      }
    });
    sock.on('close', () => {
      finish(true);
    });
    sock.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNRESET' || e.code === 'EPIPE') return;
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        reject(e);
      }
    });
    sock.on('connect', () => {
      sock.write(data);
    });
  });
}
