// `anchor-witness kel verify` and `kel import-git` (SPEC §3.5 "Tools"), through bin/anchor-witness.js:
// one JSON line per prefix, exit 0 iff every KEL is accepted; import-git writes one
// <prefix>.kel.json per identifier that kel verify then accepts. Vectors: research/upstream-kel.md §4.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { commit, initRepo, kelFiles, setRef, writeKelRef, writeRegistryRef, writeTree } from '../helpers/kel-git.ts';
import { AGENT_EVENTS, AGENT_PREFIX, kelDocument, MULTI_EVENTS, MULTI_PREFIX, ROOT_EVENTS, ROOT_PREFIX } from '../helpers/kel-vectors.ts';
import { tempDir } from '../helpers/tmp.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'anchor-witness.js');

function run(args: string[]): { status: number | null; lines: Record<string, unknown>[]; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  const lines = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { status: r.status, lines, stdout: r.stdout, stderr: r.stderr };
}

void test('kel verify: a directory of accepted KELs exits 0 with one line per prefix; a tampered file exits 1 with its reason', () => {
  const { dir, cleanup } = tempDir('aw-kel-cli-');
  try {
    const kels = join(dir, 'kels');
    mkdirSync(kels);
    writeFileSync(join(kels, `${ROOT_PREFIX}.kel.json`), kelDocument(ROOT_PREFIX, ROOT_EVENTS, 3));
    writeFileSync(join(kels, `${AGENT_PREFIX}.kel.json`), kelDocument(AGENT_PREFIX, AGENT_EVENTS));
    let r = run(['kel', 'verify', kels]);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(
      r.lines.map((l) => [l.prefix, l.status, l.s, l.delegator, l.reason]),
      [
        [AGENT_PREFIX, 'accepted', 1, ROOT_PREFIX, null],
        [ROOT_PREFIX, 'accepted', 2, null, null],
      ],
    );
    // research §4 B3: the agent's key after the drt.
    assert.deepEqual(r.lines[0]!.keys, [
      { curve: 'ed25519', public_key: '757963fcd89a32d13a374f91e6ec83112862f661272ca4bc74e5497236ac74cc' },
    ]);

    // A copy of MULTI with the rot's prior-event digest replaced (research §4 B1's tampered copies).
    const doc = JSON.parse(kelDocument(MULTI_PREFIX, MULTI_EVENTS)) as { events: Record<string, unknown>[] };
    doc.events[1]!.p = ROOT_PREFIX;
    const bad = join(dir, 'multi-tampered.json');
    writeFileSync(bad, JSON.stringify(doc));
    r = run(['kel', 'verify', kels, bad]);
    assert.equal(r.status, 1);
    const multi = r.lines.find((l) => l.prefix === MULTI_PREFIX)!;
    assert.equal(multi.status, 'invalid');
    assert.equal(typeof multi.reason, 'string');
    assert.equal(r.lines.length, 3);
  } finally {
    cleanup();
  }
});

void test('kel import-git: one <prefix>.kel.json per identifier (per-prefix refs and refs/auths/registry), verified by kel verify', () => {
  const { dir, cleanup } = tempDir('aw-kel-cli-');
  try {
    const repo = initRepo(join(dir, 'r.git'));
    writeKelRef(repo, ROOT_PREFIX, ROOT_EVENTS.slice(0, 2));
    writeRegistryRef(repo, new Map([[AGENT_PREFIX, AGENT_EVENTS.slice(0, 1)]]));
    writeKelRef(repo, MULTI_PREFIX, MULTI_EVENTS);
    // An identifier with a gap (no event 0) is listed on stderr and skipped.
    const gap = 'E' + 'g'.repeat(43);
    setRef(repo, `refs/auths/kel/Eg/${gap}`, commit(repo, writeTree(repo, kelFiles('', ROOT_EVENTS.slice(0, 2)).slice(2))));
    const out = join(dir, 'out');
    let r = run(['kel', 'import-git', '--git', repo, '--out', out]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /wrote 3 KEL file/);
    assert.match(r.stderr, new RegExp(`skipped ${gap}: malformed`));
    assert.deepEqual(readdirSync(out).sort(), [`${AGENT_PREFIX}.kel.json`, `${MULTI_PREFIX}.kel.json`, `${ROOT_PREFIX}.kel.json`].sort());
    r = run(['kel', 'verify', out]);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.deepEqual(
      r.lines.map((l) => l.status),
      ['accepted', 'accepted', 'accepted'],
    );
    // A repository that is not one: non-zero exit with the reason.
    r = run(['kel', 'import-git', '--git', join(dir, 'nope'), '--out', out]);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /git/);
  } finally {
    cleanup();
  }
});
