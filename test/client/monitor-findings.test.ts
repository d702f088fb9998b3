// Typed monitor findings (issue 26): one finding of each kind (test/client/fixtures/findings.ts,
// `satisfies` every kind) through the human output and the HTML report. The tables below are what
// the code printed before findings became a union by kind (the casts replaced by a `switch`):
// each kind's evidence lines and each kind's downloads, names and labels.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatHuman } from '../../src/cli/monitor-human.ts';
import type { FindingKind } from '../../src/client/monitor.ts';
import { findingBlock } from '../../src/client/monitor-report-findings.ts';
import { ALL_FINDINGS, FINDINGS } from './fixtures/findings.ts';

/** The lines under a finding's header in the human output (prefixes; '' = none). */
const HUMAN: Record<FindingKind, readonly string[]> = {
  withholding: [],
  disagreement: [
    '  duplicity proof (check with: anchor-witness verify duplicity FILE):',
    '  {"seed_id":',
    '  w1.example co-signed: {"anchor":{',
    '  w2.example co-signed: {"anchor":{',
  ],
  equivocation: ['  w1.example co-signed: {"anchor":{', '  w1.example co-signed: {"anchor":{'],
  duplicity: ['  duplicity proof (check with: anchor-witness verify duplicity FILE):', '  {"seed_id":'],
  forged_anchor: ['  co-signed: {"anchor":{'],
  // What the witness served is not a proof: marked unverified, no `verify duplicity` advice, the excerpt as sent.
  forged_duplicity: [
    "  what the witness served as a duplicity proof (unverified excerpt, not evidence of anything: the party's key did not sign it; 5 bytes, sha256 0303",
    '  <b>x',
  ],
  log_rollback: ['  previous checkpoint:', ...indented(3, 'AAAA'), '  current checkpoint:', ...indented(2, 'BBBB')],
  log_equivocation: [
    '  checkpoint a:',
    ...indented(3, 'AAAA'),
    '  checkpoint b:',
    ...indented(5, 'CCCC'),
    `  root of b's first leaves from its tiles DDDD; consistency proof: ["EEEE","FFFF"]`,
    '  evidence written to /tmp/ev.json (check it with: anchor-witness verify log-equivocation FILE --log-vkey VKEY)',
  ],
  log_inconsistent: [
    '  previous checkpoint:',
    ...indented(3, 'AAAA'),
    '  current checkpoint:',
    ...indented(5, 'CCCC'),
    '  old root from tiles DDDD; consistency proof from it to the current root: ["EEEE"]',
  ],
  log_unwitnessed: [],
  seed_dark: [],
  anchor_rollback: [],
  tiles_mismatch: [],
  invalid_response: [],
  key_changed: [],
  unknown_witness: [],
  unreachable: [],
  witness_key_rotated: [],
  witness_key_rotation_invalid: [],
};

function indented(size: number, root: string): string[] {
  return ['    w1.example/log', `    ${size}`, `    ${root}`, '    ', '    — w1.example/log c2lnbmF0dXJl'];
}

