// SPEC §3.6.10 item 1: keripy v1.3.6 tests/core/test_eventing.py::test_messagize, its recorded
// bytes checked against our CESR writer and reader (src/keri/cesr-attachments.ts) and our strict
// Ed25519 verifier, and the clonePreIter structure keripy's tests/core/test_replay.py asserts,
// checked on our GET /query?typ=kel over loopback. (The Dater of test_coring.py round-trips in
// cesr.test.ts.) The vectors are keripy's recorded values, typed as its test splits them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Seqner, Serder, Siger } from 'signify-ts';
import { verifyEd25519 } from '../../src/crypto/ed25519.ts';
import {
  CesrError,
  coupleGroup,
  daterIso,
  parseWitnessAttachments,
  pipelined,
  receiptMessage,
  witnessSignatureGroup,
} from '../../src/keri/cesr-attachments.ts';
import { computeSaid, parseEvent } from '../../src/keri/event.ts';
import { decodeQb64 } from '../../src/keri/qb64.ts';
import { tempDir } from '../helpers/tmp.ts';
import { Controller, send, startKelNode } from './harness.ts';

const utf8 = new TextEncoder();

// keripy 1.3.6 test_messagize: Salter(raw=b'0123456789abcdef'), incept(keys=[verfers[0].qb64]).
const ICP =
  '{"v":"KERI10JSON0000fd_","t":"icp","d":"EFyzzg2Mp5A3ecChc6AhSLTQ' +
  'ssBZAmNvPnGxjJyHxl4F","i":"EFyzzg2Mp5A3ecChc6AhSLTQssBZAmNvPnGxj' +
  'JyHxl4F","s":"0","kt":"1","k":["DOif48whAmpb_4kyksMcz57snMRIuX0b' +
  'qN1FDe09AlRj"],"nt":"0","n":[],"bt":"0","b":[],"c":[],"a":[]}';
const SAID = 'EFyzzg2Mp5A3ecChc6AhSLTQssBZAmNvPnGxjJyHxl4F';
/** sigers (stem "C", index 0) */
const SIGERS = '-AA' + 'BAAB1DuEfnZZ6juMZDYiodcWiIqdjuEE-QzdORp-DbxdDN_GG84x_NA1rSc5lPfP' + 'QQkQkxI862_XjyZLHyClVTLoD';
/** wigers (stem "W", index 0; keripy does not print the W key) */
const WIGERS = '-BA' + 'BAABtOhjlKo8WhJQ3EXMIMaQ_IH6yeyxs7_JuO4RioH1NUTtzTuV1bbuB7eoNhEj' + '20VJYa4947ZMVrOxKhzI6EqUH';
/** cigars (stem "R", non-transferable: the prefix BJjH1…) */
const CIGARS =
  '-CA' +
  'BBJjH1MCDssEZMnORskF34AwOFDgDL47513GivRvd_QKz0BDwWrxO8RItpgGFtFi' +
  'DF7QoVas-6Bzvj0xtOfbsh31jjtshcEa0rUVX2xsyyH1US2fBWe7FNpn6xko5EVw' +
  'g_TwF';
/** the R key's indexed signature (wigers re-signed with the R verfer) */
const R_WIGERS = '-BA' + 'BAADwWrxO8RItpgGFtFiDF7QoVas-6Bzvj0xtOfbsh31jjtshcEa0rUVX2xsyyH1' + 'US2fBWe7FNpn6xko5EVwg_TwF';
const R_PREFIX = 'BJjH1MCDssEZMnORskF34AwOFDgDL47513GivRvd_QKz';
/** messagize(reserder, cigars=cigars): the rct and its couple. */
const RCT =
  '{"v":"KERI10JSON000091_","t":"rct","d":"EFyzzg2Mp5A3ecChc6AhSLTQ' +
  'ssBZAmNvPnGxjJyHxl4F","i":"EFyzzg2Mp5A3ecChc6AhSLTQssBZAmNvPnGxj' +
  'JyHxl4F","s":"0"}-CABBJjH1MCDssEZMnORskF34AwOFDgDL47513GivRvd_QK' +
  'z0BDwWrxO8RItpgGFtFiDF7QoVas-6Bzvj0xtOfbsh31jjtshcEa0rUVX2xsyyH1' +
  'US2fBWe7FNpn6xko5EVwg_TwF';
