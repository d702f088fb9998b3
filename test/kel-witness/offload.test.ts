// SPEC §3.6.2 "Off the event loop" (src/kel-witness/offload.ts, issue 29): large and P-256
// requests are parsed, SAID-checked and signature-checked on a verification worker, over loopback:
// * a worst-case inception (32 keys, 256 long seals, ≈ 48 KB) and a large ixn are receipted, the
//   receipt verifies, the stored KEL re-serves the same bytes, and kel_offloaded_total{job=
//   "submission"} counts both (so the test cannot pass inline);
// * a P-256 controller: its icp is checked on a worker, its ixn's signatures too (job "signatures");
// * a wrong SAID, a forged signature, a non-canonical body, a malformed attachment and a forged P-256
//   ixn signature get the same status and problem+json from a node with workers as from one
//   without (offloadWorkers 0: everything inline);
// * at capacity (offloadMaxPending 0) a large request is 503 overloaded with Retry-After and
//   nothing is stored, while small requests are still receipted;
// * while bursts of worst-case bodies are checked, the event loop's CPU time per event is well under
//   that of a node checking them inline (same process, same run, interleaved: a ratio of CPU times),
//   and /health keeps answering, its slowest answer under the burst's inline event-loop time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verifyEd25519 } from '../../src/crypto/ed25519.ts';
import { signEvent } from '../../src/keri/build.ts';
import { parseWitnessAttachments } from '../../src/keri/cesr-attachments.ts';
import { parseEvent } from '../../src/keri/event.ts';
import { decodeQb64 } from '../../src/keri/qb64.ts';
import { storedLazily } from '../../src/kel-witness/checks.ts';
import { KelOffload } from '../../src/kel-witness/offload.ts';
import type { KelWitnessLimits } from '../../src/kel-witness/service.ts';
import type { RunningWitness } from '../../src/witness/node.ts';
import { Controller, send, startKelNodeFor, type Sent } from './harness.ts';
import { controller, longSeal, manySeals, wire, worstCase, type Wire } from './offload-events.ts';

const OPEN: Partial<KelWitnessLimits> = { rateLimit: null, prefixEventsPerMinute: 100_000, newPrefixesPerDay: 0, ipBytesPerDay: 0 };

const withNode = (t: { after: (fn: () => Promise<void>) => void }, limits: Partial<KelWitnessLimits>) =>
  startKelNodeFor(t, { ...OPEN, ...limits });

const post = (node: RunningWitness, m: Wire): Promise<Sent> => send(node.url, '/receipts', m.raw, m.att);

async function offloaded(node: RunningWitness): Promise<{ submission: number; signatures: number; rejected: number }> {
  const text = await (await fetch(`${node.url}/metrics`)).text();
  const n = (re: RegExp): number => Number(re.exec(text)?.[1] ?? 0);
  return {
    submission: n(/^kel_offloaded_total\{job="submission"\} (\d+)/m),
    signatures: n(/^kel_offloaded_total\{job="signatures"\} (\d+)/m),
    rejected: n(/^kel_offload_rejected_total (\d+)/m),
  };
}

/** The receipt answers `m` and its `-C` couple is the witness's valid signature over B(e). */
function assertReceipt(res: Sent, m: Wire, w: string): void {
  assert.equal(res.status, 200, res.text);
  const e = parseEvent(JSON.parse(m.raw));
  const end = res.text.indexOf('}') + 1;
  const rct = JSON.parse(res.text.slice(0, end)) as { t: string; i: string; s: string; d: string };
  assert.deepEqual([rct.t, rct.i, rct.s, rct.d], ['rct', e.i, e.s, e.d]);
  const couple = parseWitnessAttachments(res.text.slice(end), false).couples[0]!;
  assert.equal(couple.prefix, w);
  assert.ok(verifyEd25519(decodeQb64(w, ['B'])!.raw, e.bytes, couple.signature), 'the receipt signature verifies');
}

void test('offload: a worst-case inception and a large ixn are receipted through a verification worker', async (t) => {
  const { node, w } = await withNode(t, { offloadWorkers: 1 });
  const c = worstCase(w);
  assert.ok(c.icp.raw.length > 40_000, `the worst case is ${c.icp.raw.length} bytes`);
  assertReceipt(await post(node, c.icp), c.icp, w);
  const ixn = wire(c.kel.interact(manySeals(200)));
  assertReceipt(await post(node, ixn), ixn, w);
  assert.deepEqual(await offloaded(node), { submission: 2, signatures: 0, rejected: 0 });
  // A replay is checked again (on a worker) and answered with the stored receipt.
  assertReceipt(await post(node, c.icp), c.icp, w);
  const kel = await (await fetch(`${node.url}/query?typ=kel&pre=${c.kel.prefix}`)).text();
  assert.ok(kel.startsWith(c.icp.raw), 'the stored inception is the body received');
  assert.ok(kel.includes(ixn.raw), 'the stored ixn is the body received');
  // A small Ed25519 event stays on the event loop.
  const small = wire(c.kel.interact([longSeal(1)]));
  assertReceipt(await post(node, small), small, w);
  assert.equal((await offloaded(node)).submission, 3);
});