/** The report's downloads per kind: file name suffix → link label. */
const UNVERIFIED = ' (unverified excerpt, not evidence of anything)';
const ALL = { 'evidence.json': 'all evidence (JSON)' };
const DOWNLOADS: Record<FindingKind, Record<string, string>> = {
  withholding: ALL,
  disagreement: {
    'a.json': 'co-signed anchor a (w1.example)',
    'b.json': 'co-signed anchor b (w2.example)',
    'duplicity_proof.json': 'duplicity proof',
    ...ALL,
  },
  equivocation: { 'a.json': 'co-signed anchor a (w1.example)', 'b.json': 'co-signed anchor b (w1.example)', ...ALL },
  duplicity: { 'duplicity_proof.json': 'duplicity proof', ...ALL },
  forged_anchor: { 'anchor.json': 'anchor', 'cosignature.json': 'cosignature', ...ALL },
  forged_duplicity: { 'duplicity_proof-unverified.json': `duplicity proof${UNVERIFIED}`, ...ALL },
  log_rollback: { 'previous.txt': 'previous checkpoint', 'current.txt': 'current checkpoint', ...ALL },
  log_equivocation: {
    'a.txt': 'checkpoint a',
    'b.txt': 'checkpoint b',
    'consistency_proof.json': 'consistency_proof',
    'log-equivocation.json': 'log-equivocation evidence',
    ...ALL,
  },
  log_inconsistent: {
    'previous.txt': 'previous checkpoint',
    'current.txt': 'current checkpoint',
    'consistency_proof.json': 'consistency_proof',
    ...ALL,
  },
  log_unwitnessed: { 'checkpoint.txt': 'checkpoint', ...ALL },
  seed_dark: ALL,
  anchor_rollback: { 'previous.json': 'previous', 'current.json': 'current', ...ALL },
  tiles_mismatch: {},
  invalid_response: { 'checkpoint-unverified.json': `checkpoint${UNVERIFIED}`, ...ALL },
  key_changed: {},
  unknown_witness: {},
  unreachable: {},
  witness_key_rotated: { 'entry.json': 'entry', ...ALL },
  witness_key_rotation_invalid: { 'entry.json': 'entry', ...ALL },
};

void test('monitor human output: each kind of finding prints its evidence as before the typed union', () => {
  const report = {
    time: 1000,
    findings: ALL_FINDINGS,
    witnesses: [{ url: 'http://w1', name: 'w1.example', reachable: true, anchors: {} }],
  };
  const files = new Map([[FINDINGS.log_equivocation.id, '/tmp/ev.json']]);
  const lines = formatHuman(report, ALL_FINDINGS, files, { sent: 1, pending: 2 }).split('\n');
  assert.equal(lines[0], '1970-01-01T00:16:40Z polled w1.example (log ?): 19 finding(s); alerts: 1 sent, 2 pending');
  assert.equal(lines.at(-1), '', 'ends with a newline');
  let at = 1;
  for (const f of ALL_FINDINGS) {
    assert.equal(lines[at++], `${f.severity === 'alert' ? 'ALERT' : f.severity === 'info' ? 'INFO' : 'WARNING'} ${f.kind}: ${f.message}`);
    for (const want of HUMAN[f.kind]) {
      const got = lines[at++] ?? '';
      assert.ok(got.startsWith(want), `${f.kind}: ${JSON.stringify(got.slice(0, 80))} should start with ${JSON.stringify(want)}`);
    }
  }
  assert.equal(at, lines.length - 1, 'no other lines');
});

void test('monitor HTML report: each kind of finding offers its evidence downloads under the same names and labels', () => {
  const state = { witnesses: { 'w1.example': { public_key: 'cd'.repeat(32), log_origin: 'w1.example/log' } }, seeds: {} };
  for (const [n, f] of ALL_FINDINGS.entries()) {
    const block = findingBlock({ finding: f, first: 1000, last: 1000, current: true }, n, state).value;
    const links = [...block.matchAll(/<a download="([^"]+)" href="[^"]*">([^<]*)<\/a>/g)].map((m) => [m[1]!, m[2]!] as const);
    const base = `finding-${n}-${f.kind}-`;
    assert.deepEqual(
      Object.fromEntries(links.map(([name, label]) => [name.startsWith(base) ? name.slice(base.length) : name, label])),
      DOWNLOADS[f.kind],
      f.kind,
    );
  }
  // the log-equivocation document gets its offline check, under the recorded log key
  const block = findingBlock({ finding: FINDINGS.log_equivocation, current: true }, 6, state).value;
  assert.match(
    block,
    /anchor-witness verify log-equivocation finding-6-log_equivocation-log-equivocation\.json --log-vkey w1\.example\/log\+/,
  );
});
