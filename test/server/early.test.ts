// Requests Node's http server would answer (or drop) before the shared layer sees them, over real
// loopback sockets: unknown expectations (Node: bare 417), CONNECT (Node: silent close), requests
// that ask for a protocol upgrade (Node: bytes pipelined behind them silently dropped), HTTP
// versions other than 1.0/1.1, oversized chunk extensions; and 100-continue still working.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Registry } from 'prom-client';
import { earlyProblem, expectationProblem, versionProblem } from '../../src/server/early.ts';
import { registerMetricsRoute } from '../../src/server/server.ts';
import type { App } from '../../src/server/options.ts';
import { json, rawExchange, request, sleep, start } from './_http.ts';
import type { RawResponse, Running } from './_http.ts';

const H = 'Host: witness.example\r\n';

interface Counters {
  posts: number;
}

function routes(counters: Counters, gate?: Promise<void>) {
  return (app: App): void => {
    app.get('/v1/anchor/:seed', async (req) => {
      if (gate !== undefined && (req.params as { seed: string }).seed === 'slow') await gate;
      return { seed: (req.params as { seed: string }).seed };
    });
    app.post('/v1/anchor', (req) => {
      counters.posts++;
      return Promise.resolve({ got: req.body });
    });
    registerMetricsRoute(app);
  };
}

function assertProblem(r: RawResponse, status: number, code: string): Record<string, unknown> {
  assert.equal(r.status, status, r.raw);
  assert.match(r.headers['content-type'] ?? '', /^application\/problem\+json/, r.raw);
  const p = json(r.body);
  assert.deepEqual(Object.keys(p).sort(), ['code', 'detail', 'status', 'title', 'type']);
  assert.equal(p.code, code, r.raw);
  assert.equal(p.status, status);
  assert.equal(p.type, `urn:test:${code}`);
  assert.match(r.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/, r.raw);
  assert.equal(r.headers.connection?.toLowerCase(), 'close', r.raw);
  assert.equal(r.closed, true, `connection left open: ${r.raw}`);
  return p;
}

async function metricLine(s: Running, pattern: RegExp): Promise<boolean> {
  const m = await request(s.port, { path: '/metrics' });
  return pattern.test(m.body);
}

void test('early checks as pure functions: expectation lists, HTTP versions, order version → Host → expectation', () => {
  assert.equal(expectationProblem(undefined), null);
  assert.equal(expectationProblem(''), null);
  assert.equal(expectationProblem(' , ,\t'), null);
  assert.equal(expectationProblem('100-continue'), null);
  assert.equal(expectationProblem('100-Continue, 100-continue'), null);
  for (const v of ['nonsense', '100-continue, foo', 'foo, 100-continue', '100-continued', '200-ok', '100-continue;x=1']) {
    const p = expectationProblem(v);
    assert.equal(p?.status, 417, v);
    assert.equal(p.code, 'expectation_failed');
  }
  assert.match(expectationProblem('x'.repeat(500))?.detail ?? '', /^unsupported expectation "x{60}…"/);
  assert.equal(versionProblem(1, 1), null);
  assert.equal(versionProblem(1, 0), null);
  for (const [major, minor] of [
    [0, 9],
    [2, 0],
    [1, 2],
    [3, 0],
  ] as const)
    assert.equal(versionProblem(major, minor)?.code, 'malformed_request');
  const head = (major: number, minor: number, rawHeaders: string[], expect?: string) => ({
    httpVersionMajor: major,
    httpVersionMinor: minor,
    rawHeaders,
    headers: { expect },
  });
  assert.match(earlyProblem(head(2, 0, []), true)?.detail ?? '', /HTTP\/2\.0/);
  assert.match(earlyProblem(head(1, 1, [], 'x'), true)?.detail ?? '', /Host/);
  assert.equal(earlyProblem(head(1, 1, ['Host', 'a'], 'x'), true)?.status, 417);
  assert.equal(earlyProblem(head(1, 1, ['Host', 'a'], 'x'), false), null); // only Node's 'checkExpectation' requests
  assert.equal(earlyProblem(head(1, 0, [], 'x'), false), null);
});

