/**
 * RFC 9457 problem details (SPEC §2): `application/problem+json` bodies with exactly the members
 * `type`, `title`, `status`, `detail`, `code`. `code` is the stable snake_case identifier clients
 * branch on; `type` is `problemTypeBase + code`; `title` is derived from the code (the same for
 * every occurrence of a type, as RFC 9457 §3.1.3 asks).
 */
import type { FastifyReply } from 'fastify';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
export const DEFAULT_PROBLEM_TYPE_BASE = 'urn:anchor-witness:problem:';

export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: string;
}

/** What an error maps to; `headers` are added to the response (e.g. Retry-After). */
export interface ProblemInit {
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** `body_too_large` → `Body too large`. */
export function titleForCode(code: string): string {
  const words = code.replaceAll('_', ' ').trim();
  return words === '' ? 'Error' : words[0]!.toUpperCase() + words.slice(1);
}

export function problemBody(status: number, code: string, detail: string, typeBase: string = DEFAULT_PROBLEM_TYPE_BASE): Problem {
  return { type: typeBase + code, title: titleForCode(code), status, detail, code };
}

/** Where a reply finds its server's `problemTypeBase` (set by createServer). */
const typeBaseOf = new WeakMap<object, string>();

/** @internal used by createServer to bind a server's problem type base to its instances. */
export function bindProblemTypeBase(instance: object, base: string): void {
  typeBaseOf.set(instance, base);
}

function typeBaseFor(reply: FastifyReply): string {
  // Child plugin instances inherit from the root instance by prototype.
  let o: object | null = reply.server;
  while (o !== null) {
    const base = typeBaseOf.get(o);
    if (base !== undefined) return base;
    o = Object.getPrototypeOf(o) as object | null;
  }
  return DEFAULT_PROBLEM_TYPE_BASE;
}

/**
 * Answer with a problem. Returns the reply (so `return sendProblem(...)` works in handlers).
 * The body is serialized here, so the reply serializer never sees it.
 */
export function sendProblem(
  reply: FastifyReply,
  status: number,
  code: string,
  detail: string,
  headers?: Readonly<Record<string, string>>,
): FastifyReply {
  const body = problemBody(status, code, detail, typeBaseFor(reply));
  reply.code(status);
  if (headers !== undefined) for (const [k, v] of Object.entries(headers)) reply.header(k, v);
  reply.header('content-type', PROBLEM_CONTENT_TYPE);
  reply.header('cache-control', 'no-store');
  return reply.send(JSON.stringify(body));
}

/**
 * True when a Content-Type header names JSON: `application/json` or `application/<x>+json`, with
 * parameters allowed; a `charset` other than UTF-8 is refused (JSON is UTF-8, RFC 8259 §8.1).
 */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const semi = header.indexOf(';');
  const media = (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
  const m = /^application\/([!#$%&'*+.^_`|~0-9a-z-]+)$/.exec(media);
  if (m === null) return false;
  const sub = m[1]!;
  if (sub !== 'json' && !(sub.endsWith('+json') && sub.length > 5)) return false;
  if (semi === -1) return true;
  for (const param of header.slice(semi + 1).split(';')) {
    const eq = param.indexOf('=');
    if (eq === -1) continue;
    if (param.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    const value = param
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    if (value !== 'utf-8' && value !== 'utf8') return false;
  }
  return true;
}

/** Text from the request shown in a detail or a log line, cut to `n` characters. */
export function truncate(s: string, n = 200): string {
  return s.length <= n ? s : `${s.slice(0, n)}…`;
}
