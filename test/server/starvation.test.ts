// Every request the witness reads gets an HTTP status, also while its event loop is starved (issue
// 25 item 10). Reported: with the machine saturated, 30 of 100 concurrent `POST /v1/anchor` got
// their connection closed with no answer (`UND_ERR_SOCKET` "other side closed"). The layer that
// closed them is the per-IP connection cap (64): a starved server accepts a whole backlog of
// connections at once (on a quiet machine they arrive, are answered and close one by one), and
// every connection past the 64th was destroyed at accept, its request unanswered.
//
// The reproduction: an in-process witness; 100 concurrent submissions from a worker thread (its own
// event loop, real loopback sockets, one connection each); a test hook stalls the witness's event
// loop for 3 s when it accepts its 80th connection (an I/O callback, like a CPU-bound handler), so
// the rest queue up in the backlog, and after the stall the event loop runs its due timers before
// it reads the bytes that arrived meanwhile.
// Every submission must get an HTTP status: 200, or 503 `overloaded` with Retry-After for the
// connections over the cap (nothing done: the same submissions are accepted afterwards as new), or
// 408 — never a bare close.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { encodeAnchor } from '../../src/anchor/codec.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { stringifyJson } from '../../src/encoding/json.ts';
import type { RunningWitness } from '../../src/witness/node.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { tempDir } from '../helpers/tmp.ts';
import { post, startTestWitness } from '../helpers/witness.ts';
import { start } from './_http.ts';

const N = 100;
const STALL_AT = 80;
const STALL_MS = 3_000;
const alice = edParty(0x09);
const registry = {
  parties: [
    {
      id: 'did:keri:EAlice',
      keys: [{ curve: 'ed25519', public_key: encodeHex(alice.publicKey) }],
      delegator: 'did:keri:ERoot',
      limits: { anchors_per_minute: 10_000 },
    },
  ],
};

function submission(i: number): string {
  const scope = `starved-${i}`;
  const anchor = signAnchor(alice, {
    seedId: deriveSeedId('did:keri:ERoot', 'did:keri:EAlice', scope),
    index: 1,
    head: fill(1),
    cumulative: 10n,
    timestamp: 1_700_000_001,
  });
  return stringifyJson({ anchor: encodeAnchor(anchor), party: { agent: 'did:keri:EAlice', root: 'did:keri:ERoot', scope } });
}