void test('offload: a P-256 controller: its icp is checked on a worker, its ixn signatures too', async (t) => {
  const { node, w } = await withNode(t, { offloadWorkers: 1 });
  const c = controller(w, { curve: 'p256', keys: 2 });
  assert.ok(c.icp.raw.length < 4096, 'small: offloaded for its P-256 keys');
  assertReceipt(await post(node, c.icp), c.icp, w);
  assert.deepEqual(await offloaded(node), { submission: 1, signatures: 0, rejected: 0 });
  const ixn = wire(c.kel.interact([longSeal(2)]));
  assertReceipt(await post(node, ixn), ixn, w);
  assert.deepEqual(await offloaded(node), { submission: 1, signatures: 1, rejected: 0 });
  // A rotation signed by keys not committed to is refused; by the committed ones (prior n exposed), receipted.
  const other = controller(w, { curve: 'p256', keys: 2 });
  const built = c.kel.rotate({ signers: c.next, next: other.next });
  const refused = await post(node, { raw: JSON.stringify(built.event), att: signEvent(built.event, other.signers) });
  assert.equal(refused.status, 422, refused.text);
  assert.equal((JSON.parse(refused.text) as { reason: string }).reason, 'signature_invalid');
  const rot = wire(built);
  assertReceipt(await post(node, rot), rot, w);
  assert.deepEqual(await offloaded(node), { submission: 3, signatures: 1, rejected: 0 });
});

/** Replace the character at `at` of `text` by another base64url character. */
function flip(text: string, at: number): string {
  return text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
}

void test('offload: bad requests get the same answer from a worker as inline', async (t) => {
  const inline = await withNode(t, { offloadWorkers: 0 });
  const workers = await withNode(t, { offloadWorkers: 1 });
  assert.equal(inline.w, workers.w, 'the same witness key: the same events are valid at both');
  const w = inline.w;
  const big = worstCase(w);
  const p256 = controller(w, { curve: 'p256' });
  for (const node of [inline.node, workers.node]) assertReceipt(await post(node, p256.icp), p256.icp, w);
  const wrongSaid: Wire = { raw: big.icp.raw.replace(`"d":"${big.kel.prefix}"`, `"d":"E${'Q'.repeat(43)}"`), att: big.icp.att };
  assert.notEqual(wrongSaid.raw, big.icp.raw);
  const p256Ixn = wire(p256.kel.interact([longSeal(3)]));
  const cases: Record<string, Wire> = {
    'wrong SAID': wrongSaid,
    'forged signature': { raw: big.icp.raw, att: flip(big.icp.att, 4 + 2 + 20) },
    'not B(e)': { raw: big.icp.raw.replace('{"v"', '{ "v"'), att: big.icp.att },
    'not JSON': { raw: big.icp.raw.slice(0, -1), att: big.icp.att },
    'malformed attachment': { raw: big.icp.raw, att: big.icp.att + 'AA' },
    'forged P-256 ixn signature': { raw: p256Ixn.raw, att: flip(p256Ixn.att, 4 + 2 + 20) },
    'ixn with too many seals': { raw: JSON.stringify({ ...JSON.parse(p256Ixn.raw), a: manySeals(257) }), att: p256Ixn.att },
  };
  for (const [name, m] of Object.entries(cases)) {
    const a = await post(inline.node, m);
    const b = await post(workers.node, m);
    assert.ok(a.status >= 400 && a.status < 500, `${name}: ${a.status} ${a.text}`);
    assert.equal(b.status, a.status, name);
    assert.equal(b.headers.get('content-type'), a.headers.get('content-type'), name);
    assert.deepEqual(JSON.parse(b.text), JSON.parse(a.text), name);
  }
  assert.deepEqual(await offloaded(inline.node), { submission: 0, signatures: 0, rejected: 0 });
  // Every case went to a worker: six large bodies, the P-256 icp, and the forged P-256 ixn's signatures.
  assert.deepEqual(await offloaded(workers.node), { submission: 7, signatures: 1, rejected: 0 });
  // The events themselves are still accepted by both after the refusals.
  for (const node of [inline.node, workers.node]) assertReceipt(await post(node, big.icp), big.icp, w);
});

void test('offload: at capacity a large request is 503 overloaded with Retry-After, nothing stored; small ones go on', async (t) => {
  const { node, w } = await withNode(t, { offloadWorkers: 1, offloadMaxPending: 0 });
  const big = worstCase(w);
  const res = await post(node, big.icp);
  assert.equal(res.status, 503, res.text);
  assert.equal((JSON.parse(res.text) as { code: string }).code, 'overloaded');
  assert.equal(res.headers.get('retry-after'), '1');
  assert.equal((await fetch(`${node.url}/query?typ=kel&pre=${big.kel.prefix}`)).status, 404, 'nothing stored');
  const ctl = await Controller.create(9);
  const icp = ctl.incept([w]);
  assert.equal((await send(node.url, '/receipts', icp.raw, ctl.sign(icp))).status, 200);
  assert.deepEqual(await offloaded(node), { submission: 0, signatures: 0, rejected: 1 });
});

