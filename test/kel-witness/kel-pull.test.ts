// SPEC §3.6.8 `anchor-witness kel pull`: chain selection over keripy's stream (superseded events
// included), the supersede rule, the atomic write of a dir: file whose attachments are `-A` (then
// `-G`) only, and, over loopback with two KERI witnesses, an agreeing pair written, a recovery
// preferred, and a divergent pair refused (exit 1, nothing written).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pullKel } from '../../src/client/kel-pull.ts';
import { parseKelDocument } from '../../src/keri/document.ts';
import { chooseResult, selectChain, supersedes, type StreamEvent } from '../../src/keri/kel-pull.ts';
import { DEFAULT_KEL_LIMITS, verifyKels } from '../../src/keri/index.ts';
import type { RawKel } from '../../src/keri/types.ts';
import { tempDir } from '../helpers/tmp.ts';
import { Controller, send, startKelNode } from './harness.ts';

const execFileP = promisify(execFile);

/** Run the CLI; the exit code (0 when it succeeded) and its output. */
async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await execFileP(process.execPath, [join(process.cwd(), 'src/cli/anchor-witness.ts'), ...args]);
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e: unknown) {
    const f = e as { code: number; stdout: string; stderr: string };
    return { code: f.code, stdout: f.stdout, stderr: f.stderr };
  }
}
const OPTS = { kelMaxBytes: DEFAULT_KEL_LIMITS.maxBytes, maxEvents: DEFAULT_KEL_LIMITS.maxEvents };

const ev = (said: string, sn: number, p: string | undefined, t = 'ixn'): StreamEvent => ({ value: {}, said, sn, p, t, attachment: '' });

void test('chain selection: at each sn the last event chaining to the chosen one (superseded events skipped)', () => {
  // keripy's first-seen stream after a recovery: icp, ixn1, ixn2, then rot at sn 1 (supersedes 1…2).
  const stream = [ev('E0', 0, undefined, 'icp'), ev('E1', 1, 'E0'), ev('E2', 1 + 1, 'E1'), ev('R1', 1, 'E0', 'rot'), ev('X3', 3, 'E2')];
  assert.deepEqual(
    selectChain(stream).map((e) => e.said),
    ['E0', 'R1'],
  );
  assert.deepEqual(
    selectChain([ev('E0', 0, undefined, 'icp'), ev('E1', 1, 'E0'), ev('E2', 2, 'E1')]).map((e) => e.said),
    ['E0', 'E1', 'E2'],
  );
  assert.deepEqual(selectChain([ev('E1', 1, 'E0')]), []);
});

void test('supersede rule: a prefix is superseded, a recovery supersedes the ixns it replaces, a fork supersedes nothing', () => {
  const base = { saids: ['E0', 'E1'], types: ['icp', 'ixn'] as const };
  const longer = { saids: ['E0', 'E1', 'E2'], types: ['icp', 'ixn', 'ixn'] as const };
  const recovery = { saids: ['E0', 'R1'], types: ['icp', 'rot'] as const };
  const fork = { saids: ['E0', 'F1'], types: ['icp', 'ixn'] as const };
  const r = (x: { saids: string[]; types: readonly string[] }) =>
    ({ prefix: 'P', events: [], attachments: [], saids: x.saids, types: [...x.types] }) as Parameters<typeof supersedes>[0] & {
      prefix: string;
      events: [];
      attachments: [];
    };
  assert.ok(supersedes(r(longer), r(base)));
  assert.ok(!supersedes(r(base), r(longer)));
  assert.ok(supersedes(r(recovery), r(longer)), 'a rot after the last establishment event replaces the ixns');
  assert.ok(!supersedes(r(longer), r(recovery)));
  assert.ok(!supersedes(r(fork), r(base)) && !supersedes(r(base), r(fork)));
  assert.equal(chooseResult([r(base), r(longer)], null)?.saids.length, 3);
  assert.equal(chooseResult([r(base), r(fork)], null), null);
  assert.equal(chooseResult([r(base)], r(longer)), null, 'a witness behind the existing file does not overwrite it');
});

async function receipt(url: string, raw: string, att: string): Promise<void> {
  const r = await send(url, '/receipts', raw, att);
  assert.equal(r.status, 200, r.text);
}

