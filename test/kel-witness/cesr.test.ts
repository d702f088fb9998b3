// SPEC §3.6.10 items 1 and 7 (the parts reached): the attachment reader (every group, -V counts,
// -F refused, bounds), keripy's Dater round trip, and upstream's keripy-1.3.4 reply vectors
// (`/loc/scheme`, `/end/role/add`) reproduced byte for byte by our rpy builder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CesrError,
  coupleGroup,
  daterIso,
  daterText,
  firstSeenGroup,
  parseWitnessAttachments,
  pipelined,
  receiptMessage,
} from '../../src/keri/cesr-attachments.ts';
import { endRoleAddReply, locSchemeReply } from '../../src/kel-witness/replies.ts';

const SIG = 'A'.repeat(86);
const PRE = 'BJjH1MCDssEZMnORskF34AwOFDgDL47513GivRvd_QKz';
const SAID = 'EOoC9AuwxiwcyUDsa2yNAaZOVWqfiAt4o3R31_8K2Z1J';

void test('Dater: keripy test_coring 1AAG2020-08-22T17c50c09d988921p00c00 round-trips', () => {
  const text = '1AAG2020-08-22T17c50c09d988921p00c00';
  assert.equal(daterIso(text), '2020-08-22T17:50:09.988921+00:00');
  assert.equal(daterText(daterIso(text)), text);
  assert.equal(firstSeenGroup(0, '2020-08-22T17:50:09.988921+00:00'), `-EAB0A${'A'.repeat(22)}${text}`);
});

void test('attachments: -A, -B, -C, -G, -D, -E in any order, -V counts; -F, repeats, wrong counts and trailing text refused', () => {
  const groups = `-AABAA${SIG}-BABAB${SIG}-CAB${PRE}0B${SIG}`;
  const parsed = parseWitnessAttachments(groups, true);
  assert.equal(parsed.controller?.length, 1);
  assert.equal(parsed.witnesses[0]!.index, 1);
  assert.equal(parsed.couples[0]!.prefix, PRE);
  assert.equal(parsed.controllerText, `-AABAA${SIG}`);
  // -V counts the quadlets that follow.
  const withV = pipelined(groups);
  assert.ok(withV.startsWith('-V'));
  assert.deepEqual(parseWitnessAttachments(withV, true).couples, parsed.couples);
  assert.throws(() => parseWitnessAttachments(`-VAA${groups}`, true), CesrError);
  const e = `-EAB0A${'A'.repeat(22)}1AAG2020-08-22T17c50c09d988921p00c00`;
  const g = `-GAB0A${'A'.repeat(22)}${SAID}`;
  assert.equal(parseWitnessAttachments(`${e}-AABAA${SIG}${g}`, true).sourceSeals.length, 1);
  for (const bad of [
    `-FAB${SIG}`,
    `-AABAA${SIG}-AABAA${SIG}`,
    `-AACAA${SIG}`,
    `-AABAA${SIG}AAAA`,
    `-CAB${PRE}0C${SIG}`,
    `-AAB${'A'.repeat(88).replace(/^A/, 'Z')}`,
    `-AB0${`AA${SIG}`.repeat(1)}`,
  ]) {
    assert.throws(() => parseWitnessAttachments(bad, true), CesrError, bad.slice(0, 12));
  }
  assert.throws(() => parseWitnessAttachments(`-BABAB${SIG}`, true), CesrError, '-A is required on /receipts');
  assert.equal(parseWitnessAttachments(`-BABAB${SIG}`, false).witnesses.length, 1);
  assert.throws(() => parseWitnessAttachments(`-AABAA${SIG}`.padEnd(12_289, 'A'), true), CesrError);
});

void test("rct: keripy's compact receipt and one -C couple", () => {
  const m = receiptMessage(PRE, '0', SAID);
  assert.equal(m, `{"v":"KERI10JSON000091_","t":"rct","d":"${SAID}","i":"${PRE}","s":"0"}`);
  assert.equal(m.length, 0x91);
  assert.equal(coupleGroup([{ prefix: PRE, signature: new Uint8Array(64) }]), `-CAB${PRE}0B${SIG}`);
});

void test('upstream keripy-1.3.4 vectors: /loc/scheme and /end/role/add replies, byte for byte SAIDs and sizes', () => {
  const dt = '1970-01-01T00:00:00.000000+00:00';
  const loc = JSON.parse(locSchemeReply(SAID, 'http', 'http://127.0.0.1:5642/', dt)) as Record<string, unknown>;
  assert.equal(loc.d, 'EIIHrrm_0YOEV0kRDFTa-cuVMr0xabjfRojg2Mwv7wxj');
  assert.equal(loc.v, 'KERI10JSON0000fa_');
  const end = JSON.parse(endRoleAddReply(SAID, 'controller', SAID, dt)) as Record<string, unknown>;
  assert.equal(end.d, 'EA_36cdbznGcFrcATtYbt0RIm5txScKHZnHbCxVnqYsj');
  assert.equal(end.v, 'KERI10JSON000116_');
});
