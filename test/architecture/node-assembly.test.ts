// "One node, many parts" (docs/ARCHITECTURE.md): the witness node's assembly, src/witness/node.ts,
// imports only the parts (src/<part>/part.ts), the keys, the store, the log and the server layer,
// plus its own folder's routes/health/status page/config. A feature plugs in as a part in its own
// folder; it does not reach into the node's file with imports of its internals. And node.ts stays
// small (under 250 lines), every part implements the contract of src/server/part.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readImportGraph } from './import-graph.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const NODE = 'src/witness/node.ts';
const graph = readImportGraph(ROOT);

/** What node.ts may import: a part, or a file of keys, store, log, server, its own folder, the version. */
const ALLOWED: readonly RegExp[] = [
  /^src\/[a-z-]+\/part\.ts$/,
  /^src\/keys\//,
  /^src\/store\//,
  /^src\/log\//,
  /^src\/server\//,
  /^src\/witness\/(?!node\.ts$)[a-z-]+\.ts$/,
  /^src\/version\.ts$/,
];

/** The parts of the witness node, each in its own folder. */
const PARTS = ['src/anchoring/part.ts', 'src/cosign/part.ts', 'src/log-witness/part.ts', 'src/registry/part.ts', 'src/bastion/part.ts'];

void test(`${NODE} imports only parts, keys, store, log and server (and its own folder)`, () => {
  const files = graph.edges.filter((e) => e.from === NODE && e.target.kind === 'file').map((e) => (e.target as { path: string }).path);
  assert.ok(files.length > 0, `no import of ${NODE} found`);
  const outside = files.filter((f) => !ALLOWED.some((re) => re.test(f)));
  assert.deepEqual(outside, [], 'move what node.ts needs behind a part (src/<part>/part.ts) or into the context it lends');
});

void test(`${NODE} starts every part, and each part implements NodePart (src/server/part.ts)`, () => {
  const imported = new Set(
    graph.edges.filter((e) => e.from === NODE && e.target.kind === 'file').map((e) => (e.target as { path: string }).path),
  );
  for (const part of PARTS) {
    assert.ok(imported.has(part), `${NODE} does not start ${part}`);
    const text = readFileSync(join(ROOT, part), 'utf8');
    assert.match(text, /extends NodePart\b/, `${part} declares no part type extending NodePart`);
    assert.match(text, /\[Symbol\.asyncDispose\]/, `${part}: a part is disposed by the node's AsyncDisposableStack`);
  }
});

void test(`${NODE} is under 250 lines and keeps no closers list (the AsyncDisposableStack orders shutdown)`, () => {
  const text = readFileSync(join(ROOT, NODE), 'utf8');
  const lines = text.split('\n').length;
  assert.ok(lines < 250, `${NODE} has ${lines} lines`);
  assert.doesNotMatch(text, /closers|\.unshift\(/);
  assert.match(text, /new AsyncDisposableStack\(\)/);
});

void test('no part listens for SIGHUP itself: the CLI installs the one handler (src/cli/sighup.ts)', () => {
  const offenders = PARTS.filter((p) => /process\.on\(\s*'SIGHUP'/.test(readFileSync(join(ROOT, p), 'utf8')));
  assert.deepEqual(offenders, []);
  const handlers = graph.files.filter(
    (f) => f.startsWith('src/cli/') && /process\.on\(\s*'SIGHUP'/.test(readFileSync(join(ROOT, f), 'utf8')),
  );
  assert.deepEqual(handlers, ['src/cli/sighup.ts']);
});
