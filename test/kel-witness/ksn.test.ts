// SPEC §3.6.5 GET /ksn and §3.6.10 item 7 (the key-state vector): the key-state record builder
// reproduces upstream's keripy-1.3.4 `ksn-emit.json` from `fixtures/kel-ed25519.json`, with
// keripy's member order; over loopback, /ksn answers an endorsed `rpy /ksn/<witness>` that
// signify-ts parses and verifies, and 404s until the latest event is fully witnessed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Cigar, Prefixer, Serder, Signer, Verfer } from 'signify-ts';
import { coupleGroup, receiptMessage } from '../../src/keri/cesr-attachments.ts';
import { versionString } from '../../src/keri/event.ts';
import { encodeQb64 } from '../../src/keri/qb64.ts';
import { SAID_PLACEHOLDER, blake3Qb64 } from '../../src/keri/said.ts';
import { keyStateRecord, ksnReply } from '../../src/kel-witness/ksn.ts';
import { tempDir } from '../helpers/tmp.ts';
import { Controller, send, startKelNode } from './harness.ts';

const utf8 = new TextEncoder();
const KERIPY_ORDER = ['vn', 'i', 's', 'p', 'd', 'f', 'dt', 'et', 'kt', 'k', 'nt', 'n', 'bt', 'b', 'c', 'ee', 'di'];

/**
 * Upstream's `tests/conformance/fixtures/kel-ed25519.json` (keripy 1.3.4), rebuilt from what SPEC
 * §3.6.10 and research/upstream-kel.md §4.A state: an unsigned `icp` of the Ed25519 key 00 01 … 1f.
 * The SAID must come out as upstream's EOoC9A…Z1J, which proves the rebuild is that fixture.
 */
function upstreamFixture(): Record<string, unknown>[] {
  const key = encodeQb64(
    'D',
    Uint8Array.from({ length: 32 }, (_, i) => i),
  );
  const draft: Record<string, unknown> = {
    v: versionString(0),
    t: 'icp',
    d: SAID_PLACEHOLDER,
    i: SAID_PLACEHOLDER,
    s: '0',
    kt: '1',
    k: [key],
    nt: '0',
    n: [],
    bt: '0',
    b: [],
    c: [],
    a: [],
  };
  draft.v = versionString(utf8.encode(JSON.stringify(draft)).length);
  const said = blake3Qb64(utf8.encode(JSON.stringify(draft)));
  draft.d = said;
  draft.i = said;
  return [draft];
}

void test('key-state record: upstream fixture kel-ed25519.json yields ksn-emit.json as a JSON value, in keripy member order', () => {
  const kel = upstreamFixture();
  assert.equal(kel[0]!.d, 'EOoC9AuwxiwcyUDsa2yNAaZOVWqfiAt4o3R31_8K2Z1J', 'the rebuilt fixture is upstream’s');
  assert.equal(kel[0]!.v, 'KERI10JSON0000fd_');
  const record = keyStateRecord(kel, { fn: 0, dt: '1970-01-01T00:00:00+00:00' });
  const expected = JSON.parse(
    '{"b":[],"bt":"0","c":[],"d":"EOoC9AuwxiwcyUDsa2yNAaZOVWqfiAt4o3R31_8K2Z1J","di":"","dt":"1970-01-01T00:00:00+00:00","ee":{"ba":[],"br":[],"d":"EOoC9AuwxiwcyUDsa2yNAaZOVWqfiAt4o3R31_8K2Z1J","s":"0"},"et":"icp","f":"0","i":"EOoC9AuwxiwcyUDsa2yNAaZOVWqfiAt4o3R31_8K2Z1J","k":["DAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f"],"kt":"1","n":[],"nt":"0","p":"","s":"0","vn":[1,0]}',
  ) as unknown;
  assert.deepEqual(record, expected);
  assert.deepEqual(Object.keys(record), KERIPY_ORDER);
  assert.deepEqual(Object.keys(record.ee), ['s', 'd', 'br', 'ba']);
  // The rpy: v, t, d, dt, r, a in that order; dt is the record's; the SAID recomputes.
  const rpy = ksnReply('BJjH1MCDssEZMnORskF34AwOFDgDL47513GivRvd_QKz', record);
  const parsed = JSON.parse(rpy) as Record<string, unknown>;
  assert.deepEqual(Object.keys(parsed), ['v', 't', 'd', 'dt', 'r', 'a']);
  assert.equal(parsed.r, '/ksn/BJjH1MCDssEZMnORskF34AwOFDgDL47513GivRvd_QKz');
  assert.equal(parsed.dt, record.dt);
  assert.equal(parsed.v, versionString(utf8.encode(rpy).length));
  assert.equal(JSON.stringify(parsed.a), JSON.stringify(record), 'a keeps keripy’s member order on the wire');
  assert.equal(new Serder(parsed).said, parsed.d, 'signify-ts computes the same SAID');
});

