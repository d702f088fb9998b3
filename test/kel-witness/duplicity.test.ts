// SPEC §3.6.10 item 4: first seen, always seen. A second valid ixn at a held sn → 409 with an
// offline-verifiable proof (checked by `anchor-witness verify kel-duplicity`, with and without
// --kel; a flipped signature fails), a third conflict gets the stored proof, a rot over ixns is a
// recovery (both branches on /query), an ixn against the recovery rot is `stale`, the superseded
// ixn is `superseded`, an invalid conflict is 422 with nothing stored; the own log holds a
// kel-event entry per witnessed event and a kel-duplicity-entry for the stored proof.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { interact } from 'signify-ts';
import { checkProof } from '../../src/kel-witness/duplicity.ts';
import { tempDir } from '../helpers/tmp.ts';
import { Controller, problemOf, send, startKelNode } from './harness.ts';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '..', '..', 'src', 'cli', 'anchor-witness.ts');

async function verifyCli(args: string[]): Promise<{ code: number; out: string }> {
  try {
    const r = await run(process.execPath, [CLI, 'verify', 'kel-duplicity', ...args]);
    return { code: 0, out: r.stdout };
  } catch (e) {
    const err = e as { code: number; stderr: string };
    return { code: err.code, out: err.stderr };
  }
}

