// HTTP/2 streams served through the app (src/server/http2.ts; SPEC §5.6 "the same bodies, status
// codes, body cap, deadline, in-flight queue and metrics" as direct requests): a loopback TCP pair
// where this side is the HTTP/2 server of a connection the peer accepted, as on a bastion
// connection. The limits are the server's own: the in-flight slots and queue are shared with the
// listener's HTTP/1.1 requests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { http2SessionSettings, serveHttp2Session } from '../../src/server/http2.ts';
import { loadSnapshot, metricsRegistry } from '../../src/server/server.ts';
import { parseIp } from '../../src/server/ip.ts';
import type { App } from '../../src/server/options.ts';
import { json, request, sleep, start, type Running } from './_http.ts';

interface H2Answer {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: string;
  rstCode: number;
}

interface Pair {
  client: http2.ClientHttp2Session;
  send(headers: http2.OutgoingHttpHeaders, body?: string | Buffer | null): Promise<H2Answer>;
  close(): Promise<void>;
}

const ROUTES = [
  { method: 'POST', url: '/slow' },
  { method: 'POST', url: '/echo' },
  { method: 'GET', url: '/fast' },
];

/** Dial the app's "peer" and serve HTTP/2 on that socket; the peer is the HTTP/2 client. */
async function pair(app: App, clientIpOf?: (h: http2.IncomingHttpHeaders) => string): Promise<Pair> {
  const accepted = new Promise<net.Socket>((resolve) => {
    const server = net.createServer((s) => {
      server.close();
      resolve(s);
    });
    server.listen(0, '127.0.0.1', () => {
      const dialled = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
      dialled.once('connect', () => {
        const session = http2.performServerHandshake(dialled, { settings: http2SessionSettings(app) });
        serveHttp2Session(app, session, {
          via: 'test',
          routes: ROUTES,
          clientIp: (h, peer) => parseIp(clientIpOf?.(h) ?? peer ?? '::') ?? new Uint8Array(16),
        });
      });
    });
  });
  const socket = await accepted;
  const client = http2.connect('http://peer', { createConnection: () => socket });
  client.on('error', () => undefined);
  await new Promise<void>((resolve) =>
    client.once('remoteSettings', () => {
      resolve();
    }),
  );
  return {
    client,
    send: (headers, body = null) =>
      new Promise<H2Answer>((resolve, reject) => {
        const stream = client.request(headers, { endStream: body === null });
        let status = 0;
        let h: http2.IncomingHttpHeaders = {};
        const chunks: Buffer[] = [];
        stream.on('response', (r) => {
          status = Number(r[':status']);
          h = r;
        });
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('error', () => undefined);
        stream.on('close', () => {
          if (status === 0) reject(new Error(`no answer (stream code ${stream.rstCode})`));
          else resolve({ status, headers: h, body: Buffer.concat(chunks).toString('utf8'), rstCode: stream.rstCode });
        });
        if (body !== null) stream.end(body);
      }),
    close: () =>
      new Promise<void>((resolve) => {
        client.close(() => {
          resolve();
        });
        setTimeout(() => {
          client.destroy();
          resolve();
        }, 500).unref();
      }),
  };
}

async function withServer(
  opts: Parameters<typeof start>[0],
  body: (s: Running, release: () => void, p: Pair) => Promise<void>,
  clientIpOf?: (h: http2.IncomingHttpHeaders) => string,
): Promise<void> {
  let releaseSlow: () => void = () => undefined;
  let gate = new Promise<void>((r) => (releaseSlow = r));
  const s = await start({ ...opts, logger: false }, (app) => {
    app.post('/slow', { config: { rawBody: true } }, async () => {
      await gate;
      return { ok: true };
    });
    app.post('/echo', { config: { rawBody: true } }, (req, reply) => reply.send({ bytes: (req.body as Buffer).length }));
    app.get('/fast', (req, reply) => reply.send({ ip: req.clientIp }));
    app.get('/hidden', (_req, reply) => reply.send({ hidden: false }));
  });
  const p = await pair(s.app, clientIpOf);
  try {
    await body(
      s,
      () => {
        releaseSlow();
        gate = new Promise<void>((r) => (releaseSlow = r));
      },
      p,
    );
  } finally {
    releaseSlow();
    await p.close();
    await s.close();
  }
}