/** The client: one fetch per body, all at once; each outcome is "STATUS CODE RETRY-AFTER" or "ERR …". */
const CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  parentPort.postMessage('sending');
  const outcomes = await Promise.all(workerData.bodies.map(async (body) => {
    try {
      const r = await fetch(workerData.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const json = await r.json().catch(() => ({}));
      return [r.status, json.code ?? '-', r.headers.get('retry-after') ?? '-'].join(' ');
    } catch (e) {
      return 'ERR ' + (e.cause?.code ?? '') + ' ' + (e.cause?.message ?? e.message);
    }
  }));
  parentPort.postMessage(outcomes);
})();
`;

function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

let w: RunningWitness;
let tmp: ReturnType<typeof tempDir>;
before(async () => {
  tmp = tempDir();
  w = await startTestWitness(tmp.dir, registry);
});
after(async () => {
  await w.close();
  tmp.cleanup();
});

void test(
  '100 concurrent submissions through a 3 s event-loop stall: every one answered with an HTTP status',
  { timeout: 120_000 },
  async () => {
    const bodies = Array.from({ length: N }, (_, i) => submission(i));
    let accepted = 0;
    const stall = (): void => {
      if (++accepted === STALL_AT) busy(STALL_MS); // in an I/O callback, as a CPU-bound handler would
    };
    w.app.server.on('connection', stall);
    const worker = new Worker(CLIENT, { eval: true, workerData: { bodies, url: `${w.url}/v1/anchor` } });
    let outcomes: string[];
    try {
      outcomes = await new Promise<string[]>((resolve, reject) => {
        worker.on('error', reject);
        worker.on('message', (m: unknown) => {
          if (Array.isArray(m)) resolve(m as string[]);
        });
      });
    } finally {
      w.app.server.off('connection', stall);
      await worker.terminate();
    }
    const tally = new Map<string, number>();
    for (const o of outcomes) tally.set(o, (tally.get(o) ?? 0) + 1);
    const shown = JSON.stringify([...tally]);
    assert.ok(accepted >= STALL_AT, `the stall ran (${accepted} connections accepted)`);
    assert.deepEqual(
      outcomes.filter((o) => o.startsWith('ERR')),
      [],
      `connections closed without an HTTP answer: ${shown}`,
    );
    for (const o of outcomes) assert.match(o, /^(200 - -|503 overloaded \d+|408 request_timeout -)$/, shown);
    const refused = outcomes.flatMap((o, i) => (o.startsWith('503') ? [i] : []));
    assert.ok(refused.length > 0 && refused.length <= N - 64, `the connections over the per-IP cap (64) were refused: ${shown}`);
    assert.ok(outcomes.filter((o) => o.startsWith('200')).length >= 1, shown);

    // a 503 overloaded did nothing: the same submission is new afterwards
    for (const i of refused.slice(0, 5)) {
      const r = await post(`${w.url}/v1/anchor`, bodies[i]);
      assert.equal(r.status, 200, r.text);
      assert.equal((r.body as { replay?: boolean }).replay, false, `submission ${i} was not stored by its refused attempt`);
    }
  },
);

/**
 * The keep-alive client: one request on a connection, then (after `go` is acknowledged by the
 * stalled server thread's message) a second one on the same connection while the server is stalled.
 * Answers "STATUS" or "CLOSED" per request.
 */
const KEEP_ALIVE_CLIENT = `
const net = require('node:net');
const { parentPort, workerData } = require('node:worker_threads');
const sock = net.connect(workerData.port, '127.0.0.1');
let buf = '';
let want = null;
sock.on('data', (d) => {
  buf += d.toString('latin1');
  const m = /^HTTP\\/1\\.1 (\\d{3})[^]*?\\r\\ncontent-length: (\\d+)\\r\\n[^]*?\\r\\n\\r\\n/i.exec(buf);
  if (m !== null && buf.length >= m[0].length + Number(m[2])) {
    buf = buf.slice(m[0].length + Number(m[2]));
    const w = want; want = null; w?.(m[1]);
  }
});
sock.on('error', () => undefined);
sock.on('close', () => { const w = want; want = null; w?.('CLOSED'); });
const ask = () => new Promise((resolve) => { want = resolve; sock.write('GET /x HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'); });
sock.on('connect', async () => {
  const first = await ask();
  parentPort.postMessage('stall');
  await new Promise((r) => setTimeout(r, workerData.sendAfterMs)); // the server is stalled now
  const second = await ask();
  parentPort.postMessage([first, second]);
  sock.destroy();
});
`;

void test(
  'a request sent on a kept-alive connection while the server is stalled past its idle timeout is answered',
  { timeout: 60_000 },
  async () => {
    // keep-alive idle 300 ms (Node closes 1 s later); the stall lasts 2.5 s and the request comes 0.5 s into it
    const s = await start({ keepAliveTimeoutMs: 300 }, (app) => {
      app.get('/x', () => Promise.resolve({ ok: true }));
    });
    const worker = new Worker(KEEP_ALIVE_CLIENT, { eval: true, workerData: { port: s.port, sendAfterMs: 500 } });
    try {
      const answers = await new Promise<unknown>((resolve, reject) => {
        worker.on('error', reject);
        worker.on('message', (m: unknown) => {
          if (m === 'stall')
            busy(2_500); // in an I/O callback of the server's thread
          else resolve(m);
        });
      });
      assert.deepEqual(answers, ['200', '200']);
    } finally {
      await worker.terminate();
      await s.close();
    }
  },
);
