// SPEC §3.6.7 limits and §3.6.10 item 11 (hostile input), each over a loopback node with the bound
// set low, and the per-IP keying (IPv6 per /64) and escrow bounds as units:
// * --kel-rate-limit: the request past the burst → 429 rate_limited with Retry-After;
// * --kel-prefix-events-per-minute: the event past it → 429 kel_quota_exceeded, nothing stored;
// * --kel-new-prefixes-per-day: a flood of new prefixes from one IP stops at the quota (429), a
//   held prefix of that IP still gets its receipt;
// * --kel-ip-bytes-per-day: the event that would pass the IP's byte allowance → 429;
// * --kel-max-prefixes / --kel-ledger-max-bytes → 503 kel_capacity_exhausted;
// * --kel-max-bytes per prefix → 422 kel_event_invalid reason oversize;
// * escrow: ≤ 4 SAIDs per sn, ≤ 64 per IP per prefix, 1 000 per IP, total; /64 keying.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KelEscrow, DEFAULT_ESCROW_LIMITS, type EscrowEntry } from '../../src/kel-witness/escrow.ts';
import { DEFAULT_KEL_QUOTA_LIMITS, KelQuotas, quotaClient } from '../../src/kel-witness/quota.ts';
import type { KelWitnessLimits } from '../../src/kel-witness/service.ts';
import type { RunningWitness } from '../../src/witness/node.ts';
import { Controller, problemOf, send, startKelNodeFor, type Sent } from './harness.ts';

const OPEN: Partial<KelWitnessLimits> = { rateLimit: null, prefixEventsPerMinute: 10_000, newPrefixesPerDay: 0, ipBytesPerDay: 0 };

const withNode = (t: { after: (fn: () => Promise<void>) => void }, limits: Partial<KelWitnessLimits>) =>
  startKelNodeFor(t, { ...OPEN, ...limits });

async function inception(node: RunningWitness, w: string, tag: number): Promise<{ ctl: Controller; res: Sent }> {
  const ctl = await Controller.create(tag);
  const icp = ctl.incept([w]);
  return { ctl, res: await send(node.url, '/receipts', icp.raw, ctl.sign(icp)) };
}

function assertProblem(res: Sent, status: number, code: string, reason?: string): void {
  assert.equal(res.status, status, res.text);
  const p = problemOf(res.text);
  assert.equal(p.code, code, res.text);
  if (reason !== undefined) assert.equal(p.reason, reason);
}

void test('--kel-rate-limit: the request past the burst → 429 rate_limited with Retry-After', async (t) => {
  const { node, w } = await withNode(t, { rateLimit: { rps: 0.01, burst: 2 } });
  const { ctl, res } = await inception(node, w, 51);
  assert.equal(res.status, 200);
  const ixn1 = ctl.interact();
  assert.equal((await send(node.url, '/receipts', ixn1.raw, ctl.sign(ixn1))).status, 200);
  const ixn2 = ctl.interact();
  const third = await send(node.url, '/receipts', ixn2.raw, ctl.sign(ixn2));
  assertProblem(third, 429, 'rate_limited');
  assert.ok(Number(third.headers.get('retry-after')) >= 1);
  // POST / is counted too
  assertProblem(await send(node.url, '/', ixn2.raw, ctl.sign(ixn2)), 429, 'rate_limited');
});

void test('--kel-prefix-events-per-minute: the event past it → 429 kel_quota_exceeded, nothing stored', async (t) => {
  const { node, w } = await withNode(t, { prefixEventsPerMinute: 2 });
  const { ctl, res } = await inception(node, w, 52);
  assert.equal(res.status, 200);
  const ixn1 = ctl.interact();
  assert.equal((await send(node.url, '/receipts', ixn1.raw, ctl.sign(ixn1))).status, 200);
  const ixn2 = ctl.interact();
  const over = await send(node.url, '/receipts', ixn2.raw, ctl.sign(ixn2));
  assertProblem(over, 429, 'kel_quota_exceeded');
  assert.ok(Number(over.headers.get('retry-after')) >= 1);
  assert.equal((await node.store.kelLedger.events(ctl.pre)).length, 2, 'nothing stored');
});

