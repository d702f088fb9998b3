/**
 * Starting and stopping a server built by `createServer` (docs/http.md "Shutdown"): `listen`
 * resolves once connections are accepted and reports the real address; `closeGracefully` stops
 * accepting, serves requests on open connections with `Connection: close`, closes idle sockets at
 * once, and cuts whatever is left after the drain timeout.
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { App } from './options.ts';
import { serverStateOf } from './state.ts';

export interface ListenInfo {
  readonly host: string;
  readonly port: number;
  /** `http(s)://host:port` with the real port (IPv6 hosts in brackets) */
  readonly url: string;
}

/**
 * Start listening (port 0 = any free port). Resolves once connections are accepted. A host name
 * binds only its first address (fastify makes no extra bindings with our serverFactory): give an
 * address, or `::` for dual-stack.
 */
export async function listen(app: App, opts: { host?: string; port?: number } = {}): Promise<ListenInfo> {
  const host = opts.host ?? '127.0.0.1';
  const scheme = app.server instanceof https.Server ? 'https' : 'http';
  // fastify names the scheme from its own `https` option, which our serverFactory does not set:
  // its "Server listening at" line would say http:// for a TLS listener.
  await app.listen({
    host,
    port: opts.port ?? 0,
    listenTextResolver: (address) => `Server listening at ${address.replace(/^https?:\/\//, `${scheme}://`)}`,
  });
  const addr = app.server.address() as AddressInfo;
  const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return { host: addr.address, port: addr.port, url: `${scheme}://${shown}:${addr.port}` };
}

/**
 * Graceful shutdown: stop accepting, answer requests on open connections with `Connection: close`,
 * close idle keep-alive sockets, wait for in-flight requests up to `timeoutMs` (default 10 s), then
 * cut whatever is left.
 */
export async function closeGracefully(app: App, opts: { timeoutMs?: number } = {}): Promise<void> {
  const state = serverStateOf(app);
  if (state !== undefined) state.closing = true;
  const closing = app.close();
  // Node closes idle keep-alive connections itself, but not those that never sent a byte (browsers
  // pre-connect): they would hold shutdown until their header timeout.
  for (const socket of state?.sockets ?? []) if (socket.bytesRead === 0) socket.destroy();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const forced = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      for (const s of state?.servers ?? [app.server]) s.closeAllConnections();
      resolve();
    }, opts.timeoutMs ?? 10_000);
    timer.unref();
  });
  await Promise.race([closing, forced]);
  clearTimeout(timer);
  await closing;
}
