/**
 * KelLedgerStorage conformance (SPEC §3.6.6): events in first-seen order with read-your-writes in
 * a transaction, one accepted event per (prefix, sn), supersession (recovery), receipts once per
 * backer index, proofs, the prefix binding, everything surviving a reopen, and a rolled-back
 * transaction leaving nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KelLedgerEvent } from '../../../src/store/types.ts';
import { fill } from '../../helpers/anchors.ts';
import { hex, withStore, type StoreFactory } from './helpers.ts';

const P = `E${'A'.repeat(43)}`;
const Q = `E${'B'.repeat(43)}`;

const ev = (prefix: string, sn: number, said: string, over: Partial<KelLedgerEvent> = {}): Omit<KelLedgerEvent, 'ordinal'> => ({
  prefix,
  sn,
  said,
  t: sn === 0 ? 'icp' : 'ixn',
  event: `{"s":"${sn.toString(16)}","d":"${said}"}`,
  attachment: '-AAB',
  state: 'accepted',
  witnessed: true,
  firstSeen: '2026-11-27T15:00:00.000000+00:00',
  receipt: `rct ${said}`,
  keyState: '{}',
  leafIndex: sn,
  ...over,
});

export function kelLedgerConformance(factory: () => StoreFactory): void {
  void test('kel ledger: events, receipts, supersession and proofs commit with the transaction and survive reopening', () =>
    withStore(factory, async (s0, f, use) => {
      assert.equal(await s0.kelLedger.tip(P), undefined);
      await s0.transaction(async (tx) => {
        await tx.kel.lockPrefix(P);
        const e0 = await tx.kel.putEvent(ev(P, 0, 'd0'));
        assert.equal(e0.ordinal, 0);
        assert.equal((await tx.kel.tip(P))!.said, 'd0', 'read-your-writes');
        await tx.kel.putEvent(ev(P, 1, 'd1'));
        await tx.kel.putEvent(ev(P, 2, 'd2', { witnessed: false, receipt: null, leafIndex: null }));
        await tx.kel.putEvent(ev(Q, 0, 'q0'));
        await tx.kel.putReceipt({ prefix: P, said: 'd1', index: 1, backer: 'B1', signature: fill(1, 64) });
        await tx.kel.putReceipt({ prefix: P, said: 'd1', index: 0, backer: 'B0', signature: fill(0, 64) });
        // Once per index: a second receipt at index 0 is ignored.
        await tx.kel.putReceipt({ prefix: P, said: 'd1', index: 0, backer: 'B0', signature: fill(9, 64) });
      });
      // A second accepted event at one (prefix, sn) is refused; the transaction rolls back whole.
      await assert.rejects(
        s0.transaction(async (tx) => {
          await tx.kel.putEvent(ev(Q, 1, 'q1'));
          await tx.kel.putEvent(ev(P, 1, 'other'));
        }),
      );
      assert.equal(await s0.kelLedger.bySaid(Q, 'q1'), undefined, 'rolled back');
      // A recovery: sn ≥ 1 superseded, the new event accepted at 1.
      await s0.transaction(async (tx) => {
        await tx.kel.supersede(P, 1);
        await tx.kel.putEvent(ev(P, 1, 'r1', { t: 'rot' }));
        await tx.kel.setWitnessed(P, 'd2', 'rct d2', 7);
        await tx.kel.putDuplicity({ prefix: P, sn: 1, proof: '{"v":"p"}', leafIndex: 5 });
      });
      await s0.kelLedger.bindPrefix('Bwitness');
      const s = use(await f.reopen(s0)).kelLedger;
      await s.bindPrefix('Bwitness');
      await assert.rejects(s.bindPrefix('Bother'), (e: unknown) => (e as { code?: string }).code === 'store_identity_mismatch');
      const tip = await s.tip(P);
      assert.equal(tip!.said, 'r1');
      assert.equal(tip!.sn, 1);
      assert.equal((await s.accepted(P, 1))?.said, 'r1');
      assert.equal(await s.accepted(P, 2), undefined);
      const all = await s.events(P);
      assert.deepEqual(
        all.map((e) => [e.said, e.sn, e.state, e.ordinal, e.witnessed]),
        [
          ['d0', 0, 'accepted', 0, true],
          ['d1', 1, 'superseded', 1, true],
          ['d2', 2, 'superseded', 2, true],
          ['r1', 1, 'accepted', 3, true],
        ],
      );
      const d2 = await s.bySaid(P, 'd2');
      assert.equal(d2!.receipt, 'rct d2');
      assert.equal(d2!.leafIndex, 7);
      assert.equal(d2!.firstSeen, '2026-11-27T15:00:00.000000+00:00');
      const receipts = await s.receipts(P, 'd1');
      assert.deepEqual(
        receipts.map((r) => [r.index, r.backer, hex(r.signature)]),
        [
          [0, 'B0', hex(fill(0, 64))],
          [1, 'B1', hex(fill(1, 64))],
        ],
      );
      assert.deepEqual(await s.duplicity(P, 1), { prefix: P, sn: 1, proof: '{"v":"p"}', leafIndex: 5 });
      assert.equal(await s.duplicityCount(P), 1);
      assert.equal(await s.duplicityCount(Q), 0);
      assert.deepEqual(
        (await s.listDuplicities(undefined, 10)).map((d) => [d.prefix, d.sn]),
        [[P, 1]],
      );
      assert.deepEqual(await s.listDuplicities({ prefix: P, sn: 1 }, 10), []);
      const counts = await s.counts();
      assert.equal(counts.held, 2);
      assert.equal(counts.events, 5);
      assert.equal(counts.duplicities, 1);
      assert.ok(counts.bytes > 0);
    }));

  void test('kel ledger: prefixBytes sums a prefix; forget deletes its events, receipts and proofs, marks it forgotten, and survives reopening', () =>
    withStore(factory, async (s0, f, use) => {
      await s0.transaction(async (tx) => {
        await tx.kel.putEvent(ev(P, 0, 'd0'));
        await tx.kel.putEvent(ev(P, 1, 'd1'));
        await tx.kel.putEvent(ev(Q, 0, 'q0'));
        await tx.kel.putReceipt({ prefix: P, said: 'd1', index: 0, backer: 'B0', signature: fill(0, 64) });
        await tx.kel.putDuplicity({ prefix: P, sn: 1, proof: '{"v":"p"}', leafIndex: 5 });
        assert.equal(await tx.kel.prefixBytes(P), 2 * (ev(P, 0, 'd0').event.length + 4), 'read-your-writes');
      });
      const size = (e: Omit<KelLedgerEvent, 'ordinal'>): number => e.event.length + e.attachment.length;
      assert.equal(await s0.kelLedger.prefixBytes(P), size(ev(P, 0, 'd0')) + size(ev(P, 1, 'd1')));
      assert.equal(await s0.kelLedger.prefixBytes(`E${'C'.repeat(43)}`), 0);
      assert.equal(await s0.kelLedger.forgotten(P), false);
      assert.equal(await s0.kelLedger.forget(P), 2);
      const s = use(await f.reopen(s0)).kelLedger;
      assert.equal(await s.forgotten(P), true);
      assert.equal(await s.forgotten(Q), false);
      assert.equal(await s.tip(P), undefined);
      assert.deepEqual(await s.events(P), []);
      assert.deepEqual(await s.receipts(P, 'd1'), []);
      assert.equal(await s.duplicity(P, 1), undefined);
      assert.equal((await s.tip(Q))!.said, 'q0', 'other prefixes stay');
      assert.equal(await s.forget(P), 0, 'forgetting twice deletes nothing more');
      assert.equal(await s.forgotten(P), true);
    }));

  void test('kel ledger: counts().witnessed counts receipted events only', () =>
    withStore(factory, async (s0) => {
      await s0.transaction(async (tx) => {
        await tx.kel.putEvent(ev(P, 0, 'd0'));
        await tx.kel.putEvent(ev(P, 1, 'd1', { witnessed: false, receipt: null, leafIndex: null }));
        await tx.kel.putEvent(ev(Q, 0, 'q0', { witnessed: false, receipt: null, leafIndex: null }));
      });
      assert.deepEqual([(await s0.kelLedger.counts()).events, (await s0.kelLedger.counts()).witnessed], [3, 1]);
      await s0.transaction(async (tx) => {
        await tx.kel.setWitnessed(Q, 'q0', 'rct q0', 1);
      });
      assert.equal((await s0.kelLedger.counts()).witnessed, 2);
    }));

  void test('kel ledger: the --kel-url set and its stamp; an unchanged set keeps the stamp, a change takes nextStamp, and both survive reopening', () =>
    withStore(factory, async (s0, f, use) => {
      assert.equal(await s0.kelLedger.kelUrls(), undefined);
      const seen: (string | undefined)[] = [];
      const next = (stamp: string) => (previous: string | undefined) => {
        seen.push(previous);
        return stamp;
      };
      const a = ['https://a.example/', 'http://127.0.0.1:5642/'];
      const t1 = '2026-11-27T15:00:00.000000+00:00';
      assert.deepEqual(await s0.kelLedger.setKelUrls(a, next(t1)), { urls: a, stamp: t1 });
      assert.deepEqual(await s0.kelLedger.setKelUrls([...a], next('never')), { urls: a, stamp: t1 }, 'unchanged: stamp kept');
      assert.deepEqual(seen, [undefined], 'nextStamp is asked only for a change');
      const s = use(await f.reopen(s0)).kelLedger;
      assert.deepEqual(await s.kelUrls(), { urls: a, stamp: t1 });
      const t2 = '2026-11-27T15:00:00.000001+00:00';
      const b = [a[1]!, a[0]!];
      assert.deepEqual(await s.setKelUrls(b, next(t2)), { urls: b, stamp: t2 }, 'an order change is a change');
      assert.deepEqual(seen, [undefined, t1], 'nextStamp gets the stored stamp');
      assert.deepEqual(await s.kelUrls(), { urls: b, stamp: t2 });
    }));
}