/** The seal case (SealEvent as -F): a transferable receipt group a witness does not take. */
const SEAL =
  '-FA' +
  'BDAvCLRr5luWmp7keDvDuLP0kIqcyBYq79b3Dho1QvrjI0AAAAAAAAAAAAAAAAAA' +
  'AAAAAEMuNWHss_H_kH4cG7Li1jn2DXfrEaqN7zhqTEhkeDZ2z-AABAAB1DuEfnZZ' +
  '6juMZDYiodcWiIqdjuEE-QzdORp-DbxdDN_GG84x_NA1rSc5lPfPQQkQkxI862_X' +
  'jyZLHyClVTLoD';

const keyOf = (qb64: string): Uint8Array => decodeQb64(qb64, ['D', 'B'])!.raw;

void test('test_messagize: the icp parses and its SAID reproduces; our writer reproduces the rct + -CAB…g_TwF bytes', () => {
  const e = parseEvent(JSON.parse(ICP));
  assert.equal(new TextDecoder().decode(e.bytes), ICP, 'B(e) re-serializes byte for byte');
  assert.equal(computeSaid(e), SAID);
  const couple = parseWitnessAttachments(CIGARS, false).couples[0]!;
  assert.equal(couple.prefix, R_PREFIX);
  const ours = receiptMessage(e.i, e.s, e.d) + coupleGroup([{ prefix: R_PREFIX, signature: couple.signature }]);
  assert.equal(ours, RCT);
  // The indexed form of the same signature, as our -B writer writes it.
  assert.equal(witnessSignatureGroup([{ index: 0, signature: couple.signature }]), R_WIGERS);
});

void test('test_messagize: the reader parses -A, -B, -C and the pipelined -VAX/-VAi/-VA5/-VBQ groups; -FAB is refused', () => {
  const cases: [string, string][] = [
    ['-VAX', SIGERS],
    ['-VAX', WIGERS],
    ['-VAi', CIGARS],
    ['-VA5', WIGERS + CIGARS],
    ['-VBQ', SIGERS + WIGERS + CIGARS],
  ];
  for (const [v, groups] of cases) {
    assert.equal(pipelined(groups), v + groups, `our -V count for ${v}`);
    const bare = parseWitnessAttachments(groups, false);
    const framed = parseWitnessAttachments(v + groups, false);
    assert.deepEqual(framed, bare);
  }
  const all = parseWitnessAttachments('-VBQ' + SIGERS + WIGERS + CIGARS, true);
  assert.equal(all.controller!.length, 1);
  assert.equal(all.controller![0]!.index, 0);
  assert.equal(all.controllerText, SIGERS);
  assert.equal(all.witnesses.length, 1);
  assert.equal(all.couples.length, 1);
  // keripy's seal cases: -FAB alone, -VA0 + -FAB…, and -VBt with everything.
  for (const bad of [SEAL, '-VA0' + SEAL, '-VBt' + SEAL + R_WIGERS + CIGARS]) {
    assert.throws(() => parseWitnessAttachments(bad, false), CesrError, bad.slice(0, 8));
  }
});

void test('test_messagize: the signatures verify under their keys; a flipped character fails', () => {
  const bytes = utf8.encode(ICP);
  const k = keyOf('DOif48whAmpb_4kyksMcz57snMRIuX0bqN1FDe09AlRj');
  const sig = parseWitnessAttachments(SIGERS, true).controller![0]!.signature;
  assert.ok(verifyEd25519(k, bytes, sig), 'the controller signature (-A)');
  const cig = parseWitnessAttachments(CIGARS, false).couples[0]!.signature;
  assert.ok(verifyEd25519(keyOf(R_PREFIX), bytes, cig), 'the receipt couple (-C)');
  const wig = parseWitnessAttachments(R_WIGERS, false).witnesses[0]!.signature;
  assert.ok(verifyEd25519(keyOf(R_PREFIX), bytes, wig), 'the indexed witness signature (-B)');
  // Flip one character in the middle of each signature (the text stays canonical base64url).
  const flip = (text: string, at: number): string => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
  assert.ok(!verifyEd25519(k, bytes, parseWitnessAttachments(flip(SIGERS, 40), true).controller![0]!.signature));
  assert.ok(!verifyEd25519(keyOf(R_PREFIX), bytes, parseWitnessAttachments(flip(CIGARS, 100), false).couples[0]!.signature));
  // And a flipped character in the event.
  assert.ok(!verifyEd25519(k, utf8.encode(ICP.replace('"s":"0"', '"s":"1"')), sig));
});

