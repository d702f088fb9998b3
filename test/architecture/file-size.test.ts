// One concept per module (issue 26 "Must show"): no file of src/ is over 400 lines, and the
// witness node's assembly (src/witness/node.ts) stays under 250. A file that grows past the limit
// is split by concept (as nonces-postgres.ts lost its SQL to nonces-postgres-sql.ts and key-dir.ts
// its serving view to signing-keyring.ts), never by raising the limit here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const MAX_LINES = 400;
const NODE_MAX_LINES = 250;

function list(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return list(p);
    return e.isFile() && e.name.endsWith('.ts') ? [p] : [];
  });
}

const lines = (p: string): number => readFileSync(p, 'utf8').split('\n').length - 1;

void test(`no file of src/ is over ${MAX_LINES} lines`, () => {
  const over = list(join(ROOT, 'src'))
    .map((p) => ({ file: relative(ROOT, p).split(sep).join('/'), n: lines(p) }))
    .filter((f) => f.n > MAX_LINES)
    .map((f) => `${f.file}: ${f.n} lines`);
  assert.deepEqual(over, [], `split by concept:\n${over.join('\n')}`);
});

void test(`src/witness/node.ts (the assembly) is under ${NODE_MAX_LINES} lines`, () => {
  const n = lines(join(ROOT, 'src', 'witness', 'node.ts'));
  assert.ok(n < NODE_MAX_LINES, `src/witness/node.ts has ${n} lines`);
});
