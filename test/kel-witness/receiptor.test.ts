// SPEC §3.6.10 item 3: keripy's controller request sequence (keri.app.agenting.Receiptor.receipt
// and .catchup, keripy 1.3.x) replayed end to end over loopback against in-process witnesses:
// POST /receipts to every witness, strip the `-CAB` counter off each 200 to keep the witness's
// couple, then POST / to each witness the other witnesses' `/loc/scheme` replies (inception only;
// the real ones, from each witness's OOBI, naming its `--kel-url`)
// and `rct` + `-C` + the others' couples (one request per message, as httping's
// streamCESRRequests sends them). GET /receipts then shows every witness's `-B` signature in backer
// order. For a rotation adding a witness, catchup first streams the controller's cloneEvtMsg
// stream to the new witness's POST /, then the rotation goes to /receipts everywhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verifyEd25519 } from '../../src/crypto/ed25519.ts';
import { parseWitnessAttachments, receiptMessage } from '../../src/keri/cesr-attachments.ts';
import { decodeQb64 } from '../../src/keri/qb64.ts';
import type { RunningWitness } from '../../src/witness/node.ts';
import { freePort } from '../helpers/log-witness-peers.ts';
import { tempDir } from '../helpers/tmp.ts';
import { join } from 'node:path';
import { Controller, send, startKelNode } from './harness.ts';
import type { Serder } from 'signify-ts';

const utf8 = new TextEncoder();