void test('Expect other than 100-continue (HTTP/1.1) → 417 expectation_failed problem+json, connection closed (Node: bare 417)', async () => {
  const counters = { posts: 0 };
  const s = await start({ problemTypeBase: 'urn:test:', metrics: new Registry() }, routes(counters));
  try {
    // The route fuzzer's find (seed 25305, path 342:0:0:3:2): GET /v1/anchor with Expect: nonsense.
    for (const raw of [
      `GET /v1/anchor HTTP/1.1\r\n${H}Expect: nonsense\r\n\r\n`,
      `GET /v1/anchor/abc HTTP/1.1\r\n${H}Expect: 200-ok\r\n\r\n`,
      `GET /v1/anchor/abc HTTP/1.1\r\n${H}Expect: nonsense\r\nExpect: other\r\n\r\n`,
      // a body behind the refused request is never read, never reaches a route
      `POST /v1/anchor HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 7\r\nExpect: nonsense\r\n\r\n{"n":1}`,
    ]) {
      const p = assertProblem(await rawExchange(s.port, [raw]), 417, 'expectation_failed');
      assert.match(String(p.detail), /100-continue/, raw);
    }
    assert.equal(counters.posts, 0);
    // the Host rule still comes first
    assertProblem(await rawExchange(s.port, [`GET /v1/anchor/abc HTTP/1.1\r\nExpect: nonsense\r\n\r\n`]), 400, 'malformed_request');
    // an empty expectation list is no expectation (RFC 9110 §5.6.1: empty list members are ignored)
    for (const raw of [
      `GET /v1/anchor/abc HTTP/1.1\r\n${H}Expect:\r\nConnection: close\r\n\r\n`,
      `GET /v1/anchor/abc HTTP/1.1\r\n${H}Expect: , \r\nConnection: close\r\n\r\n`,
    ]) {
      const r = await rawExchange(s.port, [raw]);
      assert.equal(r.status, 200, r.raw);
    }
    // HTTP/1.0 has no expectations: the header is ignored, as Node does
    const r10 = await rawExchange(s.port, [`GET /v1/anchor/abc HTTP/1.0\r\nExpect: nonsense\r\n\r\n`]);
    assert.equal(r10.status, 200, r10.raw);
    assert.equal(await metricLine(s, /http_requests_total\{route="other",method="other",status="417"\} 4/), true);
  } finally {
    await s.close();
  }
});

void test('Expect: 100-continue: 100 Continue, then the body, then the answer; a request refused before routing gets its problem without 100 Continue', async () => {
  const counters = { posts: 0 };
  const s = await start({ problemTypeBase: 'urn:test:' }, routes(counters));
  try {
    // The client waits for 100 Continue before it sends the body.
    const answer = await new Promise<string>((resolve, reject) => {
      const sock = net.connect(s.port, '127.0.0.1');
      let buf = '';
      let sent = false;
      sock.on('error', reject);
      sock.on('data', (d: Buffer) => {
        buf += d.toString('latin1');
        if (!sent && buf.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) {
          sent = true;
          sock.write('{"n":1}');
        }
        if (/\r\n\r\n\{"got":\{"n":1\}\}$/.test(buf)) {
          sock.destroy();
          resolve(buf);
        }
      });
      sock.on('close', () => {
        resolve(buf);
      });
      sock.write(`POST /v1/anchor HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 7\r\nExpect: 100-continue\r\n\r\n`);
    });
    assert.match(answer, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/, answer);
    assert.equal(counters.posts, 1);
    // A request refused before routing gets its problem instead of 100 Continue (Node sent 100
    // Continue first, inviting a body that is never read), and the connection closes.
    for (const head of [
      `POST /v1/anchor HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 7\r\nExpect: 100-continue\r\n\r\n`,
      `POST /v1/anchor HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Type: application/json\r\nContent-Length: 7\r\nExpect: 100-continue\r\n\r\n`,
    ]) {
      assertProblem(await rawExchange(s.port, [head]), 400, 'malformed_request');
    }
    assert.equal(counters.posts, 1);
  } finally {
    await s.close();
  }
});

void test('CONNECT → 400 malformed_request problem+json, connection closed (Node: silent close)', async () => {
  const s = await start({ problemTypeBase: 'urn:test:', metrics: new Registry() }, routes({ posts: 0 }));
  try {
    for (const raw of [
      `CONNECT witness.example:443 HTTP/1.1\r\n${H}\r\n`,
      `CONNECT /v1/anchor HTTP/1.1\r\n${H}\r\n`,
      `CONNECT witness.example:443 HTTP/1.1\r\n${H}\r\nGET /v1/anchor/x HTTP/1.1\r\n${H}\r\n`,
    ]) {
      const p = assertProblem(await rawExchange(s.port, [raw]), 400, 'malformed_request');
      assert.match(String(p.detail), /CONNECT/);
    }
    assert.equal(await metricLine(s, /http_requests_total\{route="other",method="other",status="400"\} 3/), true);
  } finally {
    await s.close();
  }
});

