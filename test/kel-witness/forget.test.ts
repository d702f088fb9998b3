// SPEC §3.6.7 (rev 4) `anchor-witness kel forget PREFIX… --data-dir DIR`, through the real CLI on
// a stopped node's SQLite store: the prefix's stored events, receipts and proofs are gone (GET
// /query and GET /receipts 404), its own-log entries stay (the log size is unchanged), and after a
// restart its events — the same ones, or a fresh inception — are refused 403
// kel_prefix_not_allowed while another prefix is untouched. The PostgreSQL side of `forget` is in
// the store conformance suite (test/store/conformance/kel-ledger.ts, both drivers).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from '../helpers/tmp.ts';
import { Controller, problemOf, send, startKelNode } from './harness.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'anchor-witness.js');
const run = promisify(execFile);

void test('kel forget: stored events, receipts and proofs deleted, log entries kept, the prefix refused afterwards', async (t) => {
  const tmp = tempDir();
  t.after(() => {
    tmp.cleanup();
  });
  const a = await Controller.create(101);
  const b = await Controller.create(102);
  let node = await startKelNode(tmp.dir);
  const w = node.kel!.identity.prefix;
  const icpA = a.incept([w]);
  const ixnA = a.interact();
  const icpB = b.incept([w]);
  let logSize: number;
  try {
    for (const [c, e] of [
      [a, icpA],
      [a, ixnA],
      [b, icpB],
    ] as const)
      assert.equal((await send(node.url, '/receipts', e.raw, c.sign(e))).status, 200);
    logSize = await node.store.transaction((tx) => tx.log.size());
  } finally {
    await node.close();
  }

  const bad = await run(process.execPath, [BIN, 'kel', 'forget', 'not-a-prefix', '--data-dir', join(tmp.dir, 'data')]).then(
    () => 0,
    (e: unknown) => (e as { code?: number }).code ?? -1,
  );
  assert.notEqual(bad, 0, 'a malformed prefix is a usage error');
  const out = await run(process.execPath, [BIN, 'kel', 'forget', a.pre, '--data-dir', join(tmp.dir, 'data')]);
  assert.match(out.stdout, new RegExp(`^forgot ${a.pre}: deleted 2 stored event\\(s\\)`));

  node = await startKelNode(tmp.dir);
  try {
    assert.equal(await node.store.transaction((tx) => tx.log.size()), logSize, 'log entries stay');
    assert.equal((await fetch(`${node.url}/query?typ=kel&pre=${a.pre}`)).status, 404);
    assert.equal((await fetch(`${node.url}/receipts?pre=${a.pre}&sn=0`)).status, 404);
    for (const e of [icpA, ixnA]) {
      const r = await send(node.url, '/receipts', e.raw, a.sign(e));
      assert.equal(r.status, 403, r.text);
      assert.equal(problemOf(r.text).code, 'kel_prefix_not_allowed');
    }
    assert.equal((await send(node.url, '/', icpA.raw, a.sign(icpA))).status, 403, 'POST / too');
    assert.equal((await fetch(`${node.url}/query?typ=kel&pre=${a.pre}`)).status, 404, 'nothing stored again');
    assert.equal((await fetch(`${node.url}/query?typ=kel&pre=${b.pre}`)).status, 200, 'another prefix is untouched');
    const ixnB = b.interact();
    assert.equal((await send(node.url, '/receipts', ixnB.raw, b.sign(ixnB))).status, 200);
  } finally {
    await node.close();
  }
});
