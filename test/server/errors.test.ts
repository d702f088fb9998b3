// SPEC §2 error surface over real loopback sockets: problem+json bodies, 404/405/415/400/500/503,
// strict JSON and schemas (no coercion, no stripping), CORS only on GET, lossless bigints,
// X-Request-Id, the mapError hook, and the OpenAPI document.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { Type } from 'typebox';
import { HttpProblem } from '../../src/server/errors.ts';
import { ProtocolError } from '../../src/errors.ts';
import { StoreUnavailableError } from '../../src/store/errors.ts';
import { sendProblem } from '../../src/server/problem.ts';
import { registerMetricsRoute } from '../../src/server/server.ts';
import type { App } from '../../src/server/options.ts';
import { json, postJson, rawExchange, request, start } from './_http.ts';

const Body = Type.Object(
  {
    n: Type.Integer(),
    nested: Type.Optional(Type.Object({ b: Type.Integer() }, { additionalProperties: false })),
    cumulative: Type.Optional(Type.Union([Type.Integer(), Type.String({ pattern: '^(0|[1-9][0-9]*)$' })])),
  },
  { additionalProperties: false },
);

function routes(app: App): void {
  // Handlers return promises (as real async handlers do), so the deadline wrapper is in the path.
  app.get('/v1/anchor/:seed', (req) => Promise.resolve({ seed: req.params, big: 2n ** 100n }));
  app.post('/v1/anchor', { schema: { body: Body }, config: { bigIntegerKeys: ['cumulative'] } }, (req) =>
    Promise.resolve({ got: req.body }),
  );
  app.post('/raw', { config: { rawBody: true } }, (req) => Promise.resolve({ bytes: (req.body as Buffer).length }));
  app.get('/boom', () => Promise.reject(new Error('secret internal detail')));
  app.post('/boom', () => {
    throw new TypeError('post boom'); // synchronous throw
  });
  app.get('/store', () => Promise.reject(new StoreUnavailableError('store: SQLITE_FULL: disk full')));
  app.get('/teapot', () => Promise.reject(new HttpProblem(422, 'bad_signature', 'party signature does not verify', { 'x-extra': '1' })));
  app.get('/mapped', () => Promise.reject(new ProtocolError('unknown_party', 'agent not in registry')));
  app.get('/direct', (_req, reply) => sendProblem(reply, 409, 'conflict_x', 'direct'));
  app.get('/tile', (_req, reply) => {
    reply.header('cache-control', 'max-age=31536000, immutable').header('etag', '"x"');
    return Promise.reject(new Error('tile read failed'));
  });
  app.get(
    '/v1/duplicity/:seed',
    {
      schema: {
        params: Type.Object({ seed: Type.String({ pattern: '^[0-9a-fA-F]{64}$' }) }),
        querystring: Type.Object(
          { limit: Type.Optional(Type.String({ pattern: '^([1-9][0-9]?|100)$' })) },
          { additionalProperties: false },
        ),
      },
      config: { validationCodes: { params: 'malformed_seed' } },
    },
    (req) => Promise.resolve({ params: req.params, query: req.query }),
  );
}

const mapError = (error: unknown): { status: number; code: string; detail: string } | undefined =>
  error instanceof ProtocolError && error.code === 'unknown_party' ? { status: 403, code: error.code, detail: error.message } : undefined;

