/**
 * One POST to a peer witness, on terms the peer cannot stretch: a deadline for the whole exchange
 * (connect, headers and body), redirects never followed, a body read up to a cap and abandoned
 * beyond it, no cookies, no credentials.
 */
import { readBodyCapped, retryAfterMs } from '../client/http.ts';
import { PeerFailure } from './errors.ts';

/** Largest reply read (SPEC §4.1: a reply is at most 64 KiB). */
export const MAX_REPLY_BYTES = 64 * 1024;
export const DEFAULT_PEER_TIMEOUT_MS = 10_000;

export interface PeerReply {
  status: number;
  body: string;
  /** Retry-After in milliseconds (undefined when absent or unparsable). */
  retryAfterMs: number | undefined;
}

export type PeerPost = (url: string, body: string) => Promise<PeerReply>;

/** The PeerPost used by the node: fetch with `redirect: 'manual'` under one deadline (and `stop`, aborted at shutdown). */
export function httpPeerPost(opts: { timeoutMs?: number; maxBytes?: number; stop?: AbortSignal | undefined } = {}): PeerPost {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_PEER_TIMEOUT_MS;
  const maxBytes = opts.maxBytes ?? MAX_REPLY_BYTES;
  return async (url, body) => {
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = opts.stop === undefined ? deadline : AbortSignal.any([deadline, opts.stop]);
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'text/plain; charset=utf-8', accept: 'text/plain, text/x.tlog.size' },
        redirect: 'manual',
        credentials: 'omit',
        signal,
      });
    } catch (e) {
      throw new PeerFailure('peer_unreachable', describe(e, timeoutMs));
    }
    try {
      const declared = Number(res.headers.get('content-length') ?? '0');
      if (declared > maxBytes) throw new PeerFailure('invalid_peer_response', `reply of ${declared} bytes (cap ${maxBytes})`, res.status);
      const bytes = await readCapped(res, maxBytes);
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
      } catch {
        throw new PeerFailure('invalid_peer_response', 'reply is not UTF-8', res.status);
      }
      return { status: res.status, body: text, retryAfterMs: retryAfterMs(res.headers.get('retry-after')) };
    } catch (e) {
      await res.body?.cancel().catch(() => undefined);
      if (e instanceof PeerFailure) throw e;
      throw new PeerFailure('peer_unreachable', describe(e, timeoutMs), res.status);
    }
  };
}

async function readCapped(res: Response, maxBytes: number): Promise<Uint8Array> {
  const body = await readBodyCapped(res, maxBytes);
  if (body === undefined) throw new PeerFailure('invalid_peer_response', `reply longer than ${maxBytes} bytes`, res.status);
  return body;
}

function describe(e: unknown, timeoutMs: number): string {
  const err = e as Error;
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  const cause = (err as { cause?: unknown }).cause;
  const code = cause instanceof Error ? ((cause as NodeJS.ErrnoException).code ?? cause.message) : undefined;
  return code === undefined ? err.message : `${err.message} (${code})`;
}