void test('offload: a worker that stops has its jobs done on the event loop, with the same answers', async () => {
  const pool = new KelOffload(1);
  const c = worstCase('BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
  const body = new TextEncoder().encode(c.icp.raw);
  const pending = pool.submission('receipts', body, c.icp.att);
  await pool.close(); // terminates the worker while the job waits
  const r = await pending;
  assert.ok(r.kind === 'candidate', JSON.stringify(r));
  assert.equal(r.c.stateless, null, 'check 6 passed');
  assert.equal(r.c.e.d, c.kel.prefix);
  assert.equal(r.c.e.a.length, 256, 'the seals, parsed again when asked');
});

/** GET /health latencies (ms) while `burst` copies of `m` are posted at once (`probing`), and this thread's CPU time per post (ms). */
async function healthDuringBurst(
  node: RunningWitness,
  m: Wire,
  burst: number,
  probing: boolean,
): Promise<{ health: number[]; cpuMs: number }> {
  const health: number[] = [];
  let done = !probing;
  const cpu0 = process.threadCpuUsage();
  const posts = Promise.all(Array.from({ length: burst }, () => post(node, m))).finally(() => {
    done = true;
  });
  const probe = (async () => {
    while (!done) {
      const s = performance.now();
      const r = await fetch(`${node.url}/health`);
      await r.arrayBuffer();
      health.push(performance.now() - s);
    }
  })();
  const answers = await posts;
  const cpu = process.threadCpuUsage(cpu0);
  await probe;
  for (const a of answers) assert.equal(a.status, 200, a.text);
  return { health, cpuMs: (cpu.user + cpu.system) / 1000 / burst };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Infinity;

void test('offload: /health keeps answering while a burst of worst-case bodies is checked', async (t) => {
  const inline = await withNode(t, { offloadWorkers: 0 });
  const workers = await withNode(t, { offloadWorkers: 1 });
  const big = worstCase(inline.w);
  for (const n of [inline, workers]) assertReceipt(await post(n.node, big.icp), big.icp, n.w);
  const burst = 24;
  // Interleaved, twice each, so both see the machine's load; every post after the first is a replay, checked in full.
  const seen = { inline: { health: [] as number[], cpuMs: 0 }, workers: { health: [] as number[], cpuMs: 0 } };
  for (let round = 0; round < 2; round++) {
    for (const [name, n] of [
      ['inline', inline],
      ['workers', workers],
    ] as const) {
      // The CPU time without /health polled (answered more often when the loop is free), then the probe.
      const { cpuMs } = await healthDuringBurst(n.node, big.icp, burst, false);
      const { health } = await healthDuringBurst(n.node, big.icp, burst, true);
      seen[name].health.push(...health);
      seen[name].cpuMs += cpuMs / 2;
      t.diagnostic(
        `${name}: event loop ${cpuMs.toFixed(1)} ms CPU per event (client included); /health ${health.length} answers, median ${median(health).toFixed(1)} ms, slowest ${Math.max(...health).toFixed(1)} ms`,
      );
    }
  }
  assert.ok((await offloaded(workers.node)).submission >= 2 * burst);
  // CPU time, not wall time: the event loop's share of a worst-case event, same process, same run.
  assert.ok(
    seen.workers.cpuMs < 0.75 * seen.inline.cpuMs,
    `event-loop CPU per event: ${seen.workers.cpuMs.toFixed(1)} ms with workers, ${seen.inline.cpuMs.toFixed(1)} ms inline`,
  );
  // Generous: /health answered within what the burst would have held the loop for had it been checked inline.
  assert.ok(seen.workers.health.length > 0, '/health answered during the bursts');
  const slowest = Math.max(...seen.workers.health);
  assert.ok(
    slowest < seen.inline.cpuMs * burst,
    `/health's slowest answer with workers ${slowest.toFixed(1)} ms, the burst inline ${(seen.inline.cpuMs * burst).toFixed(0)} ms of event loop`,
  );
});

void test('offload: the event before a new one is parsed again only if more than its d is read (storedLazily)', () => {
  const row = { prefix: 'EP', sn: 3, said: 'ED', t: 'ixn', event: 'not json: parsing it throws' } as Parameters<typeof storedLazily>[0];
  const e = storedLazily(row);
  assert.deepEqual([e.d, e.i, e.sn, e.t], ['ED', 'EP', 3, 'ixn'], 'from the row, nothing parsed');
  assert.throws(() => e.a, SyntaxError, 'anything else parses the stored text');
});