/** keripy's stream framing: a KERI JSON message then its attachments (up to the next message). */
function splitStream(text: string): { message: string; attachments: string }[] {
  const out: { message: string; attachments: string }[] = [];
  let pos = 0;
  while (pos < text.length) {
    const m = /^\{"v":"KERI10JSON([0-9a-f]{6})_"/.exec(text.slice(pos));
    assert.ok(m !== null, `no message at ${pos}`);
    const end = pos + Number.parseInt(m[1]!, 16);
    const next = text.indexOf('{"v":"KERI10JSON', end);
    const stop = next < 0 ? text.length : next;
    out.push({ message: text.slice(pos, end), attachments: text.slice(end, stop) });
    pos = stop;
  }
  return out;
}

/** httping.streamCESRRequests to POST /: one request per message, its attachments in the header. */
async function stream(w: RunningWitness, text: string): Promise<number[]> {
  const statuses: number[] = [];
  for (const { message, attachments } of splitStream(text)) statuses.push((await send(w.url, '/', message, attachments)).status);
  return statuses;
}

const prefixOf = (w: RunningWitness): string => w.kel!.identity.prefix;

/** What `schemes(db, eids)` sends: each witness's endorsed `/loc/scheme` replies, as its OOBI serves them. */
async function schemes(ws: readonly RunningWitness[]): Promise<string> {
  const parts: string[] = [];
  for (const w of ws) {
    const oobi = splitStream(await (await fetch(`${w.url}/oobi/${prefixOf(w)}/controller`)).text());
    const loc = oobi.filter((m) => (JSON.parse(m.message) as { r?: string }).r === '/loc/scheme');
    assert.deepEqual(
      loc.map((m) => (JSON.parse(m.message) as { a: { eid: string; url: string } }).a),
      [{ eid: prefixOf(w), scheme: 'http', url: `${w.url}/` }],
    );
    parts.push(...loc.map((m) => m.message + m.attachments));
  }
  return parts.join('');
}

/** A witness that advertises its own loopback URL (`--kel-url`): the port is chosen before it starts. */
async function startWitnessAt(dir: string, seed: number): Promise<RunningWitness> {
  const port = await freePort();
  return startKelNode(dir, { port, kelUrls: [`http://127.0.0.1:${port}/`] }, seed);
}

/** Receiptor.receipt for one event: /receipts everywhere, then the others' couples (and schemes) to each. */
async function receipt(wits: readonly RunningWitness[], event: Serder, attachment: string, added: readonly string[] = []): Promise<void> {
  const rcts = new Map<RunningWitness, string>();
  for (const w of wits) {
    const r = await send(w.url, '/receipts', event.raw, attachment);
    assert.equal(r.status, 200, `${w.url}: ${r.text}`);
    const { message, attachments } = splitStream(r.text)[0]!;
    assert.equal(message, receiptMessage(event.pre, event.sad.s as string, event.said));
    assert.equal(attachments.slice(0, 4), '-CAB', 'pull off the count code');
    rcts.set(w, attachments.slice(4));
  }
  const t = event.sad.t as string;
  for (const w of wits) {
    const others = wits.filter((o) => o !== w);
    let msg = '';
    if (t === 'icp' || t === 'dip' || ((t === 'rot' || t === 'drt') && added.includes(prefixOf(w)))) msg += await schemes(others);
    const count = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'[others.length]!;
    msg += receiptMessage(event.pre, event.sad.s as string, event.said) + `-CA${count}` + others.map((o) => rcts.get(o)!).join('');
    for (const status of await stream(w, msg)) assert.equal(status, 204);
  }
}

/** GET /receipts: the rct, then `-B` + count + every witness's indexed signature in backer order, verifying. */
async function checkReceipts(w: RunningWitness, event: Serder, backers: readonly string[]): Promise<void> {
  const res = await fetch(`${w.url}/receipts?pre=${event.pre}&sn=${Number.parseInt(event.sad.s as string, 16)}`);
  assert.equal(res.status, 200);
  const { message, attachments } = splitStream(await res.text())[0]!;
  assert.equal(message, receiptMessage(event.pre, event.sad.s as string, event.said));
  const parsed = parseWitnessAttachments(attachments, false);
  assert.deepEqual(
    parsed.witnesses.map((s) => s.index),
    backers.map((_, i) => i),
    `${backers.length} -B signatures in backer order`,
  );
  for (const s of parsed.witnesses)
    assert.ok(verifyEd25519(decodeQb64(backers[s.index]!, ['B'])!.raw, utf8.encode(event.raw), s.signature), `backer ${s.index}`);
}

void test('Receiptor replayed: one witness (rct + -CAA), three witnesses (-CAC, /loc/scheme), and catchup of a witness added by rot', async (t) => {
  const tmp = tempDir();
  const wits: RunningWitness[] = [];
  for (let i = 0; i < 4; i++) wits.push(await startWitnessAt(join(tmp.dir, `w${i}`), 0x51 + i));
  t.after(async () => {
    for (const w of wits) await w.close();
    tmp.cleanup();
  });
  const [w1, w2, w3, w4] = wits as [RunningWitness, RunningWitness, RunningWitness, RunningWitness];

  // One witness: /receipts, then POST / with rct + -CAA (no other couples).
  const solo = await Controller.create(61);
  const sicp = solo.incept([prefixOf(w1)]);
  await receipt([w1], sicp, solo.sign(sicp));
  await checkReceipts(w1, sicp, [prefixOf(w1)]);

  // Three witnesses: every witness ends up with all three receipts, in backer order.
  const ctl = await Controller.create(62);
  const three = [w1, w2, w3];
  const b = three.map(prefixOf);
  const icp = ctl.incept(b, 3);
  await receipt(three, icp, ctl.sign(icp));
  for (const w of three) await checkReceipts(w, icp, b);
  const ixn = ctl.interact();
  await receipt(three, ixn, ctl.sign(ixn));
  for (const w of three) await checkReceipts(w, ixn, b);

  // catchup: a rot adding w4. First the controller's first-seen stream (cloneEvtMsg form, with the
  // witnesses' -B and the -E first-seen couples) to w4's POST /, then the rot to /receipts everywhere.
  const clone = await (await fetch(`${w1.url}/query?typ=kel&pre=${ctl.pre}`)).text();
  const caught = await stream(w4, clone);
  assert.equal(caught.length, 2);
  for (const s of caught) assert.ok(s === 202 || s === 204, `catch-up event answered ${s}`);
  const rot = ctl.rotate({ adds: [prefixOf(w4)], toad: 4 });
  const four = [w1, w2, w3, w4];
  await receipt(four, rot, ctl.sign(rot), [prefixOf(w4)]);
  // w4 now holds the KEL (the earlier events unwitnessed there), and every witness shows four -B for the rot.
  const held = await fetch(`${w4.url}/query?typ=kel&pre=${ctl.pre}`);
  assert.equal(held.status, 200);
  assert.deepEqual(
    splitStream(await held.text()).map((m) => (JSON.parse(m.message) as { d: string }).d),
    [icp.said, ixn.said, rot.said],
  );
  for (const w of four) await checkReceipts(w, rot, four.map(prefixOf));
});