void test('Upgrade requests are served over HTTP/1.1 and the connection closed: nothing pipelined behind one is lost or run', async () => {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const counters = { posts: 0 };
  const s = await start({ problemTypeBase: 'urn:test:', metrics: new Registry() }, routes(counters, gate));
  try {
    // Node's parser stops at the end of a request that asks for an upgrade; without an 'upgrade'
    // listener the bytes after it in the same read were silently dropped and the connection
    // stayed open with the next request unanswered.
    const up = `GET /v1/anchor/a HTTP/1.1\r\n${H}Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n`;
    const r = await rawExchange(s.port, [`${up}GET /v1/anchor/b HTTP/1.1\r\n${H}\r\n`], { maxMs: 4000 });
    assert.equal(r.status, 200, r.raw);
    assert.equal(json(r.body).seed, 'a');
    assert.equal(r.headers.connection?.toLowerCase(), 'close', r.raw);
    assert.equal(r.closed, true, r.raw);
    // A request with a body that asks for an upgrade is served too.
    const withBody = await rawExchange(s.port, [
      `POST /v1/anchor HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 7\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n{"n":2}`,
    ]);
    assert.equal(withBody.status, 200, withBody.raw);
    assert.equal(withBody.closed, true, withBody.raw);
    assert.equal(counters.posts, 1);

    // A request that arrives in a later read, while the upgrade request is still being answered,
    // is parsed by Node; it must not reach its route (its answer can never be sent).
    const sock = net.connect(s.port, '127.0.0.1');
    let buf = '';
    sock.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
    });
    const closed = new Promise<void>((resolve) => {
      sock.on('close', () => {
        resolve();
      });
    });
    sock.on('error', () => undefined);
    await new Promise<void>((resolve) => {
      sock.on('connect', resolve);
    });
    sock.write(`GET /v1/anchor/slow HTTP/1.1\r\n${H}Connection: upgrade\r\nUpgrade: websocket\r\n\r\n`);
    await sleep(50);
    sock.write(`POST /v1/anchor HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 7\r\n\r\n{"n":3}`);
    // wait until the server has seen the second request (refused → counted; or run → posts)
    const seen = async (): Promise<boolean> =>
      counters.posts > 1 || (await metricLine(s, /http_requests_total\{route="other",method="other",status="400"\} 1/));
    const t0 = Date.now();
    while (!(await seen()) && Date.now() - t0 < 5000) await sleep(20);
    release();
    await closed;
    assert.equal(counters.posts, 1, 'a request pipelined behind an Upgrade request reached its route');
    assert.match(buf, /^HTTP\/1\.1 200 OK\r\n[^]*\r\nConnection: close\r\n/i, buf);
    assert.equal(buf.match(/HTTP\/1\.1 /g)?.length, 1, buf);
  } finally {
    release();
    await s.close();
  }
});

void test('request lines that are not HTTP/1.0 or HTTP/1.1 → 400 malformed_request, connection closed', async () => {
  const s = await start({ problemTypeBase: 'urn:test:' }, routes({ posts: 0 }));
  try {
    for (const v of ['HTTP/2.0', 'HTTP/0.9', 'HTTP/1.2', 'HTTP/3.0']) {
      const p = assertProblem(await rawExchange(s.port, [`GET /v1/anchor/abc ${v}\r\n${H}\r\n`]), 400, 'malformed_request');
      assert.ok(typeof p.detail === 'string');
    }
    for (const v of ['HTTP/1.0', 'HTTP/1.1']) {
      const r = await rawExchange(s.port, [`GET /v1/anchor/abc ${v}\r\n${H}Connection: close\r\n\r\n`]);
      assert.equal(r.status, 200, r.raw);
    }
  } finally {
    await s.close();
  }
});

void test('chunk extensions over Node’s limit → 413 body_too_large problem+json (Node: bare 413)', async () => {
  const counters = { posts: 0 };
  const s = await start({ problemTypeBase: 'urn:test:' }, routes(counters));
  try {
    const raw = `POST /v1/anchor HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n7;${'x'.repeat(20_000)}\r\n{"n":1}\r\n0\r\n\r\n`;
    assertProblem(await rawExchange(s.port, [raw]), 413, 'body_too_large');
    assert.equal(counters.posts, 0);
  } finally {
    await s.close();
  }
});

void test('a bad request pipelined behind one still being answered gets its problem after that answer, not instead of it', async () => {
  for (const second of [
    `G\u0000T /v1/anchor/x HTTP/1.1\r\n${H}\r\n`,
    `CONNECT witness.example:443 HTTP/1.1\r\n${H}\r\n`,
    `GET /v1/anchor/x HTTP/1.1\r\n${H}X-Long: ${'a'.repeat(20_000)}\r\n\r\n`,
  ]) {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const s = await start({ problemTypeBase: 'urn:test:', metrics: new Registry() }, routes({ posts: 0 }, gate));
    try {
      const sock = net.connect(s.port, '127.0.0.1');
      let buf = '';
      sock.on('data', (d: Buffer) => {
        buf += d.toString('latin1');
      });
      sock.on('error', () => undefined);
      const closed = new Promise<void>((resolve) => {
        sock.on('close', () => {
          resolve();
        });
      });
      sock.write(`GET /v1/anchor/slow HTTP/1.1\r\n${H}\r\n${second}`);
      // Hold the first answer until the server has refused the second request (or, before the
      // fix, already written its refusal on the socket).
      const t0 = Date.now();
      while (
        buf === '' &&
        !(await metricLine(s, /http_requests_total\{route="other",method="other",status="4\d\d"\} 1/)) &&
        Date.now() - t0 < 5000
      )
        await sleep(20);
      release();
      await closed;
      const statuses = [...buf.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
      assert.deepEqual(statuses, ['200', second.startsWith('GET') ? '431' : '400'], buf);
      assert.match(
        buf,
        /^HTTP\/1\.1 200 OK\r\n[^]*\{"seed":"slow"\}HTTP\/1\.1 4\d\d [^]*application\/problem\+json[^]*Connection: close\r\n/,
        buf,
      );
    } finally {
      release();
      await s.close();
    }
  }
});