void test('--kel-new-prefixes-per-day: a new-prefix flood from one IP stops at the quota; its held prefix still gets receipts', async (t) => {
  const { node, w } = await withNode(t, { newPrefixesPerDay: 3 });
  const statuses: number[] = [];
  let first: Controller | undefined;
  for (let i = 0; i < 6; i++) {
    const { ctl, res } = await inception(node, w, 60 + i);
    first ??= ctl;
    statuses.push(res.status);
    if (res.status !== 200) assertProblem(res, 429, 'kel_quota_exceeded');
  }
  assert.deepEqual(statuses, [200, 200, 200, 429, 429, 429]);
  assert.equal((await node.store.kelLedger.counts()).held, 3);
  const ixn = first!.interact();
  assert.equal((await send(node.url, '/receipts', ixn.raw, first!.sign(ixn))).status, 200, 'a held prefix is not a new one');
});

void test('--kel-ip-bytes-per-day: the event that would pass the client IP allowance → 429 kel_quota_exceeded', async (t) => {
  // The allowance holds an icp and one ixn (event + -A attachment), not a second ixn.
  const probe = await Controller.create(70);
  const icp = probe.incept(['BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']);
  const ixn = probe.interact();
  const icpSize = icp.raw.length + probe.sign(icp).length;
  const ixnSize = ixn.raw.length + probe.sign(ixn).length;
  const { node, w } = await withNode(t, { ipBytesPerDay: icpSize + ixnSize + Math.floor(ixnSize / 2) });
  const { ctl, res } = await inception(node, w, 71);
  assert.equal(res.status, 200, res.text);
  const ixn1 = ctl.interact();
  assert.equal((await send(node.url, '/receipts', ixn1.raw, ctl.sign(ixn1))).status, 200);
  const ixn2 = ctl.interact();
  const over = await send(node.url, '/receipts', ixn2.raw, ctl.sign(ixn2));
  assertProblem(over, 429, 'kel_quota_exceeded');
  assert.ok(Number(over.headers.get('retry-after')) >= 1);
});

void test('--kel-max-prefixes and --kel-ledger-max-bytes → 503 kel_capacity_exhausted', async (t) => {
  const a = await withNode(t, { maxPrefixes: 1 });
  const one = await inception(a.node, a.w, 81);
  assert.equal(one.res.status, 200);
  assertProblem((await inception(a.node, a.w, 82)).res, 503, 'kel_capacity_exhausted');
  const ixn = one.ctl.interact();
  assert.equal((await send(a.node.url, '/receipts', ixn.raw, one.ctl.sign(ixn))).status, 200, 'a held prefix continues');

  const b = await withNode(t, { ledgerMaxBytes: 700 });
  const first = await inception(b.node, b.w, 83);
  assert.equal(first.res.status, 200);
  const ixn1 = first.ctl.interact();
  const ixn2 = first.ctl.interact();
  const r1 = await send(b.node.url, '/receipts', ixn1.raw, first.ctl.sign(ixn1));
  const r2 = r1.status === 200 ? await send(b.node.url, '/receipts', ixn2.raw, first.ctl.sign(ixn2)) : r1;
  assertProblem(r2, 503, 'kel_capacity_exhausted');
  assert.ok((await b.node.store.kelLedger.counts()).bytes <= 700);
});