function assertProblem(
  res: { status: number; headers: Record<string, string | string[] | undefined>; body: string },
  status: number,
  code: string,
): Record<string, unknown> {
  assert.equal(res.status, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  const p = json(res.body);
  assert.deepEqual(Object.keys(p).sort(), ['code', 'detail', 'status', 'title', 'type']);
  assert.equal(p.status, status);
  assert.equal(p.code, code);
  assert.equal(p.type, `urn:test:${code}`);
  assert.equal(typeof p.title, 'string');
  assert.equal(typeof p.detail, 'string');
  return p;
}

void test('routing errors: 404, 405 with Allow, OPTIONS 405, HEAD implied by GET', async () => {
  const s = await start({ problemTypeBase: 'urn:test:' }, routes);
  try {
    const nf = await request(s.port, { path: '/nope?x=1' });
    assertProblem(nf, 404, 'not_found');
    assert.equal(nf.headers['access-control-allow-origin'], '*'); // GET errors carry CORS too

    const m = await request(s.port, { method: 'DELETE', path: '/v1/anchor/abc' });
    assertProblem(m, 405, 'method_not_allowed');
    assert.equal(m.headers.allow, 'GET, HEAD');
    assert.equal(m.headers['access-control-allow-origin'], undefined);

    const g = await request(s.port, { method: 'GET', path: '/v1/anchor' });
    assertProblem(g, 405, 'method_not_allowed');
    assert.equal(g.headers.allow, 'POST');

    const o = await request(s.port, {
      method: 'OPTIONS',
      path: '/v1/anchor/abc',
      headers: { origin: 'https://x.example', 'access-control-request-method': 'GET' },
    });
    assertProblem(o, 405, 'method_not_allowed');
    assert.equal(o.headers.allow, 'GET, HEAD');
    assert.equal(o.headers['access-control-allow-origin'], undefined); // no preflight support

    const h = await request(s.port, { method: 'HEAD', path: '/v1/anchor/abc' });
    assert.equal(h.status, 200);
    assert.equal(h.body, '');
    assert.equal(h.headers['access-control-allow-origin'], '*');

    const hp = await request(s.port, { method: 'HEAD', path: '/v1/anchor' });
    assert.equal(hp.status, 405);
    assert.equal(hp.headers.allow, 'POST');

    // a POST with a body to an unknown path is answered without reading (or parsing) the body
    const pn = await postJson(s.port, '/nope', '{"not":"parsed"');
    assertProblem(pn, 404, 'not_found');
  } finally {
    await s.close();
  }
});

void test('Host header (RFC 9112 §3.2): missing on HTTP/1.1, repeated or malformed → 400 malformed_request, connection closed', async () => {
  const s = await start({ problemTypeBase: 'urn:test:', metrics: new Registry() }, (app) => {
    routes(app);
    registerMetricsRoute(app);
  });
  try {
    const cases: [string, RegExp][] = [
      ['GET /v1/anchor/abc HTTP/1.1\r\n\r\n', /missing/],
      ['GET /v1/anchor/abc HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n', /more than one/],
      ['GET /v1/anchor/abc HTTP/1.1\r\nhost: a.example\r\nHOST: a.example\r\n\r\n', /more than one/],
      ['GET /v1/anchor/abc HTTP/1.1\r\nHost: a.example/path\r\n\r\n', /not a valid/],
      ['GET /v1/anchor/abc HTTP/1.1\r\nHost: user@a.example\r\n\r\n', /not a valid/],
      // a POST is refused before its body is read
      ['POST /v1/anchor HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n{"n":1}', /missing/],
    ];
    for (const [raw, detail] of cases) {
      const r = await rawExchange(s.port, [raw]);
      const p = assertProblem(r, 400, 'malformed_request');
      assert.match(String(p.detail), detail, raw);
      assert.equal(r.closed, true, raw);
      assert.match(r.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/);
    }
    // accepted: HTTP/1.0 without Host, a port, an IP literal, an IPv6 literal
    for (const raw of [
      'GET /v1/anchor/abc HTTP/1.0\r\n\r\n',
      'GET /v1/anchor/abc HTTP/1.1\r\nHost: witness.example:8443\r\nConnection: close\r\n\r\n',
      'GET /v1/anchor/abc HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
      'GET /v1/anchor/abc HTTP/1.1\r\nHost: [::1]:80\r\nConnection: close\r\n\r\n',
    ]) {
      const r = await rawExchange(s.port, [raw]);
      assert.equal(r.status, 200, raw);
    }
    const metrics = await request(s.port, { path: '/metrics' });
    assert.match(metrics.body, /http_requests_total\{route="other",method="other",status="400"\} 6/);
  } finally {
    await s.close();
  }
});

void test('content types: JSON (with params, +json) accepted; text/plain, none, other charsets → 415', async () => {
  const s = await start({ problemTypeBase: 'urn:test:' }, routes);
  try {
    assert.equal((await postJson(s.port, '/v1/anchor', '{"n":1}', { 'content-type': 'application/json; charset=UTF-8' })).status, 200);
    assert.equal((await postJson(s.port, '/v1/anchor', '{"n":1}', { 'content-type': 'application/merge-patch+json' })).status, 200);
    for (const ct of [
      'text/plain',
      'text/plain; charset=utf-8',
      'application/x-www-form-urlencoded',
      'application/json; charset=latin1',
      'application/jsonx',
      'json',
      '',
    ]) {
      const r = await postJson(s.port, '/v1/anchor', '{"n":1}', { 'content-type': ct });
      assertProblem(r, 415, 'unsupported_media_type');
      assert.equal(r.headers['access-control-allow-origin'], undefined); // POST: no CORS headers
    }
    // no Content-Type at all, with and without a body
    assertProblem(await request(s.port, { method: 'POST', path: '/v1/anchor', body: '{"n":1}' }), 415, 'unsupported_media_type');
    assertProblem(await request(s.port, { method: 'POST', path: '/v1/anchor' }), 415, 'unsupported_media_type');
    // a rawBody route takes any content type
    const raw = await request(s.port, { method: 'POST', path: '/raw', body: 'old 0\n\nhello', headers: { 'content-type': 'text/plain' } });
    assert.equal(raw.status, 200);
    assert.deepEqual(json(raw.body), { bytes: 12 });
  } finally {
    await s.close();
  }
});

void test('malformed bodies: 400 malformed_body with the JSON pointer of the first offending field', async () => {
  const s = await start({ problemTypeBase: 'urn:test:' }, routes);
  try {
    const cases: [string, RegExp][] = [
      ['{"n":1', /invalid JSON/], // truncated
      ['', /invalid JSON/], // empty
      ['{"n":1,"n":2}', /\/n: duplicate member name/],
      ['{"n":1,"nested":{"b":1,"b":2}}', /\/nested\/b: duplicate member name/],
      ['{"n":1,"extra":true}', /^\/extra: unknown member$/], // additionalProperties:false — never stripped
      ['{"n":1,"nested":{"b":1,"zz":0}}', /^\/nested\/zz: unknown member$/],
      ['{"n":"5"}', /^\/n: must be integer$/], // no coercion
      ['{"n":5.5}', /\/n: numbers must be plain integer literals/],
      ['{"n":1e3}', /\/n: numbers must be plain integer literals/],
      ['{"n":1,"nested":{"b":"1"}}', /^\/nested\/b: must be integer$/],
      ['{}', /^\/n: required member is missing$/],
      ['{"n":1,"nested":{}}', /^\/nested\/b: required member is missing$/],
      ['[1]', /^body: must be object$/],
      ['{"n":9007199254740992}', /\/n: integer outside/], // beyond 2^53−1 outside bigIntegerKeys
      ['{"n":"\\ud800"}', /\/n: lone surrogate/],
      [`${'['.repeat(40)}${']'.repeat(40)}`, /nesting deeper than 32/],
      ['{"__proto__":{"n":1},"n":1}', /^\/__proto__: unknown member$/],
    ];
    for (const [body, detail] of cases) {
      const r = await postJson(s.port, '/v1/anchor', body);
      const p = assertProblem(r, 400, 'malformed_body');
      assert.match(String(p.detail), detail, body);
    }
    // path and query schemas: their own codes; no coercion, no stripping there either
    const seed = 'ab'.repeat(32);
    assert.equal(
      (await request(s.port, { path: `/v1/duplicity/${seed}?limit=5` })).body,
      `{"params":{"seed":"${seed}"},"query":{"limit":"5"}}`,
    );
    assert.match(
      String(assertProblem(await request(s.port, { path: '/v1/duplicity/xyz' }), 400, 'malformed_seed').detail),
      /^params \/seed: must match pattern/,
    );
    assert.match(
      String(assertProblem(await request(s.port, { path: `/v1/duplicity/${seed}?limit=0` }), 400, 'malformed_query').detail),
      /^query \/limit: must match pattern/,
    );
    assert.match(
      String(assertProblem(await request(s.port, { path: `/v1/duplicity/${seed}?after=1` }), 400, 'malformed_query').detail),
      /^query \/after: unknown member$/,
    );
    assertProblem(await request(s.port, { path: `/v1/duplicity/${'a'.repeat(300)}` }), 400, 'malformed_seed'); // long params reach the schema
    const bad = await request(s.port, {
      method: 'POST',
      path: '/v1/anchor',
      body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
      headers: { 'content-type': 'application/json' },
    });
    assertProblem(bad, 400, 'malformed_body');
    // bigIntegerKeys: a big literal under `cumulative` arrives as its decimal text
    const ok = await postJson(s.port, '/v1/anchor', '{"n":1,"cumulative":340282366920938463463374607431768211455}');
    assert.equal(ok.status, 200);
    assert.equal(ok.body, '{"got":{"n":1,"cumulative":"340282366920938463463374607431768211455"}}');
  } finally {
    await s.close();
  }
});

void test('500 internal: no stack or message, request id in body, header and log line; 503 store_unavailable; mapped errors', async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l !== ''),
      );
      cb();
    },
  });
  const s = await start({ problemTypeBase: 'urn:test:', logger: pino({ level: 'info' }, sink), mapError }, routes);
  try {
    for (const method of ['GET', 'POST']) {
      const r = await request(s.port, {
        method,
        path: '/boom',
        ...(method === 'POST' ? { body: '{}', headers: { 'content-type': 'application/json' } } : {}),
      });
      const p = assertProblem(r, 500, 'internal');
      const id = String(r.headers['x-request-id']);
      assert.match(id, /^[0-9a-f-]{36}$/);
      assert.ok(String(p.detail).includes(id));
      assert.ok(!r.body.includes('secret') && !r.body.includes('boom') && !r.body.includes('at '), r.body);
      const line = lines.map((l) => json(l)).find((l) => l.reqId === id && l.msg === 'internal error');
      assert.ok(line !== undefined, `log line with reqId ${id}`);
      assert.equal(r.headers['access-control-allow-origin'], method === 'GET' ? '*' : undefined);
    }
    const st = await request(s.port, { path: '/store' });
    assertProblem(st, 503, 'store_unavailable');
    assert.equal(st.headers['retry-after'], '1');
    const hp = await request(s.port, { path: '/teapot' });
    assertProblem(hp, 422, 'bad_signature');
    assert.equal(hp.headers['x-extra'], '1');
    assertProblem(await request(s.port, { path: '/mapped' }), 403, 'unknown_party');
    assertProblem(await request(s.port, { path: '/direct' }), 409, 'conflict_x');
    const tile = await request(s.port, { path: '/tile' });
    assertProblem(tile, 500, 'internal');
    assert.equal(tile.headers['cache-control'], 'no-store'); // the handler's headers do not leak
    assert.equal(tile.headers.etag, undefined);
    // every response carries a request id, success included
    const okr = await request(s.port, { path: '/v1/anchor/x' });
    assert.match(String(okr.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  } finally {
    await s.close();
  }
});

