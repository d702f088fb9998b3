// SPEC §3.5 rev 4: `--kel-source` is repeatable. Every source's copy of a prefix is evaluated and
// the copy that supersedes the others is in force — never the first source's because it is first:
// a copy behind another accepted copy is ignored (never `rollback`), a recovery supersedes the
// copy it recovers over, diverging accepted copies are `fork` (the last accepted state stays,
// counted as a source conflict). Through the KEL worker (src/registry/kel-evaluator.ts), two
// `dir:` sources; events built with the project's authoring code (src/keri/build.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_KEL_LIMITS, type KelTipRef } from '../../src/keri/index.ts';
import { DEFAULT_KEL_AGGREGATE, KelEvaluator } from '../../src/registry/kel-evaluator.ts';
import { parseKelSourceSpecs } from '../../src/registry/source.ts';
import { KelBuilder, kelFile, signer } from '../helpers/kel-builder.ts';
import { tempDir } from '../helpers/tmp.ts';

const k = (label: string) => signer(`multi-source/${label}`);
const incept = (): KelBuilder => KelBuilder.incept({ signers: [k('0')], next: [k('1')] });

void test('several --kel-source: the superseding copy wins whatever the flag order; behind is ignored; a recovery supersedes; divergence is fork', async () => {
  const { dir, cleanup } = tempDir('aw-kel-multi-');
  const a = join(dir, 'a');
  const b = join(dir, 'b');
  mkdirSync(a);
  mkdirSync(b);
  const conflicts: string[] = [];
  const evaluator = new KelEvaluator(
    [
      { kind: 'dir', path: a },
      { kind: 'dir', path: b },
    ],
    DEFAULT_KEL_LIMITS,
    DEFAULT_KEL_AGGREGATE,
    { sourceConflict: (prefix, detail) => conflicts.push(`${prefix}: ${detail}`) },
  );
  const tips = new Map<string, KelTipRef>();
  const evaluate = async () => {
    const r = await evaluator.evaluate(tips, [], () => Promise.resolve());
    for (const e of r.evaluations.values())
      if (e.state !== null) tips.set(e.prefix, { s: e.state.s, d: e.state.d, estS: e.state.estS, estD: e.state.estD });
    return r.evaluations;
  };
  try {
    const short = incept();
    short.interact([{ d: 'one' }]);
    const long = incept();
    long.interact([{ d: 'one' }]);
    long.interact([{ d: 'two' }]);
    const P = short.prefix;
    // The first source is behind the second: the second's longer copy is in force, no rollback.
    writeFileSync(join(a, `${P}.kel.json`), kelFile(short));
    writeFileSync(join(b, `${P}.kel.json`), kelFile(long));
    let ev = (await evaluate()).get(P)!;
    assert.equal(ev.status, 'accepted', String(ev.detail));
    assert.equal(ev.state!.s, 2);
    assert.match(ev.source, new RegExp(b.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    // Next reload, same files: still the longer copy (the behind one is not a rollback).
    ev = (await evaluate()).get(P)!;
    assert.equal(ev.status, 'accepted', String(ev.detail));
    assert.equal(ev.state!.s, 2);

    // A recovery in the first source supersedes the second's ixns.
    const rec = incept();
    rec.rotate({ signers: [k('1')], next: [k('2')] });
    writeFileSync(join(a, `${P}.kel.json`), kelFile(rec));
    ev = (await evaluate()).get(P)!;
    assert.equal(ev.status, 'accepted', String(ev.detail));
    assert.deepEqual([ev.state!.s, ev.state!.estS], [1, 1]);
    assert.deepEqual(conflicts, []);

    // Two accepted copies extending the recovery differently: fork against each other, the recovered state stays.
    const x = incept();
    x.rotate({ signers: [k('1')], next: [k('2')] });
    x.interact([{ d: 'x' }]);
    const y = incept();
    y.rotate({ signers: [k('1')], next: [k('2')] });
    y.interact([{ d: 'y' }]);
    writeFileSync(join(a, `${P}.kel.json`), kelFile(x));
    writeFileSync(join(b, `${P}.kel.json`), kelFile(y));
    ev = (await evaluate()).get(P)!;
    assert.equal(ev.status, 'invalid');
    assert.equal(ev.reason, 'fork', String(ev.detail));
    assert.equal(ev.state!.s, 1, 'the last accepted state stays');
    assert.equal(conflicts.length, 1);
    assert.match(conflicts[0]!, /diverge at s=2/);
  } finally {
    await evaluator.stop();
    cleanup();
  }
});

void test('parseKelSourceSpecs: one or several dir:/git: sources in flag order; none or a bad one is invalid_kel_source', () => {
  assert.deepEqual(parseKelSourceSpecs('dir:/a'), [{ kind: 'dir', path: '/a' }]);
  assert.deepEqual(parseKelSourceSpecs(['git:/r.git', 'dir:/a,b']), [
    { kind: 'git', path: '/r.git' },
    { kind: 'dir', path: '/a,b' },
  ]);
  assert.throws(() => parseKelSourceSpecs([]), /at least one/);
  assert.throws(() => parseKelSourceSpecs(['dir:/a', 'http://x']), /dir:PATH or git:PATH/);
});
