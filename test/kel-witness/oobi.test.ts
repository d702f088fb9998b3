// SPEC §3.6.1 `--kel-url` and §3.6.5 OOBI reads, §3.6.10 item 7's last bullet:
// * `--kel-url` is checked at start (https://, http:// only on loopback or with --dev, 1–4, no
//   duplicates): anything else refuses to start with `invalid_kel_url`.
// * GET /oobi/{B…}/controller is the node's icp, one endorsed /loc/scheme reply per URL (scheme
//   from the URL), then the endorsed /end/role/add {cid:B, role:controller, eid:B}, all dated with
//   the stored stamp; signify-ts parses every message and verifies every couple.
// * The stamp: unchanged set (or no --kel-url) across a restart → the same bytes; a changed set →
//   a later stamp, even when the clock went back (never decreasing).
// * GET /oobi/{aid}/witness[/{B…}]: 200 with the delegator's KEL, aid's KEL (as /query without
//   sn), then the /loc/scheme replies; 404 for an aid not held, not fully witnessed (bt 2, one
//   receipt; 200 once the other witness's receipt is forwarded), a delegator not held, another eid, another role.
// * PostgreSQL: two replicas serve the same OOBI bytes for one stamp; a replica restarted with a new
//   set moves the stamp, and the other replica serves the new bytes at its next request.
// * GET /v1/kel/duplicity?after=&limit= pages the stored proofs (§3.4); malformed → 400 malformed_query.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Cigar, Counter, Prefixer, Serder, Verfer, interact } from 'signify-ts';
import { receiptMessage } from '../../src/keri/cesr-attachments.ts';
import { nextKelStamp, parseKelUrls } from '../../src/kel-witness/urls.ts';
import type { RunningWitness } from '../../src/witness/node.ts';
import { pgSkip, startPgServer } from '../helpers/pg-server.ts';
import { tempDir } from '../helpers/tmp.ts';
import { Controller, problemOf, send, startKelNode } from './harness.ts';