void test('key-state record: rotations move k/n/ee and apply br/ba to b; integer thresholds become hex; ixn changes only s/p/d/et', () => {
  const wit = (n: number) => encodeQb64('B', new Uint8Array(32).fill(n));
  const icp = {
    v: 'x',
    t: 'icp',
    d: 'E0',
    i: 'E0',
    s: '0',
    kt: 1,
    k: ['Dk0'],
    nt: '1',
    n: ['En0'],
    bt: '2',
    b: [wit(1), wit(2)],
    c: ['EO'],
    a: [],
  };
  const rot = {
    v: 'x',
    t: 'rot',
    d: 'E1',
    i: 'E0',
    s: '1',
    p: 'E0',
    kt: ['1/2', '1/2'],
    k: ['Dk1', 'Dk2'],
    nt: 12,
    n: ['En1'],
    bt: 2,
    br: [wit(1)],
    ba: [wit(3)],
    a: [],
  };
  const ixn = { v: 'x', t: 'ixn', d: 'E2', i: 'E0', s: '2', p: 'E1', a: [] };
  const r = keyStateRecord([icp, rot, ixn], { fn: 17, dt: 'T' });
  assert.equal(r.s, '2');
  assert.equal(r.p, 'E1');
  assert.equal(r.et, 'ixn');
  assert.equal(r.f, '11');
  assert.deepEqual(r.kt, ['1/2', '1/2']);
  assert.equal(r.nt, 'c');
  assert.equal(r.bt, '2');
  assert.deepEqual(r.b, [wit(2), wit(3)]);
  assert.deepEqual(r.c, ['EO']);
  assert.deepEqual(r.ee, { s: '1', d: 'E1', br: [wit(1)], ba: [wit(3)] });
  assert.equal(keyStateRecord([icp], { fn: 0, dt: 'T' }).kt, '1');
});

/** `rpy` + `-VAi-CAB` + couple: the message, the couple's prefix and signature, parsed with signify-ts. */
function parseEndorsed(body: string): { rpy: Record<string, unknown>; raw: string; prefix: string; sig: Uint8Array } {
  const m = /^\{"v":"KERI10JSON([0-9a-f]{6})_"/.exec(body);
  assert.ok(m !== null);
  const raw = body.slice(0, Number.parseInt(m[1]!, 16));
  const rest = body.slice(raw.length);
  assert.equal(rest.slice(0, 8), '-VAi-CAB');
  assert.equal(rest.length, 8 + 44 + 88);
  return {
    rpy: JSON.parse(raw) as Record<string, unknown>,
    raw,
    prefix: new Prefixer({ qb64: rest.slice(8, 52) }).qb64,
    sig: new Cigar({ qb64: rest.slice(52) }).raw,
  };
}

void test('GET /ksn over loopback: 404 until fully witnessed, then an endorsed rpy /ksn/<witness> that signify-ts verifies', async (t) => {
  const tmp = tempDir();
  const node = await startKelNode(tmp.dir);
  t.after(async () => {
    await node.close();
    tmp.cleanup();
  });
  const witness = node.kel!.identity.prefix;
  // A second backer whose receipt arrives later through POST / (rct + -C), as keripy's Receiptor sends it.
  const ctl = await Controller.create(5);
  const other = new Signer({ raw: new Uint8Array(32).fill(9), transferable: false });
  const icp = ctl.incept([witness, other.verfer.qb64], 2);
  assert.equal((await send(node.url, '/receipts', icp.raw, ctl.sign(icp))).status, 200);

  assert.equal((await fetch(`${node.url}/ksn?pre=${ctl.pre}`)).status, 404, 'one receipt of bt 2: not fully witnessed');
  assert.equal((await fetch(`${node.url}/ksn?pre=not-a-prefix`)).status, 400);
  assert.equal((await fetch(`${node.url}/ksn?pre=BJjH1MCDssEZMnORskF34AwOFDgDL47513GivRvd_QKz`)).status, 404);

  const couple = coupleGroup([{ prefix: other.verfer.qb64, signature: other.sign(utf8.encode(icp.raw)).raw }]);
  const fwd = await send(node.url, '/', receiptMessage(ctl.pre, '0', icp.said), couple);
  assert.equal(fwd.status, 204, fwd.text);

  const res = await fetch(`${node.url}/ksn?pre=${ctl.pre}`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/cesr');
  assert.equal(res.headers.get('access-control-allow-origin'), '*');
  const body = await res.text();
  const { rpy, raw, prefix, sig } = parseEndorsed(body);
  assert.equal(prefix, witness);
  assert.ok(new Verfer({ qb64: witness }).verify(sig, raw), 'the endorsement verifies under the witness prefix');
  const flipped = Uint8Array.from(sig);
  flipped[0] = flipped[0]! ^ 1;
  assert.ok(!new Verfer({ qb64: witness }).verify(flipped, raw));
  assert.equal(new Serder(rpy).raw, raw, 'signify-ts re-serializes the rpy byte for byte');
  assert.equal(rpy.r, `/ksn/${witness}`);
  const a = rpy.a as Record<string, unknown>;
  assert.deepEqual(Object.keys(a), KERIPY_ORDER);
  assert.equal(a.i, ctl.pre);
  assert.equal(a.s, '0');
  assert.equal(a.d, icp.said);
  assert.equal(a.et, 'icp');
  assert.equal(a.f, '0');
  assert.equal(a.bt, '2');
  assert.deepEqual(a.b, [witness, other.verfer.qb64]);
  assert.equal(rpy.dt, a.dt);
  assert.match(a.dt as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
  // /openapi.json lists the reads.
  const openapi = (await (await fetch(`${node.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
  for (const path of ['/ksn', '/v1/kel/event']) assert.ok(path in openapi.paths, `${path} in /openapi.json`);
  // Cached per (prefix, tip): the same bytes again.
  assert.equal(await (await fetch(`${node.url}/ksn?pre=${ctl.pre}`)).text(), body);
});
