/**
 * Alert webhooks (SPEC §6.1): the URL rules (https://, or http:// on a loopback host), how a URL
 * is shown (scheme and host only: the path and query often carry the receiver's token), the
 * signature (HMAC-SHA256 over "<timestamp>.<body>") and one POST — redirects are not followed, any
 * answer but 2xx is a failure, and no failure text ever contains the URL.
 */
import { createHmac } from 'node:crypto';
import { sha256Hex } from '../../crypto/sha256.ts';
import { isLoopbackHost } from '../../encoding/host.ts';
import { httpRequest, type HttpOptions } from '../http.ts';
import { UsageError } from '../../verify/errors.ts';

export interface Webhook {
  /** The URL (a secret). */
  url: string;
  /** Hex SHA-256 of the URL: how the state's queue names it. */
  key: string;
  /** Scheme and host, for logs and reports. */
  shown: string;
}

/** A `--alert-webhook` value: `https://…`, or `http://…` on a loopback host (ClientError `usage` otherwise). */
export function parseWebhook(text: string): Webhook {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError('--alert-webhook: not a URL');
  }
  const shown = `${url.protocol}//${url.host}`;
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname)))
    throw new UsageError(`--alert-webhook ${shown}…: must be https:// (http:// only on a loopback host)`);
  return { url: text, key: sha256Hex(text), shown };
}

/** `sha256=<hex HMAC-SHA256(secret, timestamp + "." + body)>`: the X-Alert-Signature header value. */
export function alertSignature(secret: Uint8Array, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * POST one alert body. Returns null on 2xx, else why not (the URL replaced by its shown form).
 * With a secret, X-Alert-Timestamp is `nowSeconds` and X-Alert-Signature signs it with the body.
 */
export async function postAlert(
  hook: Webhook,
  body: string,
  opts: { secret?: Uint8Array; nowSeconds: number; http: HttpOptions },
): Promise<string | null> {
  const headers: Record<string, string> = { ...opts.http.headers };
  if (opts.secret !== undefined) {
    headers['x-alert-timestamp'] = String(opts.nowSeconds);
    headers['x-alert-signature'] = alertSignature(opts.secret, opts.nowSeconds, body);
  }
  try {
    const res = await httpRequest(
      hook.url,
      { method: 'POST', body, contentType: 'application/json', idempotent: false, redirect: 'manual' },
      { ...opts.http, headers, retries: 0 },
    );
    if (res.status >= 200 && res.status < 300) return null;
    return res.status >= 300 && res.status < 400 ? `HTTP ${res.status} (redirects are not followed)` : `HTTP ${res.status}`;
  } catch (e) {
    return (e instanceof Error ? e.message : String(e)).split(hook.url).join(hook.shown);
  }
}