void test('kel pull over loopback: two agreeing witnesses → the file (-A only, verifies); a recovery wins; divergent → exit 1, nothing written', async (t) => {
  const tmp = tempDir();
  const w1 = await startKelNode(join(tmp.dir, 'w1'), {}, 0x21);
  const w2 = await startKelNode(join(tmp.dir, 'w2'), {}, 0x22);
  t.after(async () => {
    await w1.close();
    await w2.close();
    tmp.cleanup();
  });
  const b = [w1.kel!.identity.prefix, w2.kel!.identity.prefix];
  const out = join(tmp.dir, 'kels');

  // Agreeing: icp and ixn at both.
  const ctl = await Controller.create(31);
  const icp = ctl.incept(b, 2);
  const ixn = ctl.interact();
  for (const w of [w1, w2]) {
    await receipt(w.url, icp.raw, ctl.sign(icp));
    await receipt(w.url, ixn.raw, ctl.sign(ixn));
  }
  const notes: string[] = [];
  const ok = await pullKel(ctl.pre, [w1.url, w2.url], out, OPTS, (l) => notes.push(l));
  assert.equal(ok.status, 'written', JSON.stringify(ok));
  assert.deepEqual(notes, []);
  const path = join(out, `${ctl.pre}.kel.json`);
  const text = readFileSync(path, 'utf8');
  const doc = JSON.parse(text) as { events: { d: string }[]; attachments: string[] };
  assert.deepEqual(
    doc.events.map((e) => e.d),
    [icp.said, ixn.said],
  );
  for (const a of doc.attachments) assert.match(a, /^-AAB[A-Za-z0-9_-]{88}$/, 'only the -A group: -V, -B and -E dropped');
  const raw = parseKelDocument(text, path, DEFAULT_KEL_LIMITS) as RawKel;
  assert.equal(verifyKels(new Map([[ctl.pre, raw]])).get(ctl.pre)?.status, 'accepted', 'the file is a valid dir: entry');
  assert.deepEqual(
    readdirSync(out).filter((f) => f.endsWith('.tmp')),
    [],
    'no temporary file left',
  );
  assert.equal((await pullKel(ctl.pre, [w1.url, w2.url], out, OPTS, () => {})).status, 'unchanged');

  // A recovery at w2 (a rot over the ixn): w2's result supersedes w1's and the file.
  const afterIcp = { said: icp.said, sn: 0 };
  ctl.said = afterIcp.said;
  ctl.sn = afterIcp.sn;
  const rot = ctl.rotate();
  await receipt(w2.url, rot.raw, ctl.sign(rot));
  const rec = await pullKel(ctl.pre, [w1.url, w2.url], out, OPTS, () => {});
  assert.equal(rec.status, 'written', JSON.stringify(rec));
  assert.equal((rec as { said?: string }).said, rot.said);
  assert.deepEqual(
    (JSON.parse(readFileSync(path, 'utf8')) as { events: { d: string }[] }).events.map((e) => e.d),
    [icp.said, rot.said],
  );

  // Divergent: a second controller signs two different ixns at sn 1, one per witness.
  const dup = await Controller.create(32);
  const dicp = dup.incept(b, 2);
  for (const w of [w1, w2]) await receipt(w.url, dicp.raw, dup.sign(dicp));
  const x = dup.interact([{ d: dicp.said }]);
  dup.said = dicp.said;
  dup.sn = 0;
  const y = dup.interact([]);
  assert.notEqual(x.said, y.said);
  await receipt(w1.url, x.raw, dup.sign(x));
  await receipt(w2.url, y.raw, dup.sign(y));
  const res = await run(['kel', 'pull', '--from', w1.url, '--from', w2.url, '--prefix', dup.pre, '--out', out]);
  assert.equal(res.code, 1, res.stderr);
  assert.match(res.stderr, new RegExp(`divergent ${dup.pre}: at sn 1: .* has ${x.said}, .* has ${y.said}`));
  assert.ok(!existsSync(join(out, `${dup.pre}.kel.json`)), 'nothing written');
  // w1 alone lags behind the file (its ixn was superseded by the recovery): refused, exit 1.
  const lagging = await run(['kel', 'pull', '--from', w1.url, '--prefix', ctl.pre, '--out', out]);
  assert.equal(lagging.code, 1, 'a witness behind the existing file does not overwrite it');
  const usage = await run(['kel', 'pull', '--from', 'http://example.com/', '--prefix', ctl.pre, '--out', out]);
  assert.equal(usage.code, 2, 'http:// to a non-loopback host is a usage error');
});
