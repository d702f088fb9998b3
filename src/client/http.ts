/**
 * HTTP for clients: per-attempt timeouts, retries on 503/429 honouring Retry-After, and (for
 * idempotent requests) on network errors, 408 and other 5xx — SPEC §3.3: a 408 or 5xx on
 * POST /v1/anchor means "outcome unknown" and the identical request may be resent. Response JSON
 * is parsed losslessly (`cumulative` may exceed 2^53).
 *
 * Every witness is hostile, transport included (SPEC §6.2 *(rev 4)*): a response body is read up
 * to a cap and refused beyond it (`response_too_large`, the connection dropped, nothing more
 * read), and a redirect is followed only within the request's origin (scheme, host, port);
 * another origin is `unexpected_redirect`.
 */
import { parseStrictJson } from '../encoding/json.ts';
import { ClientError } from './errors.ts';

/** SPEC §6.2 default caps on response bodies (bytes). */
export const RESPONSE_CAPS = {
  /** JSON bodies (raised by HttpOptions.maxResponseBytes / --max-response-bytes). */
  json: 1 << 20,
  /** A checkpoint or a cosignature reply. */
  checkpoint: 64 << 10,
  /** GET /v1/kel/duplicity… */
  kelDuplicity: 2 << 20,
  /** An entry bundle: 256 entries of u16 length + up to 65 535 bytes. */
  entryBundle: 256 * (2 + 65_535),
} as const;

/** A hash tile's size (tlog-tiles): width × 32 bytes. */
export const tileCap = (width: number): number => width * 32;

/** Redirects followed within one origin before giving up. */
const MAX_REDIRECTS = 5;

export interface HttpOptions {
  /** Cap on JSON response bodies (default RESPONSE_CAPS.json, 1 MiB); per-request caps (checkpoints, tiles) are fixed. */
  maxResponseBytes?: number;
  /** Per-attempt timeout (default 10 000 ms). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 3). */
  retries?: number;
  /** Longest Retry-After honoured; a longer one ends the retries (default 30 000 ms). */
  maxRetryAfterMs?: number;
  /** Backoff when no Retry-After is given: base · 2^attempt (default 250 ms). */
  backoffMs?: number;
  /** Extra headers (e.g. user-agent). */
  headers?: Record<string, string>;
  /** Injected for tests. */
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  /** Called before each retry. */
  onRetry?: (info: { url: string; attempt: number; delayMs: number; reason: string }) => void;
}

export interface HttpResponse {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
  text: string;
  /** Attempts made (1 = no retry). */
  attempts: number;
}

const defaultSleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms);
  });

/** Retry-After as delta seconds or an HTTP-date → milliseconds (undefined when absent or unparsable). */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^[0-9]{1,10}$/.test(v)) return Number(v) * 1000;
  const t = Date.parse(v);
  if (Number.isNaN(t)) return undefined;
  return Math.max(0, t - now);
}

/** A body longer than its cap: refused, the rest not read. */
export class ResponseTooLarge extends ClientError {
  constructor(url: string, maxBytes: number) {
    super('response_too_large', `${url}: the response is longer than ${maxBytes} bytes (not read further)`);
  }
}

export class HttpFailure extends ClientError {
  readonly lastStatus: number | undefined;
  constructor(message: string, lastStatus?: number) {
    super('http_failed', message);
    this.lastStatus = lastStatus;
  }
}

/**
 * One request with retries. `idempotent` allows retrying on network errors, timeouts, 408 and
 * 5xx; 503 and 429 are always retried (the request was not processed). Returns the last response
 * (whatever its status) or throws HttpFailure when no response was obtained. The body is read up
 * to `maxBytes` (default: the JSON cap), else ResponseTooLarge (`response_too_large`, not
 * retried). Redirects within the URL's origin are followed (up to 5); to another origin they are
 * `unexpected_redirect`; with `redirect: 'manual'` none is followed and the 3xx is returned.
 */
