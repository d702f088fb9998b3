// The per-origin token bucket of SPEC §5 check 4: capacity max(1, qpd/24), refill qpd/86400 per s,
// starts full, Retry-After = whole seconds to the next token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OriginQuota, bucketCapacity } from '../../src/cosign/quota.ts';

const T0 = 1_700_000_000_000;

void test('capacity and refill', () => {
  assert.equal(bucketCapacity(1), 1);
  assert.equal(bucketCapacity(24), 1);
  assert.equal(bucketCapacity(240), 10);
  assert.equal(bucketCapacity(86400), 3600);

  const q = new OriginQuota();
  // qpd 240: 10 tokens, one every 360 s.
  for (let i = 0; i < 10; i++) assert.equal(q.take('a', 240, T0), null);
  assert.equal(q.take('a', 240, T0), 360);
  assert.equal(q.take('a', 240, T0 + 1), 360); // 359.999 s → rounds up
  assert.equal(q.take('a', 240, T0 + 359_000), 1);
  assert.equal(q.take('a', 240, T0 + 360_000), null);
  assert.equal(q.take('a', 240, T0 + 360_000), 360);
  // Never more than capacity after a long pause.
  for (let i = 0; i < 10; i++) assert.equal(q.take('a', 240, T0 + 86_400_000 * 5), null);
  assert.notEqual(q.take('a', 240, T0 + 86_400_000 * 5), null);
});

void test('per origin; no qpd = no quota; a clock going backwards does not mint tokens', () => {
  const q = new OriginQuota();
  assert.equal(q.take('a', 24, T0), null);
  assert.equal(q.take('a', 24, T0), 3600);
  assert.equal(q.take('b', 24, T0), null);
  for (let i = 0; i < 1000; i++) assert.equal(q.take('c', undefined, T0), null);
  assert.equal(q.take('a', 24, T0 - 10_000_000), 3600);
  assert.equal(q.take('a', 24, T0 + 1_800_000), 1800);
  q.retain((o) => o !== 'a');
  assert.equal(q.size, 1);
  assert.equal(q.take('a', 24, T0), null); // a forgotten bucket starts full again
});