void test('success: lossless bigints, application/json; charset=utf-8, CORS on GET only, keep-alive kept', async () => {
  const s = await start({ problemTypeBase: 'urn:test:', openapi: { title: 'test api', version: '9.9.9' } }, routes);
  try {
    const r = await request(s.port, { path: '/v1/anchor/abc' });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(r.body, '{"seed":{"seed":"abc"},"big":1267650600228229401496703205376}');
    assert.equal(r.headers['access-control-allow-origin'], '*');
    const p = await postJson(s.port, '/v1/anchor', '{"n":1}');
    assert.equal(p.status, 200);
    for (const h of Object.keys(p.headers)) assert.ok(!h.startsWith('access-control-'), h);
    // keep-alive: two requests on one connection, the connection stays open
    const ka = await rawExchange(s.port, ['GET /v1/anchor/a HTTP/1.1\r\nHost: x\r\n\r\n'], { lingerMs: 200 });
    assert.equal(ka.status, 200);
    assert.equal(ka.closed, false);
    // the OpenAPI 3.1 document is built from the route schemas
    const doc = json((await request(s.port, { path: '/openapi.json' })).body);
    assert.equal(doc.openapi, '3.1.0');
    assert.deepEqual(doc.info, { title: 'test api', version: '9.9.9' });
    const paths = doc.paths as Record<string, Record<string, unknown>>;
    assert.ok(paths['/v1/anchor']?.post !== undefined);
    assert.ok(paths['/v1/anchor/{seed}']?.get !== undefined);
  } finally {
    await s.close();
  }
});