void test('duplicity: 409 with a verifiable proof, stored once and logged; recovery, stale, superseded, invalid conflicts', async (t) => {
  const tmp = tempDir();
  const node = await startKelNode(tmp.dir);
  t.after(async () => {
    await node.close();
    tmp.cleanup();
  });
  const witness = node.kel!.identity.prefix;
  const ctl = await Controller.create(9);
  const icp = ctl.incept([witness]);
  assert.equal((await send(node.url, '/receipts', icp.raw, ctl.sign(icp))).status, 200);
  const ixn = ctl.interact([{ d: icp.said }]);
  assert.equal((await send(node.url, '/receipts', ixn.raw, ctl.sign(ixn))).status, 200);
  const logBefore = (await node.store.log.checkpoint())!.size;

  // Another valid ixn at sn 1.
  const other = interact({ pre: ctl.pre, dig: icp.said, sn: 1, data: [{ d: ixn.said }], version: undefined, kind: undefined });
  const r = await send(node.url, '/receipts', other.raw, ctl.sign(other));
  assert.equal(r.status, 409, r.text);
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
  const proof = JSON.parse(r.text) as Record<string, unknown> & {
    a: { event: { d: string }; attachment: string };
    b: { event: { d: string }; attachment: string };
    first_seen: string;
  };
  assert.equal(proof.v, 'anchor-witness/kel-duplicity/v1');
  assert.equal(proof.witness, witness);
  assert.equal(proof.prefix, ctl.pre);
  assert.equal(proof.sn, 1);
  assert.ok(proof.a.event.d < proof.b.event.d);
  assert.equal(proof.first_seen, proof.a.event.d === ixn.said ? 'a' : 'b');
  assert.equal(checkProof(proof), null);
  // The proof and a log entry committed together: the log grew by one kel-duplicity-entry.
  const cp = (await node.store.log.checkpoint())!;
  assert.equal(cp.size, logBefore + 1);
  const [entry] = await node.store.log.readEntries(cp.size - 1, 1);
  assert.deepEqual(JSON.parse(Buffer.from(entry!).toString()), {
    a: proof.a.event.d,
    b: proof.b.event.d,
    first_seen: proof.first_seen,
    i: ctl.pre,
    s: '1',
    v: 'auths-anchor/kel-duplicity-entry/v1',
    witness,
  });

  // The CLI: exit 0; with --kel too; a flipped signature exits 1.
  const file = join(tmp.dir, 'proof.json');
  writeFileSync(file, r.text);
  const ok = await verifyCli([file]);
  assert.equal(ok.code, 0, ok.out);
  assert.match(ok.out, /^OK duplicity/);
  const kelFile = join(tmp.dir, `${ctl.pre}.kel.json`);
  writeFileSync(kelFile, JSON.stringify({ prefix: ctl.pre, events: [JSON.parse(icp.raw)], attachments: [ctl.sign(icp)] }));
  const noKel = join(tmp.dir, 'proof-nokel.json');
  writeFileSync(noKel, JSON.stringify({ ...proof, kel: null }));
  assert.equal((await verifyCli([noKel])).code, 1, 'without a history and without --kel: not proven');
  const withKel = await verifyCli([noKel, '--kel', kelFile]);
  assert.equal(withKel.code, 0, withKel.out);
  const sig = proof.b;
  const flippedChar = sig.attachment[20] === 'A' ? 'B' : 'A';
  const bad = { ...proof, b: { ...proof.b, attachment: sig.attachment.slice(0, 20) + flippedChar + sig.attachment.slice(21) } };
  const badFile = join(tmp.dir, 'bad.json');
  writeFileSync(badFile, JSON.stringify(bad));
  const flipped = await verifyCli([badFile]);
  assert.equal(flipped.code, 1, flipped.out);
  assert.match(flipped.out, /^INVALID/);
  assert.equal((await verifyCli([join(tmp.dir, 'missing.json')])).code, 2);

  // A third conflict gets the stored proof; nothing more is logged.
  const third = interact({ pre: ctl.pre, dig: icp.said, sn: 1, data: [{ d: other.said }], version: undefined, kind: undefined });
  const r3 = await send(node.url, '/receipts', third.raw, ctl.sign(third));
  assert.equal(r3.status, 409);
  assert.deepEqual(JSON.parse(r3.text), proof);
  assert.equal((await node.store.log.checkpoint())!.size, cp.size);
  assert.equal((await fetch(`${node.url}/v1/kel/duplicity/${ctl.pre}/1`)).status, 200);

  // An invalid conflict (signed by a key that is not the controller's) → 422, nothing stored.
  const stranger = await Controller.create(10);
  const forged = interact({ pre: ctl.pre, dig: icp.said, sn: 1, data: [{ d: third.said }], version: undefined, kind: undefined });
  const r4 = await send(node.url, '/receipts', forged.raw, stranger.sign(forged));
  assert.equal(r4.status, 422, r4.text);
  assert.equal(problemOf(r4.text).reason, 'signature_invalid');

  // Recovery: a rot at sn 1 (the committed next key) supersedes the ixn.
  ctl.said = icp.said;
  ctl.sn = 0;
  const rot = ctl.rotate();
  const r5 = await send(node.url, '/receipts', rot.raw, ctl.sign(rot));
  assert.equal(r5.status, 200, r5.text);
  const [recoveryEntry] = await node.store.log.readEntries((await node.store.log.checkpoint())!.size - 1, 1);
  const logged = JSON.parse(Buffer.from(recoveryEntry!).toString()) as Record<string, unknown>;
  assert.equal(logged.v, 'auths-anchor/kel-event/v1');
  assert.equal(logged.d, rot.said);
  assert.deepEqual(logged.superseded, [ixn.said]);
  const all = await (await fetch(`${node.url}/query?typ=kel&pre=${ctl.pre}`)).text();
  assert.ok(all.includes(ixn.raw) && all.includes(rot.raw), '/query without sn shows both branches');
  const accepted = await (await fetch(`${node.url}/query?typ=kel&pre=${ctl.pre}&sn=1`)).text();
  assert.ok(accepted.startsWith(rot.raw) && !accepted.includes(ixn.raw));

  // The superseded ixn again → 422 superseded; a new ixn at sn 1 against the rot → 422 stale.
  const r6 = await send(node.url, '/receipts', ixn.raw, ctl.sign(ixn, stranger.signer));
  assert.equal(r6.status, 422);
  assert.equal(problemOf(r6.text).reason, 'superseded');
  const late = interact({ pre: ctl.pre, dig: icp.said, sn: 1, data: [{ d: rot.said }], version: undefined, kind: undefined });
  const firstKey = await Controller.create(9); // the same salt: the inception key
  const r7 = await send(node.url, '/receipts', late.raw, firstKey.sign(late));
  assert.equal(r7.status, 422, r7.text);
  assert.equal(problemOf(r7.text).reason, 'stale');
});