/** One cloneEvtMsg: serder, then -V + count, -A, -B?, -G?, -E; keripy's test_replay assertions. */
function checkClone(stream: string, fn: number, sn: number, witnesses: number, started: number): string {
  const m = /^\{"v":"KERI10JSON([0-9a-f]{6})_"/.exec(stream);
  assert.ok(m !== null);
  const raw = stream.slice(0, Number.parseInt(m[1]!, 16));
  const serder = new Serder(JSON.parse(raw) as Record<string, unknown>);
  assert.equal(serder.raw, raw);
  assert.equal(Number.parseInt(serder.sad.s as string, 16), sn);
  let msg = stream.slice(raw.length);
  const v = new Counter({ qb64: msg.slice(0, 4) });
  assert.equal(v.code, '-V', 'AttachmentGroup counter first');
  msg = msg.slice(4);
  const rest = msg.slice(v.count * 4);
  msg = msg.slice(0, v.count * 4);
  const sigs = new Counter({ qb64: msg.slice(0, 4) });
  assert.equal(sigs.code, '-A', 'ControllerIdxSigs');
  msg = msg.slice(4);
  for (let i = 0; i < sigs.count; i++) msg = msg.slice(new Siger({ qb64: msg.slice(0, 88) }).qb64.length);
  if (witnesses > 0) {
    const wigs = new Counter({ qb64: msg.slice(0, 4) });
    assert.equal(wigs.code, '-B', 'WitnessIdxSigs');
    assert.equal(wigs.count, witnesses);
    msg = msg.slice(4 + 88 * wigs.count);
  }
  const fse = new Counter({ qb64: msg.slice(0, 4) });
  assert.equal(fse.code, '-E', 'FirstSeenReplayCouples');
  assert.equal(fse.count, 1);
  msg = msg.slice(4);
  assert.equal(new Seqner({ qb64: msg.slice(0, 24) }).sn, fn, 'the first-seen ordinal');
  msg = msg.slice(24);
  const when = Date.parse(daterIso(msg.slice(0, 36)));
  assert.ok(when >= started - 1000 && when <= Date.now() + 1000, 'a first-seen time of this run');
  assert.equal(msg.length, 36, 'nothing after the Dater');
  return rest;
}

void test('GET /query?typ=kel has the clonePreIter structure test_replay.py asserts (fn = sn without recovery)', async (t) => {
  const started = Date.now();
  const tmp = tempDir();
  const node = await startKelNode(tmp.dir);
  t.after(async () => {
    await node.close();
    tmp.cleanup();
  });
  const witness = node.kel!.identity.prefix;
  const ctl = await Controller.create(11);
  const icp = ctl.incept([witness]);
  assert.equal((await send(node.url, '/receipts', icp.raw, ctl.sign(icp))).status, 200);
  const ixn = ctl.interact();
  assert.equal((await send(node.url, '/receipts', ixn.raw, ctl.sign(ixn))).status, 200);
  const rot = ctl.rotate();
  assert.equal((await send(node.url, '/receipts', rot.raw, ctl.sign(rot))).status, 200);
  for (let i = 0; i < 4; i++) {
    const e = ctl.interact();
    assert.equal((await send(node.url, '/receipts', e.raw, ctl.sign(e))).status, 200);
  }
  const res = await fetch(`${node.url}/query?typ=kel&pre=${ctl.pre}`);
  assert.equal(res.status, 200);
  let stream = await res.text();
  for (let fn = 0; fn <= 6; fn++) stream = checkClone(stream, fn, fn, 1, started);
  assert.equal(stream, '', 'seven events, nothing else');
  // With sn: the accepted events from sn on.
  let tail = await (await fetch(`${node.url}/query?typ=kel&pre=${ctl.pre}&sn=5`)).text();
  for (let fn = 5; fn <= 6; fn++) tail = checkClone(tail, fn, fn, 1, started);
  assert.equal(tail, '');
});
