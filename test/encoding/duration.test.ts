// Durations of the command line (SPEC §4.1 "Durations": an integer with s, m, h or d; bare = seconds).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration } from '../../src/encoding/duration.ts';

void test('SPEC §4.1 examples and bare seconds', () => {
  assert.deepEqual(['90s', '5m', '1h', '7d', '42', '0', '0s'].map(parseDuration), [90, 300, 3600, 604_800, 42, 0, 0]);
});

void test('anything else is invalid_duration', () => {
  for (const bad of ['', 's', '1.5h', '-1s', '+1', '01m', '1H', '1 h', '1h30m', '1w', '9999999999999999d'])
    assert.throws(() => parseDuration(bad), { code: 'invalid_duration' }, bad);
});
