// Unit tests: the RPS[:BURST] flag parser, token buckets (with a fake clock) and the in-flight
// semaphore with its FIFO queue.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRateLimit, TokenBuckets } from '../../src/server/rate-limit.ts';
import { InFlightLimiter } from '../../src/server/in-flight.ts';
import type { WaitOutcome } from '../../src/server/in-flight.ts';

void test('parseRateLimit: RPS[:BURST], 0 = off, default burst max(1, 2×rps)', () => {
  assert.equal(parseRateLimit('0'), null);
  assert.equal(parseRateLimit('0:5'), null);
  assert.deepEqual(parseRateLimit('10'), { rps: 10, burst: 20 });
  assert.deepEqual(parseRateLimit('10:20'), { rps: 10, burst: 20 });
  assert.deepEqual(parseRateLimit('2.5:3'), { rps: 2.5, burst: 3 });
  assert.deepEqual(parseRateLimit('0.2'), { rps: 0.2, burst: 1 });
  for (const bad of ['', '-1', '10:', '10:0', ':5', 'ten', '1e3', '10:2.5', '010', '10:20:30']) {
    assert.throws(() => parseRateLimit(bad), { code: 'invalid_rate_limit' }, bad);
  }
});

void test('token bucket: burst, refill, Retry-After in whole seconds until the next token', () => {
  let now = 0;
  const b = new TokenBuckets({ rps: 0.5, burst: 2 }, { now: () => now });
  assert.equal(b.take('a').ok, true);
  assert.equal(b.take('a').ok, true);
  assert.deepEqual(b.take('a'), { ok: false, retryAfterSeconds: 2 }); // one token every 2 s
  assert.equal(b.take('b').ok, true); // separate key
  now = 1500;
  assert.deepEqual(b.take('a'), { ok: false, retryAfterSeconds: 1 }); // 0.75 token: 0.5 s left → 1
  now = 2000;
  assert.equal(b.take('a').ok, true);
  now = 1_000_000;
  assert.equal(b.take('a').ok, true);
  assert.equal(b.take('a').ok, true); // refilled to the burst, not beyond
  assert.equal(b.take('a').ok, false);
});

const sizeOf = (b: TokenBuckets): number => b.size;

void test('token bucket: memory bounded; idle (full) buckets evicted first, else the LRU one', () => {
  let now = 0;
  const b = new TokenBuckets({ rps: 1, burst: 1 }, { maxClients: 3, now: () => now });
  b.take('a');
  b.take('b');
  b.take('c');
  assert.equal(b.size, 3);
  b.take('d'); // nothing is full yet: LRU 'a' goes
  assert.equal(b.size, 3);
  assert.equal(b.take('a').ok, true); // fresh bucket again
  now = 10_000; // everything refilled
  for (let i = 0; i < 100; i++) b.take(`k${i}`);
  assert.ok(sizeOf(b) <= 3);
});

void test('in-flight limiter: bound, FIFO hand-over, queue cap, timeout, cancel', async () => {
  const changes: [number, number][] = [];
  const l = new InFlightLimiter(2, 2, (a, q) => changes.push([a, q]));
  assert.equal(l.tryAcquire(), true);
  assert.equal(l.tryAcquire(), true);
  assert.equal(l.tryAcquire(), false);
  const got: string[] = [];
  const w1 = l.enqueue(10_000, (o: WaitOutcome) => got.push(`w1:${o}`));
  const w2 = l.enqueue(10_000, (o: WaitOutcome) => got.push(`w2:${o}`));
  assert.ok(w1 !== null && w2 !== null);
  assert.equal(
    l.enqueue(10_000, () => got.push('w3')),
    null,
  ); // queue full
  assert.equal(l.queued, 2);
  l.release(); // hands the slot to w1, count unchanged
  assert.deepEqual(got, ['w1:admitted']);
  assert.equal(l.inFlight, 2);
  assert.equal(l.cancel(w2), true);
  assert.equal(l.cancel(w2), false);
  l.release();
  l.release();
  assert.equal(l.inFlight, 0);
  assert.equal(l.tryAcquire(), true);
  assert.equal(l.tryAcquire(), true);
  const timedOut = await new Promise<WaitOutcome>((resolve) => l.enqueue(20, resolve));
  assert.equal(timedOut, 'timeout');
  assert.equal(l.queued, 0);
  // the listener saw every change and sums to the current state
  let sumIn = 0;
  let sumQ = 0;
  for (const [a, q] of changes) {
    sumIn += a;
    sumQ += q;
  }
  assert.deepEqual([sumIn, sumQ], [l.inFlight, l.queued]);
});