/** keripy's stream framing: each KERI JSON message and the attachments up to the next one. */
function splitStream(text: string): { message: string; attachments: string }[] {
  const out: { message: string; attachments: string }[] = [];
  let pos = 0;
  while (pos < text.length) {
    const m = /^\{"v":"KERI10JSON([0-9a-f]{6})_"/.exec(text.slice(pos));
    assert.ok(m !== null, `no message at ${pos}: ${text.slice(pos, pos + 40)}`);
    const end = pos + Number.parseInt(m[1]!, 16);
    const next = text.indexOf('{"v":"KERI10JSON', end);
    const stop = next < 0 ? text.length : next;
    out.push({ message: text.slice(pos, end), attachments: text.slice(end, stop) });
    pos = stop;
  }
  return out;
}

/** An endorsed reply checked with signify-ts: `-VAi-CAB` + the witness's Prefixer + a Cigar that Verfer verifies. */
function checkEndorsed(message: string, attachments: string, witness: string): Record<string, unknown> {
  const serder = new Serder(JSON.parse(message) as Record<string, unknown>);
  assert.equal(serder.raw, message, 'signify-ts re-serializes the reply byte for byte (version size and SAID)');
  const v = new Counter({ qb64: attachments.slice(0, 4) });
  assert.equal(v.code, '-V');
  assert.equal(v.count * 4, attachments.length - 4, 'the -V count covers the couple');
  const c = new Counter({ qb64: attachments.slice(4, 8) });
  assert.equal(c.code, '-C');
  assert.equal(c.count, 1);
  assert.equal(new Prefixer({ qb64: attachments.slice(8, 52) }).qb64, witness);
  const cigar = new Cigar({ qb64: attachments.slice(52, 140) });
  assert.ok(new Verfer({ qb64: witness }).verify(cigar.raw, message), 'the endorsement couple verifies');
  const flipped = message.replace('"rpy"', '"rpY"');
  assert.equal(new Verfer({ qb64: witness }).verify(cigar.raw, flipped), false, 'a changed byte fails');
  return serder.sad;
}

async function oobiOf(url: string, path: string): Promise<{ status: number; text: string; aid: string | null }> {
  const r = await fetch(url + path);
  return { status: r.status, text: await r.text(), aid: r.headers.get('keri-aid') };
}

void test('--kel-url: https, loopback http, --dev http; refused otherwise with invalid_kel_url', async () => {
  assert.deepEqual(parseKelUrls(undefined, false), undefined);
  assert.deepEqual(parseKelUrls(['https://w.example/', 'http://127.0.0.1:5642/', 'http://[::1]:1/'], false), [
    'https://w.example/',
    'http://127.0.0.1:5642/',
    'http://[::1]:1/',
  ]);
  assert.deepEqual(parseKelUrls(['http://w.example/'], true), ['http://w.example/']);
  for (const bad of [
    ['http://w.example/'],
    ['ftp://w.example/'],
    ['w.example'],
    ['https://u:p@w.example/'],
    ['https://w.example/?x=1'],
    ['https://w.example/#f'],
    ['https://w.example/', 'https://w.example/'],
    ['https://a.example/', 'https://b.example/', 'https://c.example/', 'https://d.example/', 'https://e.example/'],
  ])
    assert.throws(
      () => parseKelUrls(bad, false),
      (e: unknown) => (e as { code?: string }).code === 'invalid_kel_url',
      bad.join(' '),
    );
  const tmp = tempDir();
  try {
    await assert.rejects(
      startKelNode(join(tmp.dir, 'a'), { kelUrls: ['http://w.example/'] }),
      (e: unknown) => (e as { code?: string }).code === 'invalid_kel_url',
    );
    const dev = await startKelNode(join(tmp.dir, 'b'), { kelUrls: ['http://w.example/'], dev: true });
    await dev.close();
  } finally {
    tmp.cleanup();
  }
});

void test('the stamp never decreases: the clock going back, two changes in one millisecond, microsecond carry', () => {
  const t = Date.parse('2026-11-27T12:00:00.123Z');
  assert.equal(nextKelStamp(undefined, t), '2026-11-27T12:00:00.123000+00:00');
  assert.equal(nextKelStamp('2026-11-27T11:00:00.000000+00:00', t), '2026-11-27T12:00:00.123000+00:00');
  assert.equal(nextKelStamp('2026-11-27T12:00:00.123000+00:00', t), '2026-11-27T12:00:00.123001+00:00');
  assert.equal(nextKelStamp('2026-11-28T00:00:00.000000+00:00', t), '2026-11-28T00:00:00.000001+00:00', 'clock behind the stored stamp');
  assert.equal(nextKelStamp('2026-12-31T23:59:59.999999+00:00', t), '2027-01-01T00:00:00.000000+00:00');
});

void test('OOBI: /oobi/{B…}/controller couples verify with signify-ts; the stamp is stored, kept across restarts, and moves only forward', async (t) => {
  const tmp = tempDir();
  const dir = join(tmp.dir, 'w');
  const urls = ['https://w1.example/', 'http://127.0.0.1:5642/'];
  let now = Date.parse('2026-11-27T12:00:00.000Z');
  let node: RunningWitness | undefined = await startKelNode(dir, { kelUrls: urls, kelNow: () => now });
  t.after(async () => {
    await node?.close();
    tmp.cleanup();
  });
  const witness = node.kel!.identity.prefix;
  const first = await oobiOf(node.url, `/oobi/${witness}/controller`);
  assert.equal(first.status, 200);
  assert.equal(first.aid, witness);
  const parts = splitStream(first.text);
  assert.deepEqual(
    parts.map((p) => (JSON.parse(p.message) as { t: string; r?: string }).r ?? 't:' + (JSON.parse(p.message) as { t: string }).t),
    ['t:icp', '/loc/scheme', '/loc/scheme', '/end/role/add'],
  );
  const icp = new Serder(JSON.parse(parts[0]!.message) as Record<string, unknown>);
  assert.equal(icp.pre, witness);
  const stamp = '2026-11-27T12:00:00.000000+00:00';
  const loc = parts.slice(1, 3).map((p) => checkEndorsed(p.message, p.attachments, witness));
  assert.deepEqual(
    loc.map((s) => [s.dt, s.a]),
    [
      [stamp, { eid: witness, scheme: 'https', url: urls[0] }],
      [stamp, { eid: witness, scheme: 'http', url: urls[1] }],
    ],
  );
  const role = checkEndorsed(parts[3]!.message, parts[3]!.attachments, witness);
  assert.equal(role.dt, stamp);
  assert.deepEqual(role.a, { cid: witness, role: 'controller', eid: witness });
  assert.equal((await oobiOf(node.url, '/oobi')).text, first.text, 'GET /oobi: the same bytes');
  assert.equal((await oobiOf(node.url, `/oobi/${witness}`)).text, first.text);

  // Restarts: the same set, then no --kel-url at all (the stored set stays) → the same bytes.
  now += 60_000;
  await node.close();
  node = undefined;
  node = await startKelNode(dir, { kelUrls: urls, kelNow: () => now });
  assert.equal((await oobiOf(node.url, '/oobi')).text, first.text, 'same set: same stamp, same bytes');
  await node.close();
  node = undefined;
  node = await startKelNode(dir, { kelNow: () => now });
  assert.equal((await oobiOf(node.url, '/oobi')).text, first.text, 'no --kel-url: the stored set and stamp stay');
  const page = await (await fetch(`${node.url}/`)).text();
  assert.match(page, new RegExp(`https://w1\\.example/oobi/${witness}/controller`), 'the status page lists the OOBI URLs');
  assert.match(page, /id="kel-witness-held">0</);

  // A changed set with the clock stepped back: the stamp still moves forward.
  await node.close();
  node = undefined;
  node = await startKelNode(dir, { kelUrls: [urls[0]!], kelNow: () => Date.parse('2020-01-01T00:00:00Z') });
  const changed = splitStream((await oobiOf(node.url, '/oobi')).text);
  assert.equal(changed.length, 3, 'icp, one /loc/scheme, /end/role/add');
  const dt = (JSON.parse(changed[1]!.message) as { dt: string }).dt;
  assert.equal(dt, '2026-11-27T12:00:00.000001+00:00');
  assert.equal((JSON.parse(changed[2]!.message) as { dt: string }).dt, dt);
  checkEndorsed(changed[1]!.message, changed[1]!.attachments, witness);
  // An order change is a change too: a later stamp again.
  await node.close();
  node = undefined;
  node = await startKelNode(dir, { kelUrls: [urls[1]!, urls[0]!], kelNow: () => now });
  const reordered = splitStream((await oobiOf(node.url, '/oobi')).text);
  assert.deepEqual(
    reordered.slice(1, 3).map((p) => (JSON.parse(p.message) as { a: { url: string } }).a.url),
    [urls[1], urls[0]],
  );
  assert.equal((JSON.parse(reordered[1]!.message) as { dt: string }).dt, '2026-11-27T12:01:00.000000+00:00');
});

void test('OOBI: /oobi/{aid}/witness[/{B…}] serves delegator and aid KELs then /loc/scheme; 404 otherwise', async (t) => {
  const tmp = tempDir();
  const node = await startKelNode(tmp.dir, { kelUrls: ['https://w1.example/'] });
  t.after(async () => {
    await node.close();
    tmp.cleanup();
  });
  const witness = node.kel!.identity.prefix;
  const other = `B${'A'.repeat(43)}`;
  const ctl = await Controller.create(71);
  const icp = ctl.incept([witness]);
  assert.equal((await oobiOf(node.url, `/oobi/${ctl.pre}/witness`)).status, 404, 'not held');
  assert.equal((await send(node.url, '/receipts', icp.raw, ctl.sign(icp))).status, 200);
  const ixn = ctl.interact();
  assert.equal((await send(node.url, '/receipts', ixn.raw, ctl.sign(ixn))).status, 200);

  const ok = await oobiOf(node.url, `/oobi/${ctl.pre}/witness`);
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.aid, ctl.pre);
  const kel = await (await fetch(`${node.url}/query?typ=kel&pre=${ctl.pre}`)).text();
  const loc = splitStream((await oobiOf(node.url, '/oobi')).text)[1]!;
  assert.equal(ok.text, kel + loc.message + loc.attachments, "aid's KEL as /query without sn, then this node's /loc/scheme");
  assert.equal((await oobiOf(node.url, `/oobi/${ctl.pre}/witness/${witness}`)).text, ok.text);
  assert.equal((await oobiOf(node.url, `/oobi/${ctl.pre}/witness/${other}`)).status, 404, 'another eid');
  assert.equal((await oobiOf(node.url, `/oobi/${ctl.pre}/controller`)).status, 404, 'another role for a held aid');
  assert.equal((await oobiOf(node.url, `/oobi/${ctl.pre}/mailbox`)).status, 404);
  assert.equal((await oobiOf(node.url, `/oobi/${witness}/mailbox`)).status, 404);
  assert.equal((await oobiOf(node.url, `/oobi/${witness}/controller/${witness}`)).status, 404);
  assert.equal((await oobiOf(node.url, `/oobi/not-a-prefix/witness`)).status, 404);

  // Not fully witnessed: bt 2 with this node's receipt alone; 200 once the second witness's receipt is forwarded (POST /).
  const second = await startKelNode(join(tmp.dir, 'second'), {}, 0x08);
  t.after(() => second.close());
  const two = await Controller.create(72);
  const icp2 = two.incept([witness, second.kel!.identity.prefix], 2);
  assert.equal((await send(node.url, '/receipts', icp2.raw, two.sign(icp2))).status, 200);
  const nf = await oobiOf(node.url, `/oobi/${two.pre}/witness`);
  assert.equal(nf.status, 404);
  assert.equal(problemOf(nf.text).code, 'not_found');
  const theirs = await send(second.url, '/receipts', icp2.raw, two.sign(icp2));
  assert.equal(theirs.status, 200);
  const rct = receiptMessage(two.pre, '0', icp2.said);
  assert.ok(theirs.text.startsWith(rct + '-CAB'));
  assert.equal((await send(node.url, '/', rct, theirs.text.slice(rct.length))).status, 204);
  assert.equal((await oobiOf(node.url, `/oobi/${two.pre}/witness`)).status, 200, 'bt receipts held: fully witnessed');

  // A delegate: 404 while its delegator is not held; then 200 with the delegator's KEL first.
  const root = await Controller.create(73);
  const rootIcp = root.incept([witness]);
  const del = await Controller.create(74);
  const dip = del.incept([witness], 1, root.pre);
  assert.equal(dip.sad.t, 'dip');
  assert.equal((await send(node.url, '/receipts', dip.raw, del.sign(dip))).status, 200);
  assert.equal((await oobiOf(node.url, `/oobi/${del.pre}/witness`)).status, 404, 'delegator not held');
  assert.equal((await send(node.url, '/receipts', rootIcp.raw, root.sign(rootIcp))).status, 200);
  const chain = await oobiOf(node.url, `/oobi/${del.pre}/witness`);
  assert.equal(chain.status, 200, chain.text);
  assert.deepEqual(
    splitStream(chain.text).map((p) => (JSON.parse(p.message) as { d: string; t: string }).t),
    ['icp', 'dip', 'rpy'],
  );
  assert.equal((JSON.parse(splitStream(chain.text)[0]!.message) as { i: string }).i, root.pre, 'the delegator (root-most) first');
});

