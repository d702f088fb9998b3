/**
 * Fetching a log list over HTTPS (SPEC §5.5): GET, status 200 only, at most 3 redirects, every hop
 * `https://` (`http://` only with --dev, and then only to loopback), a 30 s deadline for the whole
 * fetch and a 32 MiB body cap (streamed; the fetch is aborted past it).
 *
 * Server-side request forgery guard: outside --dev no hop may reach a loopback, private, link-local
 * or unique-local address (nor unspecified, shared, multicast or reserved ones). The check runs on
 * the address the socket connects to: IP literals before connecting, host names in the socket's
 * own `lookup`, so a name that resolves to a public address when checked and to a private one when
 * connecting (DNS rebinding) cannot steer the fetch.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP } from 'node:net';
import { VERSION } from '../version.ts';
import { ListFetchError } from './errors.ts';

export const LIST_FETCH_TIMEOUT_MS = 30_000;
export const LIST_MAX_BYTES = 32 * 1024 * 1024;
export const LIST_MAX_REDIRECTS = 3;

/** Resolves a host name to every address (the shape of dns.lookup with `all: true`). */
export type ListLookup = (hostname: string, callback: (err: Error | null, addresses: LookupAddress[]) => void) => void;

export interface ListFetchOptions {
  /** --dev: any address, and `http://` to loopback. */
  dev?: boolean | undefined;
  timeoutMs?: number | undefined;
  maxBytes?: number | undefined;
  maxRedirects?: number | undefined;
  /** Trusted CA certificates (PEM) instead of Node's roots (tests). */
  ca?: string | undefined;
  /** Name resolution (default dns.lookup; tests inject one). */
  lookup?: ListLookup | undefined;
  /** Addresses let through despite the guard (tests reach their loopback server with it). */
  allowAddress?: ((address: string) => boolean) | undefined;
}

