// Client-side limits (SPEC §6.2 rev 4; issue 25 items 12–14), over real loopback sockets: a
// hostile witness streaming an endless body, redirecting to an internal address, claiming another
// witness's name, or serving a checkpoint that does not verify. Each test encodes one reproduction.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KeyObject } from 'node:crypto';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { stringifyJson } from '../../src/encoding/json.ts';
import { formatCheckpoint } from '../../src/note/checkpoint.ts';
import { signNote } from '../../src/note/signed-note.ts';
import { ed25519NoteSigner } from '../../src/note/vkey.ts';
import { EMPTY_ROOT } from '../../src/tlog/hash.ts';
import { httpTiles } from '../../src/client/consistency.ts';
import { httpRequest, RESPONSE_CAPS, type HttpOptions } from '../../src/client/http.ts';
import { emptyMonitorState, monitorPoll, parseMonitorState, type Finding, type MonitorState } from '../../src/client/monitor.ts';
import { renderMonitorReport } from '../../src/client/monitor-report.ts';
import { fetchHealth } from '../../src/client/submit.ts';
import { fill } from '../helpers/anchors.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const servers: Server[] = [];
after(async () => {
  await Promise.all(
    servers.map(
      (s) =>
        new Promise<void>((resolve) => {
          s.close(() => {
            resolve();
          });
        }),
    ),
  );
});

/** A loopback HTTP server; `handler` decides every answer. */
async function serve(handler: Handler): Promise<{ url: string; server: Server }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** A witness identity: what its /health claims and a signed empty checkpoint of its log. */
class Identity {
  readonly key: KeyObject;
  readonly publicKey: Uint8Array;
  readonly origin: string;
  readonly name: string;
  constructor(name: string, seed: number) {
    this.name = name;
    this.key = ed25519KeyFromSeed(fill(seed));
    this.publicKey = ed25519PublicKeyBytes(this.key);
    this.origin = `${name}/anchors`;
  }
  health(): string {
    return stringifyJson({
      status: 'ok',
      witness_name: this.name,
      roles: ['anchor'],
      version: 'test',
      log: { origin: this.origin, size: 0 },
      keys: { witness: encodeHex(this.publicKey), log_vkey: '', cosign_vkey: null },
    });
  }
  checkpoint(): string {
    return signNote(formatCheckpoint({ origin: this.origin, size: 0, rootHash: EMPTY_ROOT, extensions: [] }), [
      ed25519NoteSigner(this.origin, this.key),
    ]);
  }
}

/** A witness answering /health and /log/checkpoint honestly for `id`, other paths as `other` says. */
function witnessHandler(id: Identity, other?: (path: string, req: IncomingMessage, res: ServerResponse) => boolean): Handler {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (other?.(path, req, res) === true) return;
    if (path === '/health') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(id.health());
    } else if (path === '/log/checkpoint') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(id.checkpoint());
    } else {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"code":"not_found"}');
    }
  };
}

/** Streams 64 KiB chunks (honouring backpressure) until `limit` bytes or the client goes away. */
interface Flood {
  written: number;
  /** Resolves when the client closed the connection before the end (true) or the flood ended (false). */
  closedEarly: Promise<boolean>;
}
function flood(res: ServerResponse, limit: number, headers: Record<string, string> = {}): Flood {
  const chunk = Buffer.alloc(64 << 10, 0x7b); // '{'
  const state: Flood = { written: 0, closedEarly: Promise.resolve(false) };
  state.closedEarly = new Promise<boolean>((resolve) => {
    let done = false;
    res.on('close', () => {
      if (!done) resolve(true);
    });
    res.writeHead(200, { 'content-type': 'application/json', ...headers });
    const pump = (): void => {
      while (state.written < limit) {
        if (res.destroyed) return;
        state.written += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      done = true;
      res.end();
      resolve(false);
    };
    pump();
  });
  return state;
}

/** fetch that counts the body bytes the client pulls (a pull stream: nothing read ahead). */
function countingFetch(counter: { bytes: number }): typeof fetch {
  return async (input: string | URL | Request, init?: RequestInit) => {
    const res = await fetch(input, init);
    if (res.body === null) return res;
    const reader: ReadableStreamDefaultReader<Uint8Array> = res.body.getReader();
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(c) {
          const { done, value } = await reader.read();
          if (done) c.close();
          else {
            counter.bytes += value.byteLength;
            c.enqueue(value);
          }
        },
        cancel: (reason) => reader.cancel(reason),
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: res.status, headers: res.headers });
  };
}

