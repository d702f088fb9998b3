// Refusal codes with their HTTP statuses as data (`satisfies Record<Code, Status>`): the table is the
// only place a status is chosen (src/anchor/accept.ts returns the code; the status comes from
// ANCHOR_REJECTION_STATUS), and docs/errors.md shows the same status for every code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ANCHOR_REJECTION_STATUS } from '../../src/anchor/errors.ts';
import { BRIDGE_STATUS } from '../../src/bridge/errors.ts';

const ROOT = join(import.meta.dirname, '..', '..');

/** The `| \`code\` | status |` rows of one `### \`Union\`` section of docs/errors.md. */
function documentedStatuses(union: string): Map<string, string> {
  const lines = readFileSync(join(ROOT, 'docs/errors.md'), 'utf8').split('\n');
  const start = lines.indexOf(`### \`${union}\``);
  assert.ok(start >= 0, `docs/errors.md has no section ${union}`);
  const out = new Map<string, string>();
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('#')) break;
    const row = /^\| `([a-z0-9_]+)` \| ([^|]+) \|/.exec(line);
    if (row !== null) out.set(row[1]!, row[2]!.trim());
  }
  return out;
}

for (const [union, table] of [
  ['AnchorRejectionCode', ANCHOR_REJECTION_STATUS],
  ['BridgeErrorCode', BRIDGE_STATUS],
] as const) {
  void test(`${union}: docs/errors.md shows the status of the table for every code`, () => {
    const docs = documentedStatuses(union);
    const wrong = Object.entries(table)
      .filter(([code, status]) => docs.get(code) !== String(status))
      .map(([code, status]) => `${code}: table ${status}, docs ${docs.get(code) ?? '(none)'}`);
    assert.deepEqual(wrong, []);
  });
}

void test('src/anchor/accept.ts chooses codes only: no HTTP status literal in its rules', () => {
  const text = readFileSync(join(ROOT, 'src/anchor/accept.ts'), 'utf8');
  assert.doesNotMatch(text, /reject\(\s*\d{3}/);
  assert.doesNotMatch(text, /status:\s*\d{3}/);
});
