/** CosignStateStorage conformance: per-origin compare-and-swap and evidence (SPEC §5). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sha256 } from '../../../src/crypto/sha256.ts';
import { EVIDENCE_LIMIT, type EvidenceRecord, type ImportedLog } from '../../../src/store/types.ts';
import { fill } from '../../helpers/anchors.ts';
import { hex, origin, withStore, type StoreFactory } from './helpers.ts';

export function cosignStateConformance(factory: () => StoreFactory): void {
  void test('cosign origins: compare-and-swap on the stored size; exactly one of concurrent swaps wins', () =>
    withStore(factory, async ({ cosign: s }) => {
      assert.equal(await s.getOrigin('example.com/log'), undefined);
      assert.equal(await s.updateOrigin(5, origin(6, 100)), false, 'expected size 5 of a never-cosigned origin');
      assert.equal(await s.updateOrigin(0, origin(3, 100)), true);
      assert.equal(await s.updateOrigin(0, origin(4, 100)), false, 'stale expected size 0');
      assert.equal(await s.updateOrigin(3, origin(5, 101)), true);
      const st = await s.getOrigin('example.com/log');
      assert.equal(st?.size, 5);
      assert.equal(st.lastTime, 101);
      assert.equal(hex(st.root), hex(fill(5)));
      assert.equal(st.checkpoint, 'example.com/log\n5\n');
      assert.equal(st.cosignatures, '— w 5\n');
      const results = await Promise.all(Array.from({ length: 12 }, (_, k) => s.updateOrigin(5, origin(6 + k, 102))));
      assert.equal(results.filter(Boolean).length, 1);
      const winner = results.indexOf(true);
      assert.equal((await s.getOrigin('example.com/log'))?.size, 6 + winner);
      // other origins are independent
      assert.equal(await s.updateOrigin(0, origin(1, 100, 'example.com/other')), true);
    }));

  void test('cosign origins: cosignedSizes lists every cosigned origin with its size (imported, never cosigned ones left out)', () =>
    withStore(factory, async ({ cosign: s }) => {
      assert.deepEqual([...((await s.cosignedSizes?.()) ?? new Map())], []);
      await s.importLogs([{ origin: 'example.com/imported', vkeys: ['k'], qpd: 24, source: 'list', importedAt: 1 }], fill(0));
      assert.equal(await s.updateOrigin(0, origin(3, 100)), true);
      assert.equal(await s.updateOrigin(3, origin(5, 101)), true);
      assert.equal(await s.updateOrigin(0, origin(2, 100, 'example.com/other')), true);
      const sizes = await s.cosignedSizes?.();
      assert.ok(sizes !== undefined, 'both drivers implement cosignedSizes');
      assert.deepEqual([...sizes].sort(), [
        ['example.com/log', 5],
        ['example.com/other', 2],
      ]);
    }));

  void test('cosign evidence: one row per (origin, hash), listed oldest first, bounded per origin with the oldest evicted; survives reopening', () =>
    withStore(factory, async (s0, f, use) => {
      const log = 'example.com/log';
      const other = 'example.com/other';
      const ev = (o: string, n: number, note = `${o}\n${n}\n`) => ({
        origin: o,
        hash: fill(n),
        note,
        reason: `reason ${n}`,
        at: 1800000000 + n,
      });
      const shapeOf = (rows: EvidenceRecord[]) =>
        rows.map((r) => [r.origin, r.hash === undefined ? null : hex(r.hash), r.note, r.reason, r.at]);
      const want = (o: string, ns: number[]) => ns.map((n) => [o, hex(fill(n)), `${o}\n${n}\n`, `reason ${n}`, 1800000000 + n]);
      const c0 = s0.cosign;
      assert.deepEqual(await c0.listEvidence(log), []);
      assert.deepEqual(await c0.recordEvidence(ev(log, 1)), { added: true, evicted: 0 });
      // The same hash again, whatever the note and reason: nothing written.
      assert.deepEqual(await c0.recordEvidence({ ...ev(log, 1, 'another note\n'), reason: 'again', at: 1 }), { added: false, evicted: 0 });
      // The same hash under another origin is another row.
      assert.deepEqual(await c0.recordEvidence(ev(other, 1)), { added: true, evicted: 0 });
      assert.deepEqual(shapeOf(await c0.listEvidence(log)), want(log, [1]));
      // Bound 3: the fourth row evicts the oldest; a bound of 1 keeps only the newest.
      assert.deepEqual(await c0.recordEvidence(ev(log, 2), 3), { added: true, evicted: 0 });
      assert.deepEqual(await c0.recordEvidence(ev(log, 3), 3), { added: true, evicted: 0 });
      assert.deepEqual(await c0.recordEvidence(ev(log, 4), 3), { added: true, evicted: 1 });
      assert.deepEqual(shapeOf(await c0.listEvidence(log)), want(log, [2, 3, 4]));
      assert.deepEqual(await c0.recordEvidence(ev(log, 3), 3), { added: false, evicted: 0 });
      assert.deepEqual(await c0.recordEvidence(ev(log, 5), 1), { added: true, evicted: 3 });
      assert.deepEqual(shapeOf(await c0.listEvidence(log)), want(log, [5]));
      await assert.rejects(c0.recordEvidence(ev(log, 6), 0), RangeError);
      const c = use(await f.reopen(s0)).cosign;
      assert.deepEqual(shapeOf(await c.listEvidence(log)), want(log, [5]));
      assert.deepEqual(shapeOf(await c.listEvidence(other)), want(other, [1]), 'another origin is bounded on its own');
      assert.deepEqual(await c.recordEvidence(ev(log, 5)), { added: false, evicted: 0 }, 'deduplication survives reopening');
    }));

  void test('cosign evidence: the default bound is EVIDENCE_LIMIT = 1 000 rows per origin', () =>
    withStore(factory, async ({ cosign: s }) => {
      assert.equal(EVIDENCE_LIMIT, 1000);
      const ev = (n: number) => ({
        origin: 'example.com/log',
        hash: sha256(new TextEncoder().encode(String(n))),
        note: `n ${n}\n`,
        reason: 'r',
        at: n,
      });
      for (let n = 0; n < EVIDENCE_LIMIT; n++) assert.deepEqual(await s.recordEvidence(ev(n)), { added: true, evicted: 0 });
      assert.deepEqual(await s.recordEvidence(ev(EVIDENCE_LIMIT)), { added: true, evicted: 1 });
      const rows = await s.listEvidence('example.com/log');
      assert.equal(rows.length, EVIDENCE_LIMIT);
      assert.equal(rows[0]!.note, 'n 1\n');
      assert.equal(rows.at(-1)!.note, `n ${EVIDENCE_LIMIT}\n`);
    }));

  void test('imported logs (SPEC §5.5): recorded with an empty state in one transaction, first import wins, qpd follows, survive reopening', () =>
    withStore(factory, async (s0, f, use) => {
      const empty = fill(0x47);
      const imp = (o: string, n: number, source = 'https://lists.example/log-list.1'): ImportedLog => ({
        origin: o,
        vkeys: [`${o}+0000000${n}+AAAA`, `${o}+1000000${n}+BBBB`],
        qpd: 24 * n,
        source,
        importedAt: 1800000000 + n,
      });
      const c0 = s0.cosign;
      assert.deepEqual(await c0.listImportedLogs(), []);
      assert.deepEqual(await c0.importLogs([], empty), []);
      // An origin that was cosigned before (e.g. once in the logs file) keeps its state.
      assert.equal(await c0.updateOrigin(0, origin(7, 100, 'b.example/log')), true);
      assert.deepEqual(await c0.importLogs([imp('a.example/log', 1), imp('b.example/log', 2), imp('c.example/log', 3)], empty), [
        'a.example/log',
        'b.example/log',
        'c.example/log',
      ]);
      // First import wins: the same origins again (other keys, another source) change nothing.
      assert.deepEqual(await c0.importLogs([imp('a.example/log', 9, 'other'), imp('d.example/log', 4)], empty), ['d.example/log']);
      // The empty state reads as never cosigned, and the first compare-and-swap from 0 succeeds.
      assert.equal(await c0.getOrigin('a.example/log'), undefined);
      assert.equal((await c0.getOrigin('b.example/log'))?.size, 7);
      assert.equal(await c0.updateOrigin(0, origin(3, 100, 'c.example/log')), true);
      assert.equal((await c0.getOrigin('c.example/log'))?.size, 3);
      await c0.setImportedQpd([
        { origin: 'a.example/log', qpd: 5 },
        { origin: 'unknown.example/log', qpd: 6 },
      ]);
      const c = use(await f.reopen(s0)).cosign;
      const rows = await c.listImportedLogs();
      assert.deepEqual(rows, [
        { ...imp('a.example/log', 1), qpd: 5 },
        imp('b.example/log', 2),
        imp('c.example/log', 3),
        imp('d.example/log', 4),
      ]);
      assert.equal(await c.getOrigin('a.example/log'), undefined);
      assert.equal(await c.updateOrigin(0, origin(2, 100, 'a.example/log')), true);
      assert.equal((await c.getOrigin('a.example/log'))?.size, 2);
    }));

  void test('cosign key binding (SPEC §5 rev 4): key sets and the cosigner set stored with the state; imports bound; forget deletes state, evidence, import', () =>
    withStore(factory, async (s0, f, use) => {
      const c0 = s0.cosign;
      const o = 'bound.example/log';
      assert.deepEqual(await c0.originKeys([o]), new Map());
      assert.equal(await c0.setOriginKeys(o, ['k1']), false, 'no state row');
      const cosigners = fill(0x5c);
      assert.equal(await c0.updateOrigin(0, { ...origin(3, 100, o), logKeys: ['k1', 'k2'], cosignerSet: cosigners }), true);
      let st = await c0.getOrigin(o);
      assert.deepEqual(st?.logKeys, ['k1', 'k2']);
      assert.equal(hex(st.cosignerSet!), hex(cosigners));
      // A state written without them reads back unbound.
      assert.equal(await c0.updateOrigin(0, origin(1, 100, 'unbound.example/log')), true);
      st = await c0.getOrigin('unbound.example/log');
      assert.deepEqual([st?.logKeys, st?.cosignerSet], [undefined, undefined]);
      assert.equal(await c0.setOriginKeys(o, ['k2', 'k3']), true);
      // Imports: the empty state is bound to the imported keys.
      await c0.importLogs([{ origin: 'imp.example/log', vkeys: ['i1', 'i2'], qpd: 5, source: 's', importedAt: 1 }], fill(0x47));
      assert.deepEqual(
        await c0.originKeys([o, 'imp.example/log', 'unbound.example/log', 'none.example/log']),
        new Map([
          [o, { keys: ['k2', 'k3'], cosigned: true }],
          ['imp.example/log', { keys: ['i1', 'i2'], cosigned: false }],
          ['unbound.example/log', { keys: undefined, cosigned: true }],
        ]),
      );
      await c0.recordEvidence({ origin: o, hash: fill(1), note: 'n\n', reason: 'r', at: 1 });
      await c0.recordEvidence({ origin: o, hash: fill(2), note: 'n\n', reason: 'r', at: 1 });
      const c = use(await f.reopen(s0)).cosign;
      assert.deepEqual((await c.getOrigin(o))?.logKeys, ['k2', 'k3']);
      assert.deepEqual(await c.forgetOrigin(o), { state: true, cosignedSize: 3, evidence: 2, imported: false });
      assert.equal(await c.getOrigin(o), undefined);
      assert.deepEqual(await c.listEvidence(o), []);
      assert.deepEqual(await c.forgetOrigin('imp.example/log'), { state: true, cosignedSize: undefined, evidence: 0, imported: true });
      assert.deepEqual(await c.listImportedLogs(), []);
      assert.deepEqual(await c.forgetOrigin('none.example/log'), { state: false, cosignedSize: undefined, evidence: 0, imported: false });
      // Forgotten: starts again from size 0.
      assert.equal(await c.updateOrigin(0, { ...origin(1, 100, o), logKeys: ['k9'] }), true);
    }));
}
