// Test helpers: start a hardened server on 127.0.0.1:0 and talk to it over real sockets.
import net from 'node:net';
import http from 'node:http';
import { createServer } from '../../src/server/server.ts';
import { listen } from '../../src/server/lifecycle.ts';
import type { App, ServerOptions } from '../../src/server/options.ts';

export interface Running {
  readonly app: App;
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

export async function start(options: ServerOptions, register: (app: App) => void): Promise<Running> {
  const app = await createServer(options);
  register(app);
  const info = await listen(app, { host: '127.0.0.1', port: 0 });
  return {
    app,
    port: info.port,
    url: info.url,
    close: async () => {
      app.server.closeAllConnections();
      await app.close();
    },
  };
}

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** the server closed the connection */
  readonly closed: boolean;
  /** ms from connect to the end of the response (or close) */
  readonly elapsedMs: number;
  readonly raw: string;
}

export type Step = string | Buffer | { readonly delayMs: number };

function parseResponse(text: string): { status: number; headers: Record<string, string>; body: string; complete: boolean } | null {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return null;
  const lines = text.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    const k = line.slice(0, i).trim().toLowerCase();
    const v = line.slice(i + 1).trim();
    headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
  }
  const rest = text.slice(end + 4);
  const cl = headers['content-length'];
  const complete = cl === undefined ? false : Buffer.byteLength(rest) >= Number(cl);
  return { status, headers, body: cl === undefined ? rest : rest.slice(0, Number(cl)), complete };
}

/**
 * Write `steps` (strings/buffers, with delays) on a fresh connection and collect the first response.
 * Resolves when the server closes the socket, or `lingerMs` after a complete response arrived
 * (then `closed` is false), or after `maxMs`.
 */
export function rawExchange(port: number, steps: readonly Step[], opts: { lingerMs?: number; maxMs?: number } = {}): Promise<RawResponse> {
  const lingerMs = opts.lingerMs ?? 150;
  const maxMs = opts.maxMs ?? 8000;
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let buf = '';
    let doneAt = 0;
    let settled = false;
    const sock = net.connect(port, '127.0.0.1');
    const finish = (closed: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(maxTimer);
      const p = parseResponse(buf);
      const elapsedMs = (doneAt === 0 ? performance.now() : doneAt) - t0;
      sock.destroy();
      if (p === null) resolve({ status: 0, headers: {}, body: '', closed, elapsedMs, raw: buf });
      else resolve({ status: p.status, headers: p.headers, body: p.body, closed, elapsedMs, raw: buf });
    };
    const maxTimer = setTimeout(() => {
      finish(false);
    }, maxMs);
    sock.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      const p = parseResponse(buf);
      if (p?.complete === true && doneAt === 0) {
        doneAt = performance.now();
        setTimeout(() => {
          finish(false);
        }, lingerMs);
      }
    });
    sock.on('close', () => {
      finish(true);
    });
    sock.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNRESET' || e.code === 'EPIPE') return; // the server cut us off; 'close' follows
      reject(e);
    });
    sock.on('connect', () => {
      void (async () => {
        for (const step of steps) {
          if (settled || sock.destroyed) return;
          if (typeof step === 'object' && !Buffer.isBuffer(step)) await new Promise((r) => setTimeout(r, step.delayMs));
          else sock.write(step);
        }
      })();
    });
  });
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** One request on a fresh connection (no agent). */
export function request(
  port: number,
  opts: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer; signal?: AbortSignal } = {},
): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: opts.method ?? 'GET',
        path: opts.path ?? '/',
        headers: opts.headers ?? {},
        agent: false,
        ...(opts.signal === undefined ? {} : { signal: opts.signal }),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

export function postJson(port: number, path: string, body: string, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return request(port, { method: 'POST', path, body, headers: { 'content-type': 'application/json', ...headers } });
}

export function json(text: string): Record<string, unknown> {
  return JSON.parse(text) as Record<string, unknown>;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
