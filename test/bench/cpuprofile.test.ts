// bench/_cpuprofile.ts: the summary the performance notes quote must attribute self time to the
// right function and area, leave (idle) out of the shares, and add threads together.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { areaOf, summarizeProfiles, type CpuProfile } from '../../bench/_cpuprofile.ts';

const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber });

// root → handler (src/anchoring/batch.ts) → run (better-sqlite3); plus GC and idle samples.
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)') },
    { id: 2, callFrame: frame('handle', 'file:///w/src/anchoring/batch.ts', 9) },
    { id: 3, callFrame: frame('run', 'file:///w/node_modules/better-sqlite3/lib/methods/wrappers.js', 3) },
    { id: 4, callFrame: frame('(garbage collector)') },
    { id: 5, callFrame: frame('(idle)') },
  ],
  samples: [2, 3, 3, 3, 4, 5, 5],
  timeDeltas: [1000, 1000, 1000, 1000, 1000, 5000, 5000],
  startTime: 0,
  endTime: 15000,
};

void test('self time per function and per area; (idle) is counted apart and left out of the shares', () => {
  const s = summarizeProfiles([profile]);
  assert.equal(s.busy_ms, 5);
  assert.equal(s.idle_ms, 10);
  assert.deepEqual(s.functions[0], { what: 'run node_modules/better-sqlite3/lib/methods/wrappers.js:4', ms: 3, share: 0.6 });
  assert.deepEqual(
    s.areas.map((a) => [a.what, a.share]),
    [
      ['better-sqlite3', 0.6],
      ['src/anchoring', 0.2],
      ['(garbage collector)', 0.2],
    ],
  );
});

void test('samples before afterUs (start-up) are left out', () => {
  // sample times: 1, 2, 3, 4, 5, 10, 15 ms; from 4 ms on: run (1 ms), GC (1 ms), idle (10 ms)
  const s = summarizeProfiles([profile], 10, 4000);
  assert.equal(s.busy_ms, 2);
  assert.equal(s.idle_ms, 10);
  assert.deepEqual(
    s.functions.map((f) => f.what),
    ['run node_modules/better-sqlite3/lib/methods/wrappers.js:4', '(garbage collector)'],
  );
});

void test('afterUs counts from the earliest profile: a worker profile that starts later is cut at the same instant', () => {
  const worker = { ...profile, startTime: 2000, endTime: 17000 };
  // the cut at 4 ms after the main profile's start is 2 ms into the worker's: it keeps its samples at 2–5 ms (4 busy ms)
  const s = summarizeProfiles([profile, worker], 10, 4000);
  assert.equal(s.busy_ms, 2 + 4);
});

void test('threads add up; top limits the lines', () => {
  const s = summarizeProfiles([profile, profile], 1);
  assert.equal(s.busy_ms, 10);
  assert.equal(s.functions.length, 1);
  assert.equal(s.areas.length, 1);
  assert.equal(s.functions[0]!.ms, 6);
});

void test('areas: scoped packages, node internals, native frames, src files at the top level', () => {
  assert.equal(areaOf('x', 'file:///w/node_modules/@fastify/ajv-compiler/index.js'), '@fastify/ajv-compiler');
  assert.equal(areaOf('x', 'node:internal/crypto/sig'), 'node:internal/crypto');
  assert.equal(areaOf('x', 'node:_http_server'), 'node:_http_server');
  assert.equal(areaOf('digest', ''), '(native)');
  assert.equal(areaOf('(program)', ''), '(program)');
  assert.equal(areaOf('x', 'file:///w/src/index.ts'), 'src/index.ts');
});
