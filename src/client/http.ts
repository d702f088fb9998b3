/**
 * HTTP for clients: per-attempt timeouts, retries on 503/429 honouring Retry-After, and (for
 * idempotent requests) on network errors, 408 and other 5xx — SPEC §3.3: a 408 or 5xx on
 * POST /v1/anchor means "outcome unknown" and the identical request may be resent. Response JSON
 * is parsed losslessly (`cumulative` may exceed 2^53).
 */
import { parseStrictJson } from '../encoding/json.ts';
import { ClientError } from './errors.ts';

export interface HttpOptions {
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
 * (whatever its status) or throws HttpFailure when no response was obtained.
 */
export async function httpRequest(
  url: string,
  init: { method?: string; body?: string; contentType?: string; idempotent?: boolean; redirect?: 'follow' | 'manual' } = {},
  opts: HttpOptions = {},
): Promise<HttpResponse> {
  const doFetch = opts.fetch ?? fetch;
  const sleep = opts.sleep ?? defaultSleep;
  const retries = opts.retries ?? 3;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const maxRetryAfter = opts.maxRetryAfterMs ?? 30_000;
  const backoff = opts.backoffMs ?? 250;
  const idempotent = init.idempotent ?? (init.method ?? 'GET') === 'GET';
  const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9, */*;q=0.1', ...opts.headers };
  if (init.contentType !== undefined) headers['content-type'] = init.contentType;
  let lastStatus: number | undefined;
  for (let attempt = 1; ; attempt++) {
    let delay: number | undefined;
    let reason: string;
    try {
      const res = await doFetch(url, {
        method: init.method ?? 'GET',
        headers,
        ...(init.body !== undefined ? { body: init.body } : {}),
        ...(init.redirect !== undefined ? { redirect: init.redirect } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const bytes = new Uint8Array(await res.arrayBuffer());
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
      const err = e as Error;
      reason =
        err.name === 'TimeoutError' || err.name === 'AbortError' ? `no response within ${timeoutMs} ms` : `${err.message}${causeOf(err)}`;
      if (!idempotent || attempt > retries) throw new HttpFailure(`${url}: ${reason}`, lastStatus);
    }
    const wait = delay ?? backoff * 2 ** (attempt - 1);
    opts.onRetry?.({ url, attempt, delayMs: wait, reason });
    await sleep(wait);
  }
}

function causeOf(err: Error): string {
  const cause = (err as { cause?: unknown }).cause;
  if (cause instanceof Error) return ` (${(cause as NodeJS.ErrnoException).code ?? cause.message})`;
  return '';
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
