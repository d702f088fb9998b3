// What `anchor-witness/verify` exports is exactly what docs/client.md documents (issue 18): the
// table between `<!-- verify-api -->` markers against the module's runtime exports (functions,
// classes, constants) and against the type-only exports of src/verify/index.ts, so neither can
// drift from the other. Also: every VerificationCode is documented in the error-code table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as verify from '../../src/verify/index.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const doc = readFileSync(join(ROOT, 'docs', 'client.md'), 'utf8');

function documented(): { values: string[]; types: string[] } {
  const m = /<!-- verify-api -->\n([\s\S]*?)<!-- \/verify-api -->/.exec(doc);
  assert.ok(m, 'docs/client.md has the verify-api table');
  const rows = m[1]!.split('\n').filter((l) => /^\| `/.test(l));
  const parsed = rows.map((l) => {
    const cells = l.split(' | ');
    return { name: /^\| `([A-Za-z0-9_]+)`$/.exec(cells[0]!)?.[1] ?? '', kind: cells[1]!.trim() };
  });
  for (const p of parsed) assert.match(p.kind, /^(function|class|constant|type)$/, p.name);
  return {
    values: parsed
      .filter((p) => p.kind !== 'type')
      .map((p) => p.name)
      .sort(),
    types: parsed
      .filter((p) => p.kind === 'type')
      .map((p) => p.name)
      .sort(),
  };
}

void test('the runtime exports of anchor-witness/verify are the documented functions, classes and constants', () => {
  assert.deepEqual(Object.keys(verify).sort(), documented().values);
});

void test('the type exports of src/verify/index.ts are the documented types', () => {
  const source = readFileSync(join(ROOT, 'src', 'verify', 'index.ts'), 'utf8');
  const types = [...source.matchAll(/^export type \{([^}]*)\}/gm)].flatMap((m) =>
    m[1]!
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  );
  assert.deepEqual(types.sort(), documented().types);
  // No value is exported as `export *` (which this check could not see).
  assert.doesNotMatch(source, /^export \*/m);
});

void test('every VerificationCode has a row in the error-code table', () => {
  const source = readFileSync(join(ROOT, 'src', 'verify', 'errors.ts'), 'utf8');
  const union = /export type VerificationCode =([\s\S]*?);/.exec(source)![1]!;
  const codes = [...union.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]!);
  assert.ok(codes.length > 20);
  const table = doc.slice(doc.indexOf('### Error codes'));
  for (const c of codes) assert.ok(table.includes(`\`${c}\``), `${c} is documented`);
});

void test('every ClientErrorCode of anchor-witness/client is documented', () => {
  const source = readFileSync(join(ROOT, 'src', 'client', 'errors.ts'), 'utf8');
  const union = /export type ClientErrorCode =([\s\S]*?);/.exec(source)![1]!;
  const codes = [...union.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]!);
  const paragraph = doc.slice(doc.indexOf('`ClientError.code`'), doc.indexOf('## Witness sets'));
  for (const c of codes) assert.ok(paragraph.includes(`\`${c}\``), `${c} is documented`);
});