// BlockList matches IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) against the IPv4 rules.
const FORBIDDEN = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata endpoints)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  FORBIDDEN.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b::', 96], // NAT64 (reaches IPv4 space, private included)
  ['100::', 64], // discard
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const)
  FORBIDDEN.addSubnet(net, prefix, 'ipv6');

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Loopback, private, link-local, unique-local and the other non-public ranges above. */
export function isForbiddenAddress(ip: string): boolean {
  const family = isIP(ip);
  return family === 0 || FORBIDDEN.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

export function isLoopbackAddress(ip: string): boolean {
  const family = isIP(ip);
  return family !== 0 && LOOPBACK.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/** The label of a URL source in logs and metrics: scheme, host and path; never credentials or a query. */
export function listSourceLabel(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** Parse a list URL: `https://`, or `http://` with --dev. Throws ListFetchError `invalid_list_url`. */
export function parseListUrl(text: string, dev: boolean): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ListFetchError('invalid_list_url', `not a URL: ${JSON.stringify(text)}`);
  }
  const host = hostOf(url);
  const loopback = host === 'localhost' || isLoopbackAddress(host);
  if (url.protocol !== 'https:' && !(dev && url.protocol === 'http:' && loopback)) {
    throw new ListFetchError(
      'invalid_list_url',
      `${listSourceLabel(url)}: a list URL must be https:// (http:// only with --dev, to loopback)`,
    );
  }
  return url;
}

interface Hop {
  readonly url: URL;
  readonly opts: ListFetchOptions;
  readonly signal: AbortSignal;
}

/** Whether this hop may connect to `address`; the reason when not. */
function refusal(url: URL, address: string, opts: ListFetchOptions): string | undefined {
  if (opts.allowAddress?.(address) === true) return undefined;
  if (url.protocol === 'http:') {
    return opts.dev === true && isLoopbackAddress(address) ? undefined : `http:// is only allowed with --dev, to loopback, not ${address}`;
  }
  if (opts.dev === true) return undefined;
  return isForbiddenAddress(address) ? `${address} is a loopback, private, link-local or otherwise non-public address` : undefined;
}

type NodeLookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** The socket's lookup: resolve, keep only the addresses this hop may reach. */
function guardedLookup(url: URL, opts: ListFetchOptions) {
  const resolve: ListLookup =
    opts.lookup ??
    ((host, cb) => {
      dnsLookup(host, { all: true }, cb);
    });
  return (hostname: string, options: { all?: boolean }, callback: NodeLookupCallback): void => {
    resolve(hostname, (err, addresses) => {
      if (err !== null) {
        callback(err, []);
        return;
      }
      const allowed = addresses.filter((a) => refusal(url, a.address, opts) === undefined);
      if (allowed.length === 0) {
        const why = addresses.length === 0 ? 'no address' : refusal(url, addresses[0]!.address, opts)!;
        callback(new ListFetchError('address_refused', `${url.host}: ${why}`), []);
        return;
      }
      if (options.all === true) callback(null, allowed);
      else callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

/** One request; resolves with the response (not yet read). */
function get(hop: Hop): Promise<IncomingMessage> {
  const { url, opts } = hop;
  const host = hostOf(url);
  if (isIP(host) !== 0) {
    const why = refusal(url, host, opts);
    if (why !== undefined) return Promise.reject(new ListFetchError('address_refused', why));
  }
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, {
      method: 'GET',
      agent: false,
      headers: { 'user-agent': `anchor-witness/${VERSION} (log list)`, accept: 'text/plain, */*;q=0.5' },
      lookup: guardedLookup(url, opts),
      signal: hop.signal,
      ...(opts.ca === undefined ? {} : { ca: opts.ca }),
    });
    req.on('response', resolve);
    req.on('error', reject);
    req.end();
  });
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

async function readBody(res: IncomingMessage, label: string, maxBytes: number): Promise<string> {
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    res.destroy();
    throw new ListFetchError('list_too_large', `${label}: ${declared} bytes, over the ${maxBytes}-byte limit`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) {
      res.destroy();
      throw new ListFetchError('list_too_large', `${label}: over the ${maxBytes}-byte limit`);
    }
    chunks.push(chunk);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new ListFetchError('list_not_utf8', `${label}: the body is not UTF-8`);
  }
}

/**
 * GET a list and return its text. Throws ListFetchError; the caller keeps its previous state.
 */
export async function fetchList(start: URL, opts: ListFetchOptions = {}): Promise<string> {
  const timeoutMs = opts.timeoutMs ?? LIST_FETCH_TIMEOUT_MS;
  const maxBytes = opts.maxBytes ?? LIST_MAX_BYTES;
  const maxRedirects = opts.maxRedirects ?? LIST_MAX_REDIRECTS;
  const controller = new AbortController();
  const timer = setTimeout(() => {
    controller.abort();
  }, timeoutMs);
  const label = listSourceLabel(start);
  try {
    let url = start;
    for (let redirects = 0; ; redirects++) {
      const res = await get({ url, opts, signal: controller.signal });
      const status = res.statusCode ?? 0;
      if (REDIRECTS.has(status)) {
        res.resume();
        if (redirects >= maxRedirects) throw new ListFetchError('too_many_redirects', `${label}: more than ${maxRedirects} redirects`);
        const location = res.headers.location;
        let next: URL;
        try {
          next = new URL(location ?? '', url);
        } catch {
          throw new ListFetchError('redirect_refused', `${label}: redirect without a valid Location`);
        }
        if (location === undefined || (next.protocol !== 'https:' && !(opts.dev === true && next.protocol === 'http:'))) {
          throw new ListFetchError('redirect_refused', `${label}: redirect to ${listSourceLabel(next)} (every hop must be https://)`);
        }
        url = next;
        continue;
      }
      if (status !== 200) {
        res.resume();
        throw new ListFetchError('http_status', `${label}: HTTP ${status} (only 200 is accepted)`);
      }
      return await readBody(res, label, maxBytes);
    }
  } catch (e) {
    if (e instanceof ListFetchError) throw e;
    if (controller.signal.aborted) throw new ListFetchError('fetch_timeout', `${label}: no complete answer within ${timeoutMs} ms`);
    const cause = (e as { cause?: unknown }).cause;
    if (cause instanceof ListFetchError) throw cause;
    throw new ListFetchError('fetch_failed', `${label}: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    clearTimeout(timer);
  }
}
