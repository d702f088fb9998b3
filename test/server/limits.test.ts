// SPEC §2 limits over real loopback sockets: body cap (413 + close, Content-Length and chunked),
// request deadline (stalled headers, stalled body, slow handler, counted from the first byte),
// in-flight bound with a FIFO queue (503 + Retry-After, no slot leak after aborted clients),
// per-IP connection cap (503 past it, closes past twice it), per-IP rate limit with trust-proxy X-Forwarded-For, metrics, shutdown.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Registry } from 'prom-client';
import { loadSnapshot, registerMetricsRoute } from '../../src/server/server.ts';
import { deadlineSignal } from '../../src/server/deadline.ts';
import { closeGracefully } from '../../src/server/lifecycle.ts';
import type { App } from '../../src/server/options.ts';
import { json, postJson, rawExchange, request, sleep, start } from './_http.ts';

function gate(): { promise: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((r) => {
    open = r;
  });
  return { promise, open };
}

/** A bounded wait, not a timing assertion: generous so a loaded CI machine does not flake (stop 33 saw 3 s run out). */
async function until(cond: () => boolean, maxMs = 15_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > maxMs) throw new Error(`condition not reached in ${maxMs} ms: ${cond.toString()}`);
    await sleep(5);
  }
}

void test('body cap: 413 body_too_large and the connection closed (Content-Length and chunked)', async () => {
  const s = await start({ maxBodyBytes: 1024 }, (app) => {
    app.post('/p', () => Promise.resolve({ ok: true }));
  });
  try {
    // declared 1 MB, 5 bytes sent: answered at once, socket closed without waiting for the rest
    const cl = await rawExchange(s.port, [
      'POST /p HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"a":',
    ]);
    assert.equal(cl.status, 413);
    assert.equal(cl.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(json(cl.body).code, 'body_too_large');
    assert.equal(cl.headers.connection, 'close');
    assert.equal(cl.closed, true);
    assert.ok(cl.elapsedMs < 1000, `${cl.elapsedMs} ms`);

    // chunked: 2 KiB in one chunk over a 1 KiB cap, then the sender keeps going
    const chunk = 'x'.repeat(2048);
    const ch = await rawExchange(s.port, [
      'POST /p HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      `${(2048).toString(16)}\r\n${chunk}\r\n`,
      { delayMs: 50 },
      `${(2048).toString(16)}\r\n${chunk}\r\n`,
    ]);
    assert.equal(ch.status, 413);
    assert.equal(json(ch.body).code, 'body_too_large');
    assert.equal(ch.closed, true);

    // exactly at the cap is fine
    const at = await postJson(s.port, '/p', JSON.stringify({ a: 'y'.repeat(1024 - 8) }));
    assert.equal(at.status, 200);
  } finally {
    await s.close();
  }
});

void test('request deadline: stalled headers, stalled body, slow handler → 408 problem+json within T + 0.5 s', async () => {
  const T = 700;
  let aborted = 0;
  const s = await start({ requestTimeoutMs: T }, (app) => {
    app.get('/fast', () => Promise.resolve({ ok: true }));
    app.post('/slow', async (req) => {
      const signal = deadlineSignal(req);
      signal.addEventListener('abort', () => {
        aborted++;
      });
      await new Promise((r) => setTimeout(r, 3000).unref());
      return { late: true };
    });
    app.get('/sleep/:ms', async (req) => {
      await sleep(Number((req.params as { ms: string }).ms));
      return { ok: true };
    });
  });
  try {
    const [headers, body, handler, slowStart] = await Promise.all([
      rawExchange(s.port, ['GET /fast HTTP/1.1\r\nHost: x\r\n']),
      rawExchange(s.port, ['POST /slow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"partial":']),
      // the case fastify's handlerTimeout misses: a request with a body
      rawExchange(s.port, ['POST /slow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}']),
      // headers dribbled over 400 ms, then a 500 ms handler: the deadline runs from the first byte
      rawExchange(s.port, ['GET /sleep/500 HTTP/1.1\r\n', { delayMs: 200 }, 'Host: x\r\n', { delayMs: 200 }, '\r\n']),
    ]);
    for (const [name, r] of [
      ['headers', headers],
      ['body', body],
      ['handler', handler],
      ['first-byte', slowStart],
    ] as const) {
      assert.equal(r.status, 408, `${name}: ${r.raw}`);
      assert.match(r.headers['content-type'] ?? '', /^application\/problem\+json/, name);
      assert.equal(json(r.body).code, 'request_timeout', name);
      assert.ok(r.elapsedMs >= T - 50 && r.elapsedMs <= T + 500, `${name}: ${r.elapsedMs} ms`);
      assert.equal(r.headers.connection, 'close', name);
    }
    assert.equal(headers.closed, true);
    assert.equal(body.closed, true);
    assert.match(String(json(handler.body).detail), /outcome is unknown/);
    assert.equal(aborted, 1); // the handler's deadline signal fired
    // the server is healthy afterwards
    assert.equal((await request(s.port, { path: '/fast' })).status, 200);
  } finally {
    await s.close();
  }
});

void test('in-flight bound: 2× the bound at once → 4×200 + 4×503 (queue 0); all 200 with a queue of 4', async () => {
  let g = gate();
  const setup = (app: App): void => {
    app.get('/work', async () => {
      await g.promise;
      return { ok: true };
    });
    app.get('/health', { config: { bypassLimits: true } }, () => Promise.resolve({ status: 'ok' }));
  };
  const s0 = await start({ maxInFlight: 4, maxQueue: 0 }, setup);
  try {
    const all = Array.from({ length: 8 }, () => request(s0.port, { path: '/work' }));
    await until(() => loadSnapshot(s0.app).inFlight === 4);
    // bypass routes are answered while the bound is full
    assert.equal((await request(s0.port, { path: '/health' })).status, 200);
    g.open();
    const res = await Promise.all(all);
    const ok = res.filter((r) => r.status === 200);
    const over = res.filter((r) => r.status === 503);
    assert.equal(ok.length, 4);
    assert.equal(over.length, 4);
    for (const r of over) {
      assert.equal(json(r.body).code, 'overloaded');
      assert.equal(r.headers['retry-after'], '1');
    }
  } finally {
    await s0.close();
  }
  g = gate();
  const s4 = await start({ maxInFlight: 4, maxQueue: 4 }, setup);
  try {
    const all = Array.from({ length: 8 }, () => request(s4.port, { path: '/work' }));
    await until(() => loadSnapshot(s4.app).inFlight === 4 && loadSnapshot(s4.app).queued === 4);
    const extra = await request(s4.port, { path: '/work' }); // queue full
    assert.equal(extra.status, 503);
    g.open();
    const res = await Promise.all(all);
    assert.deepEqual(
      res.map((r) => r.status),
      Array<number>(8).fill(200),
    );
    await until(() => loadSnapshot(s4.app).inFlight === 0 && loadSnapshot(s4.app).queued === 0);
  } finally {
    await s4.close();
  }
});

void test('in-flight bound: queued requests that cannot start before the deadline → 503; aborted clients release slots', async () => {
  const T = 800;
  let g = gate();
  const s = await start({ maxInFlight: 2, maxQueue: 2, requestTimeoutMs: T }, (app) => {
    app.get('/work', async () => {
      await g.promise;
      return { ok: true };
    });
  });
  try {
    const t0 = performance.now();
    const res = await Promise.all(Array.from({ length: 4 }, () => request(s.port, { path: '/work' })));
    const elapsed = performance.now() - t0;
    const codes = res.map((r) => `${r.status}:${String(json(r.body).code)}`).sort();
    assert.deepEqual(codes, ['408:request_timeout', '408:request_timeout', '503:overloaded', '503:overloaded']);
    assert.ok(elapsed < T + 500, `${elapsed} ms`);
    await until(() => loadSnapshot(s.app).inFlight === 0);

    // clients that abort while holding a slot or while queued: nothing leaks
    const sockets: net.Socket[] = [];
    for (let i = 0; i < 4; i++) {
      const c = net.connect(s.port, '127.0.0.1');
      c.on('error', () => undefined);
      c.write('GET /work HTTP/1.1\r\nHost: x\r\n\r\n');
      sockets.push(c);
    }
    await until(() => loadSnapshot(s.app).inFlight === 2 && loadSnapshot(s.app).queued === 2);
    for (const c of sockets) c.destroy();
    await until(() => loadSnapshot(s.app).inFlight === 0 && loadSnapshot(s.app).queued === 0);
    g.open();
    g = gate();
    // a later burst gets the full bound again
    const burst = Array.from({ length: 4 }, () => request(s.port, { path: '/work' }));
    await until(() => loadSnapshot(s.app).inFlight === 2 && loadSnapshot(s.app).queued === 2);
    g.open();
    assert.deepEqual(
      (await Promise.all(burst)).map((r) => r.status),
      [200, 200, 200, 200],
    );
  } finally {
    g.open();
    await s.close();
  }
});

/**
 * Six connections from one IP with a cap of 2: 1–2 admitted, 3–4 over the cap (held for their first
 * request), 5–6 closed at accept. `stallAtGraceMs`: block the event loop from then for 600 ms, across
 * the 2 s grace, so that Node's own header timeout (T = 2 s, checked every 250 ms) and the grace fall
 * due in the same turn.
 */
async function overCapCase(stallAtGraceMs: number | null): Promise<void> {
  const registry = new Registry();
  // T = 2 s: the grace for a connection over the cap is min(2 s, T) = 2 s
  const s = await start({ maxConnectionsPerIp: 2, requestTimeoutMs: 2000, metrics: registry }, (app) => {
    app.get('/x', () => Promise.resolve({ ok: true }));
    registerMetricsRoute(app);
  });
  // Every socket reads what it is sent: a client that never reads never sees the server's close
  // (its socket stays in CLOSE_WAIT with the unread bytes), which is how this test once failed.
  const sockets: { sock: net.Socket; closed: boolean; closedAt: number; text: string }[] = [];
  const t0 = performance.now();
  try {
    for (let i = 0; i < 6; i++) {
      const entry = { sock: net.connect(s.port, '127.0.0.1'), closed: false, closedAt: 0, text: '' };
      entry.sock.on('error', () => undefined);
      entry.sock.on('data', (d: Buffer) => {
        entry.text += d.toString('utf8');
      });
      entry.sock.on('close', () => {
        entry.closed = true;
        entry.closedAt = performance.now() - t0;
      });
      sockets.push(entry);
      await new Promise((r) => entry.sock.once('connect', r));
    }
    if (stallAtGraceMs !== null) {
      setTimeout(() => {
        const endAt = Date.now() + 600;
        while (Date.now() < endAt); // the event loop blocked, as on a starved machine
      }, stallAtGraceMs);
    }
    await until(() => sockets.filter((e) => e.closed).length === 2);
    assert.deepEqual(
      sockets.map((e) => e.closed),
      [false, false, false, false, true, true],
    );
    const ask = (e: (typeof sockets)[number]): Promise<string> =>
      new Promise<string>((resolve) => {
        e.sock.once('close', () => {
          resolve(e.text);
        });
        e.sock.write('GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      });
    const [a, b, c] = await Promise.all([ask(sockets[0]!), ask(sockets[1]!), ask(sockets[2]!)]);
    assert.match(a, /^HTTP\/1\.1 200 /);
    assert.match(b, /^HTTP\/1\.1 200 /);
    // the connection over the cap: an answer, then closed
    assert.match(c, /^HTTP\/1\.1 503 /);
    assert.match(c, /\r\nretry-after: 1\r\n/i);
    assert.match(c, /\r\nconnection: close\r\n/i);
    assert.match(c, /"code":"overloaded"/);
    // The silent one over the cap is closed after its grace (2 s), not at accept: without a word when
    // the grace comes first, or with Node's header timeout's 408 when that check came first (T = 2 s).
    await until(() => sockets[3]!.closed, 10_000).catch((e: unknown) => {
      const held = sockets.map((x) => `${x.sock.localPort ?? '?'}:${x.closed ? `closed@${Math.round(x.closedAt)}` : 'open'}`);
      throw new Error(
        `${(e as Error).message}; client sockets ${held.join(' ')}; server ${JSON.stringify(loadSnapshot(s.app))}; ${Math.round(performance.now() - t0)} ms after the first connect`,
      );
    });
    assert.ok(sockets[3]!.closedAt >= 1500, `closed after ${Math.round(sockets[3]!.closedAt)} ms`);
    const silent = sockets[3]!.text;
    if (silent !== '') {
      assert.match(silent, /^HTTP\/1\.1 408 /);
      assert.match(silent, /"code":"request_timeout"/);
    }
    for (const e of sockets) e.sock.destroy();
    await until(() => loadSnapshot(s.app).connections === 0);
    const text = (await request(s.port, { path: '/metrics' })).body;
    assert.match(text, /http_rejected_total\{reason="connections"\} 4/);
  } finally {
    for (const e of sockets) e.sock.destroy();
    await s.close();
  }
}

void test('connections: over the per-IP cap a request is answered 503 overloaded and the connection closed; a silent one is closed after the grace; past twice the cap, at accept', async () => {
  await overCapCase(null);
});

void test('connections: over the per-IP cap, an event-loop stall across the grace still closes the silent connection (408 or nothing), never leaves it open', async () => {
  await overCapCase(1700);
});

void test('connections: total cap closes the excess at accept; idle keep-alive connections closed after keepAliveTimeout', async () => {
  const registry = new Registry();
  const s = await start({ maxConnections: 3, keepAliveTimeoutMs: 300, metrics: registry }, (app) => {
    app.get('/x', () => Promise.resolve({ ok: true }));
  });
  const sockets: { sock: net.Socket; closed: boolean }[] = [];
  try {
    for (let i = 0; i < 5; i++) {
      const entry = { sock: net.connect(s.port, '127.0.0.1'), closed: false };
      entry.sock.on('error', () => undefined);
      entry.sock.on('close', () => {
        entry.closed = true;
      });
      sockets.push(entry);
      await new Promise((r) => entry.sock.once('connect', r));
    }
    await until(() => sockets.filter((e) => e.closed).length === 2);
    assert.deepEqual(
      sockets.map((e) => e.closed),
      [false, false, false, true, true],
    );
    for (const e of sockets) e.sock.destroy();
    assert.match(await registry.metrics(), /http_rejected_total\{reason="connections"\} 2/);
    await until(() => loadSnapshot(s.app).connections === 0);
    // keep-alive: the connection survives the response, then idles out
    const ka = await rawExchange(s.port, ['GET /x HTTP/1.1\r\nHost: x\r\n\r\n'], { lingerMs: 2000 });
    assert.equal(ka.status, 200);
    assert.equal(ka.closed, true);
  } finally {
    for (const e of sockets) e.sock.destroy();
    await s.close();
  }
});

void test('rate limit: 429 rate_limited with Retry-After; bypass routes exempt; X-Forwarded-For only via trusted proxies', async () => {
  const echo = (app: App): void => {
    app.get('/ip', (req) => Promise.resolve({ ip: req.clientIp }));
    app.get('/health', { config: { bypassLimits: true } }, () => Promise.resolve({ status: 'ok' }));
    app.get('/free', { config: { rateLimit: false } }, () => Promise.resolve({ ok: true }));
  };
  const direct = await start({ rateLimit: { rps: 0.5, burst: 2 } }, echo);
  try {
    const spoof = { 'x-forwarded-for': '203.0.113.1' };
    const r = [];
    for (let i = 0; i < 3; i++) r.push(await request(direct.port, { path: '/ip', headers: spoof }));
    assert.deepEqual(
      r.map((x) => x.status),
      [200, 200, 429],
    );
    assert.equal(json(r[0]!.body).ip, '127.0.0.1'); // peer not trusted: the header is ignored
    assert.equal(json(r[2]!.body).code, 'rate_limited');
    assert.equal(r[2]!.headers['retry-after'], '2');
    assert.equal(r[2]!.headers['access-control-allow-origin'], '*');
    assert.equal((await request(direct.port, { path: '/health' })).status, 200);
    assert.equal((await request(direct.port, { path: '/free' })).status, 200);
    assert.equal((await request(direct.port, { path: '/nope' })).status, 429); // unknown paths count too
  } finally {
    await direct.close();
  }

  const proxied = await start({ rateLimit: { rps: 1, burst: 1 }, trustProxy: ['127.0.0.0/8', '10.0.0.0/8'] }, echo);
  try {
    const get = (xff: string): Promise<{ status: number; body: string }> =>
      request(proxied.port, { path: '/ip', headers: { 'x-forwarded-for': xff } });
    const a = await get('198.51.100.9, 203.0.113.5, 10.1.2.3');
    assert.equal(a.status, 200);
    assert.equal(json(a.body).ip, '203.0.113.5');
    assert.equal((await get('203.0.113.5')).status, 429); // same client behind the proxy
    const b = await get('203.0.113.6');
    assert.equal(b.status, 200); // another client has its own bucket
    assert.equal(json(b.body).ip, '203.0.113.6');
    // the proxy's own many connections are not capped per IP (trusted peer)
  } finally {
    await proxied.close();
  }

  const optIn = await start({ rateLimit: { rps: 1, burst: 1, scope: 'opt-in' } }, (app) => {
    app.get('/open', () => Promise.resolve({ ok: true }));
    app.get('/token', { config: { rateLimit: true } }, () => Promise.resolve({ ok: true }));
  });
  try {
    assert.deepEqual(
      [await request(optIn.port, { path: '/open' }), await request(optIn.port, { path: '/open' })].map((x) => x.status),
      [200, 200],
    );
    assert.deepEqual(
      [await request(optIn.port, { path: '/token' }), await request(optIn.port, { path: '/token' })].map((x) => x.status),
      [200, 429],
    );
  } finally {
    await optIn.close();
  }
});

void test('metrics: route templates, other for unknown paths, rejections, gauges', async () => {
  const registry = new Registry();
  const s = await start({ metrics: registry, maxBodyBytes: 16 }, (app) => {
    app.get('/v1/anchor/:seed', () => Promise.resolve({ ok: true }));
    app.post('/p', () => Promise.resolve({ ok: true }));
    registerMetricsRoute(app);
  });
  try {
    await request(s.port, { path: '/v1/anchor/aa' });
    await request(s.port, { path: '/v1/anchor/bb' });
    await request(s.port, { path: '/unknown/thing' });
    await postJson(s.port, '/p', JSON.stringify({ long: 'x'.repeat(64) }));
    const m = await request(s.port, { path: '/metrics' });
    assert.equal(m.status, 200);
    assert.match(String(m.headers['content-type']), /^text\/plain/);
    assert.match(m.body, /http_requests_total\{route="\/v1\/anchor\/:seed",method="GET",status="200"\} 2/);
    assert.match(m.body, /http_requests_total\{route="other",method="GET",status="404"\} 1/);
    assert.match(m.body, /http_requests_total\{route="\/p",method="POST",status="413"\} 1/);
    assert.match(m.body, /http_request_duration_seconds_bucket\{le="0\.5",route="\/v1\/anchor\/:seed",method="GET",status="200"\} 2/);
    assert.match(m.body, /http_rejected_total\{reason="body_too_large"\} 1/);
    assert.match(m.body, /http_rejected_total\{reason="overloaded"\} 0/);
    assert.match(m.body, /http_in_flight 0/);
    assert.match(m.body, /http_queue_depth 0/);
  } finally {
    await s.close();
  }
});

void test('graceful shutdown: in-flight requests finish with Connection: close, new connections refused', async () => {
  const s = await start({}, (app) => {
    app.get('/slow', async () => {
      await sleep(300);
      return { ok: true };
    });
  });
  const pending = rawExchange(s.port, ['GET /slow HTTP/1.1\r\nHost: x\r\n\r\n']);
  await until(() => loadSnapshot(s.app).inFlight === 1);
  const closing = closeGracefully(s.app, { timeoutMs: 2000 });
  const r = await pending;
  assert.equal(r.status, 200);
  assert.equal(r.headers.connection, 'close');
  await closing;
  await assert.rejects(request(s.port, { path: '/slow' }), { code: 'ECONNREFUSED' });
});