export async function httpRequest(
  url: string,
  init: {
    method?: string;
    body?: string;
    contentType?: string;
    idempotent?: boolean;
    redirect?: 'follow' | 'manual';
    /** Cap on this response's body (default: opts.maxResponseBytes ?? RESPONSE_CAPS.json). */
    maxBytes?: number;
  } = {},
  opts: HttpOptions = {},
): Promise<HttpResponse> {
  const sleep = opts.sleep ?? defaultSleep;
  const retries = opts.retries ?? 3;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const maxRetryAfter = opts.maxRetryAfterMs ?? 30_000;
  const backoff = opts.backoffMs ?? 250;
  const maxBytes = init.maxBytes ?? opts.maxResponseBytes ?? RESPONSE_CAPS.json;
  const idempotent = init.idempotent ?? (init.method ?? 'GET') === 'GET';
  const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9, */*;q=0.1', ...opts.headers };
  if (init.contentType !== undefined) headers['content-type'] = init.contentType;
  let lastStatus: number | undefined;
  for (let attempt = 1; ; attempt++) {
    let delay: number | undefined;
    let reason: string;
    try {
      const res = await fetchSameOrigin(url, init, headers, opts.fetch ?? fetch, AbortSignal.timeout(timeoutMs));
      const bytes = await readCapped(res, maxBytes, url);
      const response: HttpResponse = {
        status: res.status,
        headers: res.headers,
        bytes,
        text: Buffer.from(bytes).toString('utf8'),
        attempts: attempt,
      };
      lastStatus = res.status;
      const retryable =
        res.status === 503 || res.status === 429 || (idempotent && (res.status === 408 || (res.status >= 500 && res.status !== 501)));
      if (!retryable || attempt > retries) return response;
      const after = retryAfterMs(res.headers.get('retry-after'));
      if (after !== undefined && after > maxRetryAfter) return response;
      delay = after;
      reason = `HTTP ${res.status}`;
    } catch (e) {
      if (e instanceof ClientError) throw e; // response_too_large, unexpected_redirect: the witness's doing, not the network's
      const err = e as Error;
      reason =
        err.name === 'TimeoutError' || err.name === 'AbortError'
          ? `no response within ${timeoutMs} ms`
          : `${err.message}${fetchCause(err, url)}`;
      if (!idempotent || attempt > retries) throw new HttpFailure(`${url}: ${reason}`, lastStatus);
    }
    const wait = delay ?? backoff * 2 ** (attempt - 1);
    opts.onRetry?.({ url, attempt, delayMs: wait, reason });
    await sleep(wait);
  }
}

const originOf = (u: URL): string => `${u.protocol}//${u.host}`;

/**
 * fetch with redirects handled here: followed within `url`'s origin (303, and 301/302 after a
 * POST, become a GET as fetch does), else `unexpected_redirect`; `init.redirect: 'manual'` returns
 * the 3xx itself.
 */
async function fetchSameOrigin(
  url: string,
  init: { method?: string; body?: string; redirect?: 'follow' | 'manual' },
  headers: Record<string, string>,
  doFetch: typeof fetch,
  signal: AbortSignal,
): Promise<Response> {
  let method = init.method ?? 'GET';
  let body = init.body;
  let current = new URL(url);
  const origin = originOf(current);
  for (let hop = 0; ; hop++) {
    const res = await doFetch(hop === 0 ? url : current.href, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
      redirect: 'manual',
      signal,
    });
    const location = res.headers.get('location');
    if (init.redirect === 'manual' || res.status < 300 || res.status > 399 || res.status === 304 || location === null) return res;
    await res.body?.cancel().catch(() => undefined);
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      throw new ClientError('unexpected_redirect', `${url}: HTTP ${res.status} to an unparsable location`);
    }
    if (originOf(next) !== origin)
      throw new ClientError('unexpected_redirect', `${url}: HTTP ${res.status} to another origin (${originOf(next)}); not followed`);
    if (hop + 1 >= MAX_REDIRECTS) throw new ClientError('unexpected_redirect', `${url}: more than ${MAX_REDIRECTS} redirects`);
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
    }
    current = next;
  }
}