const FLOOD = 96 << 20; // what the hostile witness would send: far beyond every cap
const SLACK = 1 << 20; // chunks in flight when the cap is crossed
const http: HttpOptions = { timeoutMs: 30_000, retries: 0 };

void test('issue 25 item 12: an endless /health body stops at the 1 MiB JSON cap with response_too_large; the client drops the connection', async (t) => {
  // Reproduction: the SDK read bodies whole (arrayBuffer): a 256 MiB body took the monitor to 1.3 GB RSS.
  let f: Flood | undefined;
  const { url } = await serve((_req, res) => {
    f = flood(res, FLOOD);
  });
  const counter = { bytes: 0 };
  await assert.rejects(fetchHealth(url, { ...http, fetch: countingFetch(counter) }), { code: 'response_too_large' });
  assert.ok(counter.bytes > RESPONSE_CAPS.json, `read ${counter.bytes}`);
  assert.ok(counter.bytes <= RESPONSE_CAPS.json + SLACK, `read ${counter.bytes} bytes, cap ${RESPONSE_CAPS.json}`);
  assert.equal(await f!.closedEarly, true, 'the client closed the connection');
  t.diagnostic(`client read ${counter.bytes} bytes (cap ${RESPONSE_CAPS.json}); the server wrote ${f!.written} of ${FLOOD}`);
  // Kernel socket buffers hold a few MiB at most: the server could write nowhere near the flood.
  assert.ok(f!.written < FLOOD / 3, `server wrote ${f!.written} bytes`);
});

void test('issue 25 item 12: a Content-Length above the cap is refused before reading; --max-response-bytes raises the JSON cap', async () => {
  const id = new Identity('big.test', 0x31);
  const padded = id.health().replace('"status":"ok"', `"status":"ok","pad":"${'x'.repeat(1_500_000)}"`);
  let f: Flood | undefined;
  const { url } = await serve((req, res) => {
    if (req.url === '/declared/health') f = flood(res, FLOOD, { 'content-length': String(FLOOD) });
    else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(padded);
    }
  });
  const counter = { bytes: 0 };
  await assert.rejects(fetchHealth(`${url}/declared`, { ...http, fetch: countingFetch(counter) }), { code: 'response_too_large' });
  assert.equal(counter.bytes, 0, 'nothing read');
  assert.equal(await f!.closedEarly, true);
  await assert.rejects(fetchHealth(url, http), { code: 'response_too_large' });
  const raised = await fetchHealth(url, { ...http, maxResponseBytes: 2 << 20 });
  assert.equal(raised.name, 'big.test');
});

void test('issue 25 item 12: verify consistency --tiles URL: a tile longer than width × 32 bytes is response_too_large', async () => {
  let f: Flood | undefined;
  const { url } = await serve((_req, res) => {
    f = flood(res, FLOOD, { 'content-type': 'application/octet-stream' });
  });
  const counter = { bytes: 0 };
  const fetchTile = httpTiles(url, { ...http, fetch: countingFetch(counter) });
  await assert.rejects(fetchTile({ level: 0, index: 0, width: 256 }), { code: 'response_too_large' });
  assert.ok(counter.bytes <= 8192 + SLACK, `read ${counter.bytes}`);
  assert.equal(await f!.closedEarly, true);
});