void test('GET /v1/kel/duplicity pages the stored proofs (after=<prefix>:<sn>, limit 1..100)', async (t) => {
  const tmp = tempDir();
  const node = await startKelNode(tmp.dir);
  t.after(async () => {
    await node.close();
    tmp.cleanup();
  });
  const witness = node.kel!.identity.prefix;
  const empty = await fetch(`${node.url}/v1/kel/duplicity`);
  assert.equal(empty.status, 200);
  assert.equal(empty.headers.get('access-control-allow-origin'), '*');
  assert.deepEqual(await empty.json(), { items: [], next: null });
  // Three proofs: two controllers, one at sn 1 and one at sn 2 for the first.
  const keys: string[] = [];
  for (const [tag, sns] of [
    [81, [1, 2]],
    [82, [1]],
  ] as const) {
    const ctl = await Controller.create(tag);
    const icp = ctl.incept([witness]);
    assert.equal((await send(node.url, '/receipts', icp.raw, ctl.sign(icp))).status, 200);
    let prev = icp.said;
    for (let sn = 1; sn <= Math.max(...sns); sn++) {
      const ixn = ctl.interact([{ d: prev }]);
      assert.equal((await send(node.url, '/receipts', ixn.raw, ctl.sign(ixn))).status, 200);
      if ((sns as readonly number[]).includes(sn)) {
        const fork = interact({ pre: ctl.pre, dig: prev, sn, data: [{ d: ixn.said }], version: undefined, kind: undefined });
        const r = await send(node.url, '/receipts', fork.raw, ctl.sign(fork));
        assert.equal(r.status, 409, r.text);
        keys.push(`${ctl.pre}:${sn}`);
      }
      prev = ixn.said;
    }
  }
  keys.sort((a, b) => {
    const [pa, sa] = a.split(':') as [string, string];
    const [pb, sb] = b.split(':') as [string, string];
    return pa < pb ? -1 : pa > pb ? 1 : Number(sa) - Number(sb);
  });
  type Page = { items: { prefix: string; sn: number; v: string }[]; next: string | null };
  const get = async (q: string): Promise<Page> => {
    const r = await fetch(`${node.url}/v1/kel/duplicity${q}`);
    assert.equal(r.status, 200, q);
    return (await r.json()) as Page;
  };
  const p1 = await get('?limit=2');
  assert.deepEqual(
    p1.items.map((i) => `${i.prefix}:${i.sn}`),
    keys.slice(0, 2),
  );
  assert.equal(p1.items[0]!.v, 'anchor-witness/kel-duplicity/v1');
  assert.equal(p1.next, keys[1]);
  const p2 = await get(`?limit=2&after=${p1.next}`);
  assert.deepEqual(
    p2.items.map((i) => `${i.prefix}:${i.sn}`),
    keys.slice(2),
  );
  assert.equal(p2.next, null, 'a short page ends the listing');
  const all = await get('');
  assert.equal(all.items.length, 3);
  assert.equal(all.next, null);
  const single = await (await fetch(`${node.url}/v1/kel/duplicity/${keys[0]!.replace(':', '/')}`)).json();
  assert.deepEqual(single, all.items[0]);
  for (const bad of [
    '?limit=0',
    '?limit=101',
    '?limit=x',
    '?after=nope',
    `?after=${keys[0]!.split(':')[0]}`,
    `?after=${keys[0]}x`,
    '?after=:1',
  ]) {
    const r = await fetch(`${node.url}/v1/kel/duplicity${bad}`);
    assert.equal(r.status, 400, bad);
    assert.equal(problemOf(await r.text()).code, 'malformed_query', bad);
  }
  const spec = (await (await fetch(`${node.url}/openapi.json`)).json()) as {
    paths: Record<string, { get?: { responses?: Record<string, unknown> } }>;
  };
  assert.ok(spec.paths['/v1/kel/duplicity']?.get?.responses?.['200'] !== undefined, '/openapi.json documents the page');
});

