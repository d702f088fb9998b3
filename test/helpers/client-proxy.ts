/**
 * A man-in-the-middle for client tests: forwards requests to a real witness and lets a test
 * tamper with the answer (forge a 200 body), answer 503/429 with Retry-After first, or hang.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxyBehaviour {
  /** Rewrite a 200 JSON body of POST /v1/anchor (parsed with JSON.parse; bigints not needed in tests). */
  tamper?: (body: Record<string, unknown>) => Record<string, unknown>;
  /** Answer the first N POSTs with this status and Retry-After instead of forwarding. */
  refuse?: { count: number; status: number; retryAfter: string };
  /** Never answer. */
  hang?: boolean;
}

export interface Proxy {
  url: string;
  behaviour: ProxyBehaviour;
  /** POST requests seen. */
  posts: number;
  close(): Promise<void>;
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export async function startProxy(target: () => string, behaviour: ProxyBehaviour = {}): Promise<Proxy> {
  const hanging: ServerResponse[] = [];
  const proxy: Proxy = {
    url: '',
    behaviour,
    posts: 0,
    close: async () => {
      for (const r of hanging) r.destroy();
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      });
    },
  };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const input = await body(req);
      const b = proxy.behaviour;
      if (b.hang === true) {
        hanging.push(res);
        return;
      }
      if (req.method === 'POST') {
        proxy.posts++;
        if (b.refuse !== undefined && proxy.posts <= b.refuse.count) {
          res.writeHead(b.refuse.status, { 'content-type': 'application/problem+json', 'retry-after': b.refuse.retryAfter });
          res.end(
            JSON.stringify({
              type: 'about:blank',
              title: 'busy',
              status: b.refuse.status,
              detail: 'try later',
              code: b.refuse.status === 429 ? 'rate_limited' : 'overloaded',
            }),
          );
          return;
        }
      }
      const upstream = await fetch(target() + (req.url ?? '/'), {
        method: req.method ?? 'GET',
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        ...(req.method === 'POST' ? { body: input } : {}),
      });
      let text = await upstream.text();
      if (req.method === 'POST' && upstream.status === 200 && b.tamper !== undefined)
        text = JSON.stringify(b.tamper(JSON.parse(text) as Record<string, unknown>));
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
      res.end(text);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