void test('issue 25 item 12: POST /v1/anchor (party submit) and the monitor’s GET /log/checkpoint (64 KiB cap) are capped too', async () => {
  const id = new Identity('flood.test', 0x32);
  const floods: Flood[] = [];
  const { url } = await serve(
    witnessHandler(id, (path, _req, res) => {
      if (path !== '/v1/anchor' && path !== '/log/checkpoint') return false;
      floods.push(flood(res, FLOOD, path === '/log/checkpoint' ? { 'content-type': 'text/plain' } : {}));
      return true;
    }),
  );
  const counter = { bytes: 0 };
  await assert.rejects(
    httpRequest(
      `${url}/v1/anchor`,
      { method: 'POST', body: '{}', contentType: 'application/json', idempotent: true },
      {
        ...http,
        retries: 2,
        fetch: countingFetch(counter),
      },
    ),
    { code: 'response_too_large' },
  );
  assert.equal(floods.length, 1, 'response_too_large is not retried');
  assert.ok(counter.bytes <= RESPONSE_CAPS.json + SLACK);
  const counted = { bytes: 0 };
  const report = await monitorPoll(
    { witnesses: [url], seeds: [], http: { ...http, fetch: countingFetch(counted) } },
    emptyMonitorState(),
    1,
  );
  const f = report.findings.find((x) => x.kind === 'unreachable');
  assert.ok(f !== undefined, stringifyJson(report.findings));
  assert.match(f.message, /GET \/log\/checkpoint failed: response_too_large/);
  assert.ok(counted.bytes <= RESPONSE_CAPS.checkpoint + 8192 + SLACK, `read ${counted.bytes}`); // + the /health body
  for (const fl of floods) assert.equal(await fl.closedEarly, true);
});

/** An internal service a hostile witness redirects to: counts hits, serves a secret. */
async function internalService(): Promise<{ url: string; hits: string[] }> {
  const hits: string[] = [];
  const { url } = await serve((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('INTERNAL-SECRET aws_secret_access_key=abc\n');
  });
  return { url, hits };
}

void test('issue 25 item 14: redirects to another origin are unexpected_redirect, never followed; same-origin ones are', async () => {
  // Reproduction: a witness redirected the monitor to an internal address and the internal response landed in an alert.
  const internal = await internalService();
  const id = new Identity('redirector.test', 0x33);
  const { url } = await serve(
    witnessHandler(id, (path, _req, res) => {
      if (path === '/log/checkpoint' || path === '/away/health') {
        res.writeHead(302, { location: `${internal.url}/latest/meta-data` });
        res.end();
        return true;
      }
      if (path === '/moved/health') {
        res.writeHead(301, { location: '/health' });
        res.end();
        return true;
      }
      return false;
    }),
  );
  await assert.rejects(fetchHealth(`${url}/away`, http), { code: 'unexpected_redirect' });
  assert.equal((await fetchHealth(`${url}/moved`, http)).name, 'redirector.test', 'a same-origin redirect is followed');
  const report = await monitorPoll({ witnesses: [url], seeds: [], http }, emptyMonitorState(), 1);
  const f = report.findings.find((x) => x.kind === 'unreachable');
  assert.ok(f !== undefined, stringifyJson(report.findings));
  assert.match(f.message, /unexpected_redirect/);
  assert.deepEqual(internal.hits, [], 'the internal address was never contacted');
  assert.doesNotMatch(stringifyJson(report.findings), /INTERNAL-SECRET/);
});