async function until(cond: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(10);
  }
}

void test('SETTINGS_MAX_CONCURRENT_STREAMS is --max-in-flight; answers, 404 for routes not served, 405 with Allow, unknown-length bodies read', async () => {
  await withServer({ maxInFlight: 3 }, async (_s, _r, p) => {
    assert.equal(p.client.remoteSettings.maxConcurrentStreams, 3);
    const fast = await p.send({ ':method': 'GET', ':path': '/fast' });
    assert.equal(fast.status, 200);
    assert.equal(fast.headers['access-control-allow-origin'], '*');
    assert.match(String(fast.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    const hidden = await p.send({ ':method': 'GET', ':path': '/hidden' });
    assert.equal(hidden.status, 404);
    assert.equal(json(hidden.body).code, 'not_found');
    const wrong = await p.send({ ':method': 'GET', ':path': '/echo' });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.allow, 'POST');
    assert.equal(json(wrong.body).code, 'method_not_allowed');
    // No content-length: the body is still read whole.
    const echo = await p.send({ ':method': 'POST', ':path': '/echo' }, 'x'.repeat(3000));
    assert.equal(echo.status, 200);
    assert.deepEqual(JSON.parse(echo.body), { bytes: 3000 });
    assert.equal(echo.headers.connection, undefined);
  });
});

void test('body cap: 413 body_too_large, then the stream is closed without reading the rest; metrics carry via', async () => {
  await withServer({ maxBodyBytes: 1000 }, async (s, _r, p) => {
    const declared = await p.send({ ':method': 'POST', ':path': '/echo', 'content-length': '5000' }, 'y'.repeat(5000));
    assert.equal(declared.status, 413);
    assert.equal(json(declared.body).code, 'body_too_large');
    const streamed = await p.send({ ':method': 'POST', ':path': '/echo' }, 'y'.repeat(5000));
    assert.equal(streamed.status, 413);
    // A body over the cap on a stream the peer keeps open: answered, then reset (NO_ERROR) at once.
    const t0 = performance.now();
    const open = await new Promise<{ status: number; rstCode: number; body: string }>((resolve) => {
      const st = p.client.request({ ':method': 'POST', ':path': '/echo' });
      st.write('y'.repeat(2000));
      let status = 0;
      let text = '';
      st.on('response', (h) => (status = Number(h[':status'])));
      st.on('data', (c: Buffer) => (text += c.toString()));
      st.on('error', () => undefined);
      st.on('close', () => {
        resolve({ status, rstCode: st.rstCode, body: text });
      });
    });
    assert.equal(open.status, 413);
    assert.equal(json(open.body).code, 'body_too_large'); // the whole answer arrives before the reset
    assert.equal(open.rstCode, http2.constants.NGHTTP2_NO_ERROR);
    assert.ok(performance.now() - t0 < 2_000);
    // The session survives: the next stream is served.
    assert.equal((await p.send({ ':method': 'GET', ':path': '/fast' })).status, 200);
    const m = await metricsRegistry(s.app).metrics();
    assert.match(m, /http_requests_total\{route="\/echo",method="POST",status="413",via="test"\} 3/);
    assert.match(m, /http_rejected_total\{reason="body_too_large",via="test"\} 3/);
    assert.match(m, /http_requests_total\{route="\/fast",method="GET",status="200",via="test"\} 1/);
  });
});

void test('in-flight slots and queue are shared with the listener: a queued stream waits, a full queue is 503 overloaded', async () => {
  await withServer({ maxInFlight: 1, maxQueue: 1, requestTimeoutMs: 5_000 }, async (s, release, p) => {
    const direct = request(s.port, { method: 'POST', path: '/slow', body: 'a', headers: { 'content-type': 'text/plain' } });
    await until(() => loadSnapshot(s.app).inFlight === 1);
    const viaH2 = p.send({ ':method': 'POST', ':path': '/slow' }, 'b');
    await until(() => loadSnapshot(s.app).queued === 1);
    const refused = await request(s.port, { method: 'POST', path: '/slow', body: 'c', headers: { 'content-type': 'text/plain' } });
    assert.equal(refused.status, 503);
    assert.equal(json(refused.body).code, 'overloaded');
    release();
    assert.equal((await direct).status, 200);
    await until(() => loadSnapshot(s.app).inFlight === 1 && loadSnapshot(s.app).queued === 0);
    release();
    assert.equal((await viaH2).status, 200);
    await until(() => loadSnapshot(s.app).inFlight === 0);
  });
});

void test('deadline: a handler past it is 408; a body that never completes is 408 and releases its stream', async () => {
  await withServer({ requestTimeoutMs: 400 }, async (s, _r, p) => {
    const t0 = performance.now();
    const slow = await p.send({ ':method': 'POST', ':path': '/slow' }, 'z');
    assert.equal(slow.status, 408);
    assert.equal(json(slow.body).code, 'request_timeout');
    assert.ok(performance.now() - t0 < 2_000);
    // Headers promise 10 bytes; 1 is sent and the stream stays open.
    const stalled = new Promise<H2Answer>((resolve) => {
      const stream = p.client.request({ ':method': 'POST', ':path': '/echo', 'content-length': '10' });
      stream.write('1');
      let status = 0;
      let body = '';
      stream.on('response', (h) => (status = Number(h[':status'])));
      stream.on('data', (c: Buffer) => (body += c.toString()));
      stream.on('error', () => undefined);
      stream.on('close', () => {
        resolve({ status, headers: {}, body, rstCode: stream.rstCode });
      });
    });
    const a = await stalled;
    assert.equal(a.status, 408);
    assert.equal(json(a.body).code, 'request_timeout');
    assert.match(String(json(a.body).detail), /not received within 400 ms/);
    await until(() => loadSnapshot(s.app).inFlight === 0);
    const m = await metricsRegistry(s.app).metrics();
    assert.match(m, /http_rejected_total\{reason="request_timeout",via="test"\} 2/);
  });
});

void test('the transport decides the client address (rate limit per address), and Expect/CONNECT are answered as on the listener', async () => {
  await withServer(
    { rateLimit: { rps: 0.001, burst: 1 } },
    async (_s, _r, p) => {
      const a1 = await p.send({ ':method': 'GET', ':path': '/fast', 'x-test-ip': '198.51.100.7' });
      assert.equal(a1.status, 200);
      assert.deepEqual(JSON.parse(a1.body), { ip: '198.51.100.7' });
      const a2 = await p.send({ ':method': 'GET', ':path': '/fast', 'x-test-ip': '198.51.100.7' });
      assert.equal(a2.status, 429);
      assert.equal(json(a2.body).code, 'rate_limited');
      const b = await p.send({ ':method': 'GET', ':path': '/fast', 'x-test-ip': '2001:db8::1' });
      assert.equal(b.status, 200);
      const expect = await p.send({ ':method': 'GET', ':path': '/fast', expect: 'something-else' });
      assert.equal(expect.status, 417);
      assert.equal(json(expect.body).code, 'expectation_failed');
      const connect = await p.send({ ':method': 'CONNECT', ':authority': 'example.com:443' });
      assert.equal(connect.status, 400);
      assert.equal(json(connect.body).code, 'malformed_request');
    },
    (h) => String(h['x-test-ip'] ?? '127.0.0.1'),
  );
});
