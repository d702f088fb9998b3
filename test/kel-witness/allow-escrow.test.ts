// SPEC §3.6.10 items 5 and 8 (the parts reached): who may be witnessed, and the escrow.
// * Without --kel-allow, role kel refuses to start (kel_allow_required); with --dev it starts as `any`.
// * --kel-allow P: P is receipted; another prefix → 403 kel_prefix_not_allowed, nothing stored.
// * --kel-key equal to the witness key → kel_key_reused.
// * Out of order: sn 2 before sn 1 → 202, then sn 1 → 200 and sn 2 is witnessed from the escrow
//   (GET /receipts serves it); the escrow's TTL drops an entry (test clock).
// * Malformed CESR: 65 -A signatures or a 12 289-byte header → 400 malformed_cesr; a wrong
//   Content-Type → 415; a body that is not B(e) → 400 malformed_body.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { tempDir } from '../helpers/tmp.ts';
import { Controller, problemOf, send, startKelNode } from './harness.ts';

void test('allow list: required without --dev, `any` with --dev, a prefix list admits only its prefixes; kel_key_reused', async () => {
  const tmp = tempDir();
  try {
    await assert.rejects(
      startKelNode(join(tmp.dir, 'a'), { kelAllow: undefined }),
      (e: unknown) => (e as { code?: string }).code === 'kel_allow_required',
    );
    await assert.rejects(startKelNode(join(tmp.dir, 'b'), {}, 0x01), (e: unknown) => (e as { code?: string }).code === 'kel_key_reused');
    const dev = await startKelNode(join(tmp.dir, 'c'), { kelAllow: undefined, dev: true });
    const c1 = await Controller.create(21);
    const icp1 = c1.incept([dev.kel!.identity.prefix]);
    assert.equal((await send(dev.url, '/receipts', icp1.raw, c1.sign(icp1))).status, 200);
    await dev.close();

    const c2 = await Controller.create(22);
    const c3 = await Controller.create(23);
    const node = await startKelNode(join(tmp.dir, 'd'));
    const w = node.kel!.identity.prefix;
    await node.close();
    const icp2 = c2.incept([w]);
    const icp3 = c3.incept([w]);
    const listed = await startKelNode(join(tmp.dir, 'd'), { kelAllow: [c2.pre] });
    try {
      assert.equal((await send(listed.url, '/receipts', icp2.raw, c2.sign(icp2))).status, 200);
      const refused = await send(listed.url, '/receipts', icp3.raw, c3.sign(icp3));
      assert.equal(refused.status, 403);
      assert.equal(problemOf(refused.text).code, 'kel_prefix_not_allowed');
      assert.equal((await fetch(`${listed.url}/query?typ=kel&pre=${c3.pre}`)).status, 404, 'nothing stored');
    } finally {
      await listed.close();
    }
  } finally {
    tmp.cleanup();
  }
});

void test('escrow: sn 2 before sn 1 → 202, then 200 and sn 2 witnessed; TTL expiry; malformed requests', async (t) => {
  const tmp = tempDir();
  let now = Date.parse('2026-11-27T12:00:00Z');
  const node = await startKelNode(tmp.dir, { kelNow: () => now });
  t.after(async () => {
    await node.close();
    tmp.cleanup();
  });
  const w = node.kel!.identity.prefix;
  const ctl = await Controller.create(31);
  const icp = ctl.incept([w]);
  assert.equal((await send(node.url, '/receipts', icp.raw, ctl.sign(icp))).status, 200);
  const ixn1 = ctl.interact();
  const ixn2 = ctl.interact();
  const early = await send(node.url, '/receipts', ixn2.raw, ctl.sign(ixn2));
  assert.equal(early.status, 202, early.text);
  const body = JSON.parse(early.text) as Record<string, unknown>;
  assert.deepEqual(
    { ...body, expires_at: undefined },
    { status: 'escrowed', prefix: ctl.pre, sn: 2, said: ixn2.said, expires_at: undefined },
  );
  assert.equal((await fetch(`${node.url}/receipts?pre=${ctl.pre}&sn=2`)).status, 404, 'escrowed events are not served');
  assert.equal((await send(node.url, '/receipts', ixn1.raw, ctl.sign(ixn1))).status, 200);
  assert.equal((await fetch(`${node.url}/receipts?pre=${ctl.pre}&sn=2`)).status, 200, 'sn 2 witnessed from the escrow');
  assert.equal(node.kel!.service.escrow.size, 0);

  // TTL: an entry older than 20 minutes is purged.
  const ixn4 = (ctl.interact(), ctl.interact());
  assert.equal((await send(node.url, '/receipts', ixn4.raw, ctl.sign(ixn4))).status, 202);
  assert.equal(node.kel!.service.escrow.size, 1);
  now += 20 * 60 * 1000 - 1;
  assert.equal(node.kel!.service.purgeEscrow(), 0);
  now += 1;
  assert.equal(node.kel!.service.purgeEscrow(), 1);
  assert.equal(node.kel!.service.escrow.size, 0);

  // Malformed requests.
  const ixn = ctl.interact();
  const sig = ctl.sign(ixn).slice(4);
  const many = `-ABB${sig.repeat(65)}`;
  const r65 = await send(node.url, '/receipts', ixn.raw, many);
  assert.equal(r65.status, 400);
  assert.equal(problemOf(r65.text).code, 'malformed_cesr');
  const big = await send(node.url, '/receipts', ixn.raw, `-AAB${sig}`.padEnd(12_289, 'A'));
  assert.equal(problemOf(big.text).code, 'malformed_cesr');
  const trailing = await send(node.url, '/receipts', ixn.raw, `-AAB${sig}AAAA`);
  assert.equal(problemOf(trailing.text).code, 'malformed_cesr');
  const res = await fetch(`${node.url}/receipts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'cesr-attachment': `-AAB${sig}` },
    body: ixn.raw,
  });
  assert.equal(res.status, 415);
  const pretty = await send(node.url, '/receipts', JSON.stringify(JSON.parse(ixn.raw), null, 1), `-AAB${sig}`);
  assert.equal(pretty.status, 400);
  assert.equal(problemOf(pretty.text).code, 'malformed_body');
});