void test('issue 25 item 14: a checkpoint that does not verify enters evidence as ≤ 4 KiB of JSON string, marked unverified', async () => {
  const id = new Identity('liar.test', 0x34);
  const junk = `<script>alert(1)</script>\n${'é'.repeat(30_000)}`; // 60 KiB, under the 64 KiB cap
  const { url } = await serve(
    witnessHandler(id, (path, _req, res) => {
      if (path !== '/log/checkpoint') return false;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(junk);
      return true;
    }),
  );
  const state = emptyMonitorState();
  const report = await monitorPoll({ witnesses: [url], seeds: [], http }, state, 1);
  const f = report.findings.find((x) => x.kind === 'invalid_response');
  assert.ok(f !== undefined, stringifyJson(report.findings));
  const ev = f.evidence!.checkpoint as { unverified: boolean; bytes: number; sha256: string; excerpt: string; truncated: boolean };
  assert.equal(typeof ev.excerpt, 'string');
  assert.equal(ev.unverified, true);
  assert.equal(ev.truncated, true);
  assert.equal(ev.bytes, Buffer.byteLength(junk));
  assert.ok(Buffer.byteLength(ev.excerpt) <= 4096, `${Buffer.byteLength(ev.excerpt)} bytes`);
  assert.ok(junk.startsWith(ev.excerpt), 'whole characters, no replacement character');
  assert.ok(stringifyJson(f.evidence).length < 8192, 'the evidence is bounded');
  // The --html report labels it as what it is and never carries the body raw.
  const page = renderMonitorReport({ state, polls: [report], generatedAt: 2 });
  assert.match(page, /download="finding-1-invalid_response-checkpoint-unverified\.json"[^>]*>checkpoint \(unverified excerpt/);
  assert.ok(!page.includes('<script>alert(1)'), 'escaped');
});

const kinds = (fs: Finding[]): string[] => fs.map((f) => `${f.kind} ${f.witness ?? ''}`).sort();

void test('issue 25 item 13: trust on first use is bound to the configured URL: a witness claiming an honest one’s name changes nothing for it', async () => {
  // Reproduction: a malicious witness claiming an honest witness's name, answering first, got the
  // honest one reported `key_changed (not trusted)` at every poll and never watched again.
  const honest = new Identity('honest.test', 0x35);
  const impostor = new Identity('honest.test', 0x36); // same claimed name, its own key
  let delayHealth = false;
  const m = await serve(witnessHandler(impostor));
  const slowH = await serve((req, res) => {
    // the honest witness, answering /health after the impostor
    if (delayHealth && req.url === '/health')
      setTimeout(() => {
        witnessHandler(honest)(req, res);
      }, 300);
    else witnessHandler(honest)(req, res);
  });
  delayHealth = true;
  let state: MonitorState = emptyMonitorState();
  const cfg = { witnesses: [slowH.url, m.url], seeds: [], http };
  for (let poll = 1; poll <= 3; poll++) {
    const report = await monitorPoll(cfg, state, poll);
    assert.deepEqual(kinds(report.findings), [], `poll ${poll}: ${stringifyJson(report.findings)}`);
    assert.deepEqual(
      report.witnesses.map((w) => w.reachable),
      [true, true],
    );
    state = parseMonitorState(JSON.parse(stringifyJson(state)));
  }
  const byUrl = new Map(Object.entries(state.witnesses).map(([name, r]) => [r.url, { name, key: r.public_key }]));
  assert.equal(byUrl.get(m.url)!.name, 'honest.test', 'the impostor answered first and holds the claimed name');
  assert.equal(byUrl.get(m.url)!.key, encodeHex(impostor.publicKey));
  assert.equal(byUrl.get(slowH.url)!.name, `honest.test <${slowH.url}>`);
  assert.equal(byUrl.get(slowH.url)!.key, encodeHex(honest.publicKey), 'the honest witness is watched under its own key');
  // A key change at one URL is still an alert (not trusted), whatever name is claimed there.
  const swapped = await monitorPoll({ ...cfg, witnesses: [slowH.url, m.url].reverse() }, state, 10);
  assert.deepEqual(kinds(swapped.findings), []);
  state.witnesses['honest.test']!.public_key = '11'.repeat(32);
  const changed = await monitorPoll(cfg, state, 11);
  assert.deepEqual(kinds(changed.findings), ['key_changed honest.test']);
  assert.equal(changed.findings[0]!.url, m.url);
});

void test('issue 25 item 13: a monitor state from before URL binding is adopted by the URL whose claim matches it', async () => {
  const w = new Identity('legacy.test', 0x37);
  const { url } = await serve(witnessHandler(w));
  const first = emptyMonitorState();
  await monitorPoll({ witnesses: [url], seeds: [], http }, first, 1);
  const legacy = parseMonitorState(JSON.parse(stringifyJson(first)));
  delete legacy.witnesses['legacy.test']!.url; // as written before rev 4
  const checkpoint = legacy.witnesses['legacy.test']!.checkpoint;
  assert.ok(checkpoint !== undefined);
  const report = await monitorPoll({ witnesses: [url], seeds: [], http }, legacy, 2);
  assert.deepEqual(kinds(report.findings), []);
  assert.deepEqual(Object.keys(legacy.witnesses), ['legacy.test']);
  assert.equal(legacy.witnesses['legacy.test']!.url, url);
  assert.equal(legacy.witnesses['legacy.test']!.checkpoint, checkpoint, 'the history is kept');
  // Another key claiming that name against an unadopted old record: not trusted, as before.
  const other = new Identity('legacy.test', 0x38);
  const o = await serve(witnessHandler(other));
  const old = parseMonitorState(JSON.parse(stringifyJson(first)));
  delete old.witnesses['legacy.test']!.url;
  const r2 = await monitorPoll({ witnesses: [o.url], seeds: [], http }, old, 3);
  assert.deepEqual(kinds(r2.findings), ['key_changed legacy.test']);
});
