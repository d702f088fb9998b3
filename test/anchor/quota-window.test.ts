// Party quotas (src/anchor/quota-window.ts): the binary-search windows of quotaRetryAfter give the answers of the plain
// definition (filter the window, count, find the oldest counted event), and insertSorted keeps
// the times ascending whatever order co-signs are decided in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { DAY, insertSorted, MINUTE, quotaRetryAfter, type QuotaDefaults } from '../../src/anchor/quota-window.ts';

function reference(
  limits: { anchorsPerMinute: number; newSeedsPerDay: number },
  anchors: number[],
  seeds: number[],
  newSeed: boolean,
  now: number,
): number | null {
  const recent = anchors.filter((t) => t > now - MINUTE);
  if (recent.length >= limits.anchorsPerMinute)
    return limits.anchorsPerMinute === 0 ? MINUTE : Math.max(1, recent[recent.length - limits.anchorsPerMinute]! + MINUTE - now);
  if (newSeed) {
    const s = seeds.filter((t) => t > now - DAY);
    if (s.length >= limits.newSeedsPerDay)
      return limits.newSeedsPerDay === 0 ? DAY : Math.max(1, s[s.length - limits.newSeedsPerDay]! + DAY - now);
  }
  return null;
}

void test('quotaRetryAfter equals the filter-and-count definition over random windows and limits', () => {
  const defaults: QuotaDefaults = { anchorsPerMinute: 60, newSeedsPerDay: 100 };
  for (let i = 0; i < 5000; i++) {
    const now = 1_700_000_000 + randomInt(0, 1000);
    const anchors: number[] = [];
    const seeds: number[] = [];
    for (let k = randomInt(0, 200); k > 0; k--) insertSorted(anchors, now - randomInt(0, 2 * MINUTE));
    for (let k = randomInt(0, 200); k > 0; k--) insertSorted(seeds, now - randomInt(0, 2 * DAY));
    const limits = { anchorsPerMinute: randomInt(0, 120), newSeedsPerDay: randomInt(0, 150) };
    const newSeed = i % 2 === 0;
    assert.equal(
      quotaRetryAfter(limits, { anchorTimes: anchors, newSeedTimes: seeds }, newSeed, now, defaults),
      reference(limits, anchors, seeds, newSeed, now),
      `case ${i}`,
    );
  }
});

void test('insertSorted keeps ascending order and every element', () => {
  const a: number[] = [];
  const all: number[] = [];
  for (let i = 0; i < 1000; i++) {
    const t = 1000 + i - randomInt(0, 3); // mostly increasing, sometimes a little late
    insertSorted(a, t);
    all.push(t);
  }
  assert.deepEqual(
    a,
    [...all].sort((x, y) => x - y),
  );
});
