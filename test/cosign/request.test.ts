// The add-checkpoint body parser (SPEC §5 check 1): strict, pure, typed 400 errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeBase64 } from '../../src/encoding/base64.ts';
import { AddCheckpointRequestError } from '../../src/note/errors.ts';
import { MAX_PROOF_LINES, formatAddCheckpointRequest, parseAddCheckpointRequest } from '../../src/note/tlog-witness.ts';
import { SyntheticLog, LOG_NAME, logKeyC } from '../helpers/cosign-harness.ts';

const log = new SyntheticLog(LOG_NAME, logKeyC);

// research/c2sp-and-peers.md Appendix C: add-checkpoint body old=3 -> new=8 (gointerop, verified with x/mod).
const APPENDIX_C_BODY =
  'old 3\n' +
  'qze6NNHf4pAV3nF6bVdkqPsCnDp6D1tkuTtUNRiFv3w=\n' +
  'WL0UluFoSqySAcLmh+565PUclqiw2B7zWDYouT0800U=\n' +
  '/F9riP+FVPdbsvnm85wxsZNtRLaSdu33sSBalVuXYeM=\n' +
  'w+azuR86E7mkJwss2RFiOrs6eoVa9ebktxyE+ZDNxGk=\n' +
  '\n' +
  'example.com/log\n8\nxcLIIO00L92ozolra5z1uMAKIcxLIHFMxuXTwFw1JAs=\n' +
  '\n' +
  '— example.com/log AYgsrCZHRR9ejRCutsbrb373wd1mjNijdtXMfz6iMkcrOjk8vIHLKqS6eNYD9XEEsICUKK9wcl+C14poiq5oOG8BeQY=\n';

function rejects(body: string | Uint8Array, pattern: RegExp): void {
  assert.throws(
    () => parseAddCheckpointRequest(body),
    (e: unknown) => {
      // The class has one code (a closed union of one), so the class check is the code check.
      assert.ok(e instanceof AddCheckpointRequestError);
      assert.equal(e.code, 'malformed_request');
      return pattern.test(e.message);
    },
  );
}

void test('parses the Appendix C body; our formatter reproduces it byte for byte', () => {
  const req = parseAddCheckpointRequest(new TextEncoder().encode(APPENDIX_C_BODY));
  assert.equal(req.oldSize, 3);
  assert.equal(req.proof.length, 4);
  assert.equal(encodeBase64(req.proof[0]!), 'qze6NNHf4pAV3nF6bVdkqPsCnDp6D1tkuTtUNRiFv3w=');
  assert.equal(req.checkpoint.origin, 'example.com/log');
  assert.equal(req.checkpoint.size, 8);
  assert.equal(req.note.signatures.length, 1);
  assert.equal(log.request(3, 8), APPENDIX_C_BODY);
  assert.equal(
    formatAddCheckpointRequest(req.oldSize, req.proof, APPENDIX_C_BODY.slice(APPENDIX_C_BODY.indexOf('\n\n') + 2)),
    APPENDIX_C_BODY,
  );
});

void test('old 0 with no proof; 63 proof lines are accepted', () => {
  const cp = log.checkpoint(5);
  const req = parseAddCheckpointRequest(`old 0\n\n${cp}`);
  assert.equal(req.oldSize, 0);
  assert.deepEqual(req.proof, []);
  const lines = Array.from({ length: MAX_PROOF_LINES }, () => `${encodeBase64(new Uint8Array(32))}\n`).join('');
  assert.equal(parseAddCheckpointRequest(`old 1\n${lines}\n${cp}`).proof.length, 63);
});

void test('the old line: canonical decimal only', () => {
  const cp = log.checkpoint(5);
  for (const old of [
    'old 01',
    'old -1',
    'old  1',
    'old 1 ',
    'Old 1',
    'old',
    'old ',
    'old 1.0',
    'old +1',
    'old 0x1',
    'old 99999999999999999999',
    'new 1',
    '',
  ]) {
    rejects(`${old}\n\n${cp}`, /first line must be "old <size>"/);
  }
});

void test('proof lines: at most 63, canonical padded base64 of 32 bytes', () => {
  const cp = log.checkpoint(5);
  const zero = encodeBase64(new Uint8Array(32));
  rejects(`old 1\n${`${zero}\n`.repeat(64)}\n${cp}`, /more than 63/);
  // litewitness's tampered proof hash `…ABA=` is canonical (422 later); this one has trailing bits set:
  rejects(`old 1\nKgIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB=\n\n${cp}`, /line 1 is not canonical/);
  rejects(`old 1\n${encodeBase64(new Uint8Array(31))}\n\n${cp}`, /line 1/);
  rejects(`old 1\n${encodeBase64(new Uint8Array(33))}\n\n${cp}`, /line 1/);
  rejects(`old 1\n${zero.slice(0, -1)}\n\n${cp}`, /line 1/); // unpadded
  rejects(`old 1\n${zero} \n\n${cp}`, /line 1/);
  rejects(`old 1\n${'_'.repeat(43)}=\n\n${cp}`, /line 1/); // base64url alphabet
});

void test('framing: \\r, invalid UTF-8, missing blank line, bad note, bad checkpoint text', () => {
  const cp = log.checkpoint(5);
  rejects(`old 0\r\n\r\n${cp}`, /carriage return/);
  rejects(`old 0\n\n${cp.replace('\n\n', '\r\n\n')}`, /carriage return/);
  rejects(Uint8Array.of(...new TextEncoder().encode('old 0\n\n'), 0xff, 0x0a), /UTF-8/);
  rejects('old 0\n\ud800\n', /UTF-8/);
  rejects(`old 0\n${cp}`, /line 1|empty line/);
  rejects('old 0', /empty line/);
  rejects(`\ufeffold 0\n\n${cp}`, /first line/);
  // The signed note: litewitness's "syntactically invalid note (no signature section)" → 400.
  rejects(`old 5\n\n${log.text(5)}`, /checkpoint:/);
  // A correctly signed note whose text is not a checkpoint (litewitness "five") → 400.
  rejects(`old 5\n\n${log.checkpoint(5).replace('\n5\n', '\nfive\n')}`, /checkpoint:/);
  rejects(`old 0\n\n${cp.replace('example.com/log', 'example.com/\u0001log')}`, /checkpoint:/);
  rejects(`old 0\n\n${cp}${'— x AAAAAAA=\n'.repeat(64)}`, /checkpoint: more than 64 signatures/);
  rejects(`old 0\n\n${cp}trailing`, /checkpoint:/);
});