/** The body, at most `maxBytes` (a Content-Length above it is refused before reading), else ResponseTooLarge. */
async function readCapped(res: Response, maxBytes: number, url: string): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length') ?? '');
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw new ResponseTooLarge(url, maxBytes);
  }
  const bytes = await readBodyCapped(res, maxBytes);
  if (bytes === undefined) throw new ResponseTooLarge(url, maxBytes);
  return bytes;
}

/** Certificate verification failures that a private (or self-signed) CA causes: NODE_EXTRA_CA_CERTS fixes them. */
const UNTRUSTED_CERTIFICATE = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
]);

/**
 * Why a fetch failed, for the line after its "fetch failed": ` (CODE)` from the error's cause,
 * with a hint for the common mistakes — a private CA (NODE_EXTRA_CA_CERTS), `http://` to a TLS
 * port (the server closes the connection), `https://` to a plain HTTP port — or ` (message)` when
 * the cause has no code; '' without a cause.
 */
export function fetchCause(err: unknown, url?: string): string {
  const cause = (err as { cause?: unknown } | null)?.cause;
  if (!(cause instanceof Error)) return '';
  const code = (cause as NodeJS.ErrnoException).code;
  if (code === undefined) return cause.message === '' ? '' : ` (${cause.message})`;
  const scheme = url === undefined ? '' : url.slice(0, url.indexOf(':') + 1);
  let hint = '';
  if (UNTRUSTED_CERTIFICATE.has(code))
    hint =
      '; the server certificate is not signed by a trusted CA: for a private CA, set NODE_EXTRA_CA_CERTS to its certificate file (PEM)';
  else if (code === 'CERT_HAS_EXPIRED' || code === 'ERR_TLS_CERT_ALTNAME_INVALID') hint = `: ${cause.message}`;
  else if (code === 'ECONNREFUSED') hint = '; connection refused: nothing listens there';
  else if (code === 'UND_ERR_SOCKET' && scheme === 'http:')
    hint = '; the server closed the connection: if that port serves TLS, use https://';
  else if (scheme === 'https:' && /^ERR_SSL_/.test(code)) hint = '; no TLS handshake: if that port serves plain HTTP, use http://';
  return ` (${code}${hint})`;
}

/**
 * A fetch response body of at most `maxBytes` bytes, or undefined (the rest cancelled) when it is
 * longer: the caller says why in its own error.
 */
export async function readBodyCapped(res: Response, maxBytes: number): Promise<Uint8Array | undefined> {
  if (res.body === null) return new Uint8Array(0);
  const reader: ReadableStreamDefaultReader<Uint8Array> = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** Parse a response body as JSON (strict, lossless for `cumulative`); ClientError malformed_json. */
export function parseJsonBody(text: string): unknown {
  try {
    return parseStrictJson(text, { bigIntegerKeys: new Set(['cumulative']), maxDepth: 64 });
  } catch (e) {
    throw new ClientError('malformed_json', `response is not valid JSON: ${(e as Error).message}`);
  }
}

/** `code` and `detail` of an RFC 9457 problem body, when it is one. */
export function problemOf(text: string): { code: string; detail: string } | undefined {
  try {
    const doc = JSON.parse(text) as unknown;
    if (typeof doc === 'object' && doc !== null && typeof (doc as { code?: unknown }).code === 'string') {
      const d = doc as { code: string; detail?: unknown; title?: unknown };
      return { code: d.code, detail: typeof d.detail === 'string' ? d.detail : typeof d.title === 'string' ? d.title : '' };
    }
  } catch {
    // not JSON
  }
  return undefined;
}

/** Join a base URL and a path (the base may or may not end in "/"). */
export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + '/' + path.replace(/^\/+/, '');
}
