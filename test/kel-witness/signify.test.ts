// SPEC §3.6.10 item 2: a live third-party controller (signify-ts 0.3.0) against role kel over
// loopback: inception with this witness in `b`, interaction, rotations (adds/cuts), and our
// replies parsed and verified with signify-ts's own CESR classes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Cigar, Counter, Prefixer, Serder, Siger, Verfer } from 'signify-ts';
import { tempDir } from '../helpers/tmp.ts';
import { Controller, problemOf, send, startKelNode } from './harness.ts';

/** Split keripy's "message then attachments" stream at the message's `v` size. */
function splitMessage(text: string): { message: string; rest: string } {
  const m = /^\{"v":"KERI10JSON([0-9a-f]{6})_"/.exec(text);
  assert.ok(m !== null, `not a KERI JSON message: ${text.slice(0, 40)}`);
  const size = Number.parseInt(m[1]!, 16);
  return { message: text.slice(0, size), rest: text.slice(size) };
}

/** The 200 of POST /receipts: `rct` + `-CAB` + this witness's couple, checked with signify-ts. */
function checkReceipt(body: string, event: Serder, witness: string): void {
  const { message, rest } = splitMessage(body);
  const rct = new Serder(JSON.parse(message) as Record<string, unknown>);
  assert.equal(rct.raw, message, 'signify-ts re-serializes the rct byte for byte');
  assert.equal(rct.sad.t, 'rct');
  assert.equal(rct.sad.d, event.said);
  assert.equal(rct.sad.i, event.pre);
  assert.equal(rct.sad.s, event.sad.s);
  const counter = new Counter({ qb64: rest.slice(0, 4) });
  assert.equal(counter.code, '-C');
  assert.equal(counter.count, 1);
  const prefixer = new Prefixer({ qb64: rest.slice(4, 48) });
  assert.equal(prefixer.qb64, witness);
  const cigar = new Cigar({ qb64: rest.slice(48, 136) });
  assert.equal(rest.length, 136, 'exactly one couple');
  assert.ok(new Verfer({ qb64: witness }).verify(cigar.raw, event.raw), 'Verfer.verify holds over the event');
  const flipped = Uint8Array.from(cigar.raw);
  flipped[5] = flipped[5]! ^ 1;
  assert.ok(!new Verfer({ qb64: witness }).verify(flipped, event.raw));
}

void test('signify-ts controller: icp, ixn, rot with adds/cuts; receipts, GET /receipts and /query parse with signify-ts', async (t) => {
  const tmp = tempDir();
  const node = await startKelNode(tmp.dir);
  t.after(async () => {
    await node.close();
    tmp.cleanup();
  });
  const witness = node.kel!.identity.prefix;
  assert.match(witness, /^B[A-Za-z0-9_-]{43}$/);
  const ctl = await Controller.create(3);

  const icp = ctl.incept([witness]);
  const r0 = await send(node.url, '/receipts', icp.raw, ctl.sign(icp));
  assert.equal(r0.status, 200, r0.text);
  assert.equal(r0.headers.get('content-type'), 'application/json+cesr');
  checkReceipt(r0.text, icp, witness);
  // A replay gets the stored receipt byte for byte.
  const again = await send(node.url, '/receipts', icp.raw, ctl.sign(icp));
  assert.equal(again.status, 200);
  assert.equal(again.text, r0.text);

  const ixn = ctl.interact([{ i: ctl.pre, s: '0', d: icp.said }]);
  const r1 = await send(node.url, '/receipts', ixn.raw, ctl.sign(ixn));
  assert.equal(r1.status, 200, r1.text);
  checkReceipt(r1.text, ixn, witness);

  // A rotation adding a second backer (bt "2" as text: intive false).
  const other = 'BJjH1MCDssEZMnORskF34AwOFDgDL47513GivRvd_QKz';
  const rot = ctl.rotate({ adds: [other], toad: 2 });
  const r2 = await send(node.url, '/receipts', rot.raw, ctl.sign(rot));
  assert.equal(r2.status, 200, r2.text);
  checkReceipt(r2.text, rot, witness);

  // GET /receipts: the rct and -B indexed signatures in backer order, parsed with Siger.
  const g = await fetch(`${node.url}/receipts?pre=${ctl.pre}&sn=2`);
  assert.equal(g.status, 200);
  const { message, rest } = splitMessage(await g.text());
  assert.equal(problemOf(message).d, rot.said);
  const counter = new Counter({ qb64: rest.slice(0, 4) });
  assert.equal(counter.code, '-B');
  assert.equal(counter.count, 1);
  const siger = new Siger({ qb64: rest.slice(4, 92) });
  assert.equal(siger.index, 0, 'this witness is backer 0 after the rotation');
  assert.ok(new Verfer({ qb64: witness }).verify(siger.raw, rot.raw));

  // GET /query?typ=kel re-parses with the same SAIDs, each event byte for byte.
  const q = await fetch(`${node.url}/query?typ=kel&pre=${ctl.pre}`);
  assert.equal(q.status, 200);
  let stream = await q.text();
  const saids: string[] = [];
  for (const ev of [icp, ixn, rot]) {
    const { message: m, rest: after } = splitMessage(stream);
    assert.equal(m, ev.raw);
    saids.push(new Serder(JSON.parse(m) as Record<string, unknown>).said);
    const v = new Counter({ qb64: after.slice(0, 4) });
    assert.equal(v.code, '-V');
    const atc = after.slice(4, 4 + v.count * 4);
    assert.ok(atc.startsWith('-AAB'), 'controller signatures first');
    assert.ok(atc.includes('-BAB'), 'then the witness receipts');
    assert.match(atc, /-EAB0A[A-Za-z0-9_-]{22}1AAG\d{4}-\d\d-\d\dT\d\dc\d\dc\d\dd\d{6}p00c00$/, 'then the first-seen couple');
    stream = after.slice(4 + v.count * 4);
  }
  assert.equal(stream, '');
  assert.deepEqual(saids, [icp.said, ixn.said, rot.said]);
});

void test('signify-ts controller: a rotation cutting this witness is 403 on /receipts, stored unwitnessed on POST /; a later ixn is 403 kel_not_witness', async (t) => {
  const tmp = tempDir();
  const node = await startKelNode(tmp.dir);
  t.after(async () => {
    await node.close();
    tmp.cleanup();
  });
  const witness = node.kel!.identity.prefix;
  const other = 'BJjH1MCDssEZMnORskF34AwOFDgDL47513GivRvd_QKz';
  const ctl = await Controller.create(4);
  const icp = ctl.incept([witness, other], 1);
  assert.equal((await send(node.url, '/receipts', icp.raw, ctl.sign(icp))).status, 200);
  const rot = ctl.rotate({ cuts: [witness], toad: 1 });
  const cut = await send(node.url, '/receipts', rot.raw, ctl.sign(rot));
  assert.equal(cut.status, 403, cut.text);
  assert.equal(problemOf(cut.text).code, 'kel_not_witness');
  const q0 = await (await fetch(`${node.url}/query?typ=kel&pre=${ctl.pre}`)).text();
  assert.ok(!q0.includes(rot.said), 'nothing stored on /receipts');
  const fwd = await send(node.url, '/', rot.raw, ctl.sign(rot));
  assert.equal(fwd.status, 204, fwd.text);
  const q1 = await (await fetch(`${node.url}/query?typ=kel&pre=${ctl.pre}`)).text();
  assert.ok(q1.includes(rot.raw), 'stored (unwitnessed) from POST /');
  assert.equal((await fetch(`${node.url}/receipts?pre=${ctl.pre}&sn=1`)).status, 404, 'not witnessed: no receipt served');
  const ixn = ctl.interact();
  const r = await send(node.url, '/receipts', ixn.raw, ctl.sign(ixn));
  assert.equal(r.status, 403, r.text);
  assert.equal(problemOf(r.text).code, 'kel_not_witness');
});

void test("signify-ts rotate() with its default arguments (integer bt, KERIA's path) → 200", async (t) => {
  const tmp = tempDir();
  const node = await startKelNode(tmp.dir);
  t.after(async () => {
    await node.close();
    tmp.cleanup();
  });
  const witness = node.kel!.identity.prefix;
  const ctl = await Controller.create(5);
  const icp = ctl.incept([witness]);
  assert.equal((await send(node.url, '/receipts', icp.raw, ctl.sign(icp))).status, 200);
  const rot = ctl.rotate({ intive: true });
  assert.match(rot.raw, /"bt":1,/);
  const r = await send(node.url, '/receipts', rot.raw, ctl.sign(rot));
  assert.equal(r.status, 200, r.text);
  const q = await (await fetch(`${node.url}/query?typ=kel&pre=${ctl.pre}&sn=1`)).text();
  assert.ok(q.startsWith(rot.raw));
});

void test("OOBI: /oobi/{B…}/controller serves the node's icp and an endorsed /end/role/add that signify-ts verifies", async (t) => {
  const tmp = tempDir();
  const node = await startKelNode(tmp.dir);
  t.after(async () => {
    await node.close();
    tmp.cleanup();
  });
  const witness = node.kel!.identity.prefix;
  const res = await fetch(`${node.url}/oobi/${witness}/controller`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('keri-aid'), witness);
  const { message: icp, rest } = splitMessage(await res.text());
  const serder = new Serder(JSON.parse(icp) as Record<string, unknown>);
  assert.equal(serder.raw, icp);
  assert.equal(serder.pre, witness);
  const v = new Counter({ qb64: rest.slice(0, 4) });
  const atc = rest.slice(4, 4 + v.count * 4);
  assert.equal(new Counter({ qb64: atc.slice(0, 4) }).code, '-A');
  const siger = new Siger({ qb64: atc.slice(4, 92) });
  assert.ok(new Verfer({ qb64: witness }).verify(siger.raw, icp), "the icp's signature verifies");
  const { message: rpy, rest: endorsement } = splitMessage(rest.slice(4 + v.count * 4));
  const role = JSON.parse(rpy) as { r: string; a: Record<string, string> };
  assert.equal(role.r, '/end/role/add');
  assert.deepEqual(role.a, { cid: witness, role: 'controller', eid: witness });
  assert.equal(endorsement.slice(0, 8), '-VAi-CAB');
  assert.equal(new Prefixer({ qb64: endorsement.slice(8, 52) }).qb64, witness);
  const cigar = new Cigar({ qb64: endorsement.slice(52, 140) });
  assert.ok(new Verfer({ qb64: witness }).verify(cigar.raw, rpy), 'the endorsement couple verifies');
  assert.equal((await fetch(`${node.url}/oobi/BJjH1MCDssEZMnORskF34AwOFDgDL47513GivRvd_QKz/controller`)).status, 404);
});