void describe('PostgreSQL', { skip: pgSkip() }, () => {
  void test('replicas on one database serve the same OOBI bytes for one stamp; a new set reaches the other replica', async (t) => {
    const server = await startPgServer();
    const tmp = tempDir();
    const store = await server.createDatabase('keloobi');
    const a0 = await startKelNode(join(tmp.dir, 'a'), { store, kelUrls: ['https://w1.example/'] });
    const b = await startKelNode(join(tmp.dir, 'b'), { store });
    let a: RunningWitness | undefined = a0;
    t.after(async () => {
      await a?.close();
      await b.close();
      await server.stop();
      tmp.cleanup();
    });
    const first = (await oobiOf(a0.url, '/oobi')).text;
    assert.equal(splitStream(first).length, 3);
    assert.equal((await oobiOf(b.url, '/oobi')).text, first, 'the replica started without --kel-url serves the stored set');
    await a0.close();
    a = undefined;
    a = await startKelNode(join(tmp.dir, 'a'), { store, kelUrls: ['https://w1.example/', 'https://w2.example/'] });
    const second = (await oobiOf(a.url, '/oobi')).text;
    assert.notEqual(second, first);
    const parts = splitStream(second);
    assert.equal(parts.length, 4);
    const stamps = (text: string) =>
      splitStream(text)
        .map((p) => (JSON.parse(p.message) as { dt?: string }).dt)
        .filter((d) => d !== undefined);
    assert.ok(stamps(second)[0]! > stamps(first)[0]!, 'a later stamp');
    assert.equal((await oobiOf(b.url, '/oobi')).text, second, 'the other replica rebuilds for the new stamp: the same bytes');
  });
});
