/**
 * What a bastion connection serves (SPEC §5.6): POST /add-checkpoint, POST /sign-subtree, GET
 * /<hash>/checkpoint and GET /health of the node's app (others 404, src/server/routing.ts), and the
 * client address rule: the bastion replaces every X-Forwarded-For with one header naming the
 * client, so exactly one IP address there is the client; anything else (absent, a list, not an
 * address) counts the request against the bastion's own address.
 */
import type { IncomingHttpHeaders } from 'node:http2';
import { parseIp } from '../server/ip.ts';
import type { IpBytes } from '../server/ip.ts';
import type { Http2Serving } from '../server/http2.ts';

/** The ALPN protocol of a backend connection (C2SP https-bastion). */
export const BASTION_ALPN = 'bastion/0';

/** Route templates as the roles register them (src/cosign/routes.ts, src/witness/routes.ts). */
export const BASTION_ROUTES = [
  { method: 'POST', url: '/add-checkpoint' },
  { method: 'POST', url: '/sign-subtree' },
  { method: 'GET', url: '/:originHash/checkpoint' },
  { method: 'GET', url: '/health' },
] as const;

const UNKNOWN_PEER = new Uint8Array(16); // `::`: the socket is already gone

/** The client of a request that came through a bastion. */
export function bastionClientIp(headers: IncomingHttpHeaders, peer: string | undefined): IpBytes {
  const xff = headers['x-forwarded-for'];
  const one = typeof xff === 'string' ? parseIp(xff.trim()) : null;
  return one ?? (peer === undefined ? null : parseIp(peer)) ?? UNKNOWN_PEER;
}

export const BASTION_SERVING: Http2Serving = { via: 'bastion', routes: BASTION_ROUTES, clientIp: bastionClientIp };