void test('--kel-max-bytes per prefix → 422 kel_event_invalid reason oversize, nothing stored', async (t) => {
  const { node, w } = await withNode(t, { maxBytes: 900 });
  const { ctl, res } = await inception(node, w, 91);
  assert.equal(res.status, 200);
  let last: Sent | undefined;
  for (let i = 0; i < 5; i++) {
    const ixn = ctl.interact();
    last = await send(node.url, '/receipts', ixn.raw, ctl.sign(ixn));
    if (last.status !== 200) break;
  }
  assertProblem(last!, 422, 'kel_event_invalid', 'oversize');
  assert.ok((await node.store.kelLedger.prefixBytes(ctl.pre)) <= 900);
});

void test('per-IP keys: IPv4 by address, IPv6 by /64; the daily buckets refill continuously', () => {
  assert.equal(quotaClient('192.0.2.7'), '192.0.2.7');
  assert.equal(quotaClient('2001:db8:1:2:aaaa::1'), quotaClient('2001:db8:1:2:bbbb::9'));
  assert.notEqual(quotaClient('2001:db8:1:2::1'), quotaClient('2001:db8:1:3::1'));
  let now = 0;
  const q = new KelQuotas({ ...DEFAULT_KEL_QUOTA_LIMITS, rateLimit: { rps: 1, burst: 1 }, newPrefixesPerDay: 2 }, () => now);
  assert.equal(q.admit('2001:db8::1'), null);
  assert.equal(q.admit('2001:db8::2')?.kind, 'problem', 'the same /64 shares one bucket');
  assert.equal(q.admit('2001:db8:0:1::1'), null, 'another /64 has its own');
  for (const ip of ['2001:db8::1', '2001:db8::ffff']) {
    assert.equal(q.check(`E${ip}`, ip, false, 10), null);
    q.charge(`E${ip}`, ip, { witnessed: 1, bytes: 10, newPrefix: true });
  }
  assert.equal(q.check('Ex', '2001:db8::3', false, 10)?.kind, 'problem', 'two new prefixes per day per /64');
  now += 12 * 60 * 60 * 1000; // half a day refills one
  assert.equal(q.check('Ex', '2001:db8::3', false, 10), null);
});

void test('escrow bounds: ≤ 4 SAIDs per sn, ≤ 64 per IP per prefix, 1 000 per IP, the total; nothing evicted', () => {
  const entry = (prefix: string, sn: number, said: string, ip: string): EscrowEntry => ({
    prefix,
    sn,
    said,
    t: 'ixn',
    di: null,
    body: new Uint8Array(10),
    attachment: '',
    ip,
    arrivedMs: 0,
    bytes: 10,
  });
  const e = new KelEscrow({ ...DEFAULT_ESCROW_LIMITS, totalEvents: 1_100 });
  for (let i = 0; i < 4; i++) assert.equal(e.add(entry('P', 5, `S${i}`, 'a'), 0).ok, true);
  assert.equal(e.add(entry('P', 5, 'S4', 'b'), 0).ok, false, 'a fifth SAID at one sn');
  for (let sn = 6; sn < 66; sn++) assert.equal(e.add(entry('P', sn, 'S', 'a'), 0).ok, true);
  assert.equal(e.add(entry('P', 66, 'S', 'a'), 0).ok, false, 'the 65th event of one IP for one prefix');
  assert.equal(e.add(entry('P', 66, 'S', 'b'), 0).ok, true, 'another IP may add to that prefix');
  let held = 0;
  for (let p = 0; held < 1_000 - 64; p++)
    for (let sn = 1; sn <= 60 && held < 1_000 - 64; sn++, held++) assert.equal(e.add(entry(`Q${p}`, sn, 'S', 'a'), 0).ok, true);
  assert.equal(e.add(entry('R', 1, 'S', 'a'), 0).ok, false, 'one IP stops at 1 000');
  assert.equal(e.size, 1_001);
  for (let i = 0; i < 99; i++) assert.equal(e.add(entry(`T${i}`, 1, 'S', `c${i}`), 0).ok, true);
  assert.equal(e.add(entry('U', 1, 'S', 'd'), 0).ok, false, 'the total bound');
  assert.equal(e.size, 1_100, 'nothing evicted');
});
