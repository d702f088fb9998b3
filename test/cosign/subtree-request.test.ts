// The sign-subtree body parser (SPEC §5.4 check 1): strict, pure, typed 400 errors; the same
// grammar and checkpoint note parser as add-checkpoint.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatNote } from '../../src/note/signed-note.ts';
import { decodeBase64, encodeBase64 } from '../../src/encoding/base64.ts';
import { SignSubtreeRequestError } from '../../src/note/errors.ts';
import { MAX_PROOF_LINES } from '../../src/note/tlog-witness.ts';
import { formatSignSubtreeRequest, parseSignSubtreeRequest } from '../../src/note/tlog-witness.ts';
import { LOG_NAME, SyntheticLog, logKeyC } from '../helpers/cosign-harness.ts';

const log = new SyntheticLog(LOG_NAME, logKeyC);
const NOTE = log.checkpoint(14);
// research/pq-cosign.md §2.5: [8, 13) in the tree of 14 leaves d[i] = byte i.
const HASH = 'zHN22R/ntnIJswWRWyGrSg8AcLQFgsdOxALoB0kSpR0=';
const PROOF = [
  '/iUeTdA03PWJyEeUEgyF1gFdZcp9miwuxzyey14z2Ds=',
  'ofOGoOywYbPEagOGFiEneYWLpyWLLsy4GKZJhslygto=',
  'TidXyChl19LMAP7VCijpRxMoUzXXjNbzHT/oTxGuDmY=',
  '739JtiD2x+qbljohTaNLUCHG3tjtV3NDgKMRq3JqqQc=',
];
const BODY = `subtree 8 13\n${HASH}\n${PROOF.join('\n')}\n\n${NOTE}`;

function rejects(body: string | Uint8Array, pattern: RegExp): void {
  assert.throws(
    () => parseSignSubtreeRequest(body),
    (e: unknown) => {
      assert.ok(e instanceof SignSubtreeRequestError);
      assert.equal(e.code, 'malformed_request');
      assert.match(e.message, pattern);
      return true;
    },
  );
}

void test('parses the tlog-witness example shape ([8, 13), 4 proof lines); the formatter gives the same bytes', () => {
  for (const body of [BODY, new TextEncoder().encode(BODY)]) {
    const req = parseSignSubtreeRequest(body);
    assert.equal(req.start, 8n);
    assert.equal(req.end, 13n);
    assert.equal(encodeBase64(req.subtreeHash), HASH);
    assert.deepEqual(req.proof.map(encodeBase64), PROOF);
    assert.equal(req.checkpoint.origin, LOG_NAME);
    assert.equal(req.checkpoint.size, 14);
    assert.equal(req.note.signatures.length, 1);
  }
  const req = parseSignSubtreeRequest(BODY);
  assert.equal(formatSignSubtreeRequest(req.start, req.end, req.subtreeHash, req.proof, NOTE), BODY);
});

void test('0 and 63 proof lines, start 0, u64 bounds', () => {
  assert.equal(parseSignSubtreeRequest(`subtree 0 14\n${HASH}\n\n${NOTE}`).proof.length, 0);
  const many = Array.from({ length: MAX_PROOF_LINES }, () => PROOF[0]!);
  assert.equal(parseSignSubtreeRequest(`subtree 8 13\n${HASH}\n${many.join('\n')}\n\n${NOTE}`).proof.length, 63);
  rejects(`subtree 8 13\n${HASH}\n${[...many, PROOF[0]!].join('\n')}\n\n${NOTE}`, /more than 63/);
  const max = (1n << 64n) - 1n;
  const r = parseSignSubtreeRequest(`subtree ${max - 1n} ${max}\n${HASH}\n\n${NOTE}`);
  assert.equal(r.start, max - 1n);
  assert.equal(r.end, max);
  rejects(`subtree 0 ${1n << 64n}\n${HASH}\n\n${NOTE}`, /below 2\^64/);
  // Validity is the next check, not the parser's: [3, 5) and [4, 4) parse.
  assert.equal(parseSignSubtreeRequest(`subtree 3 5\n${HASH}\n\n${NOTE}`).start, 3n);
  assert.equal(parseSignSubtreeRequest(`subtree 4 4\n${HASH}\n\n${NOTE}`).end, 4n);
});

void test('malformed bodies: the subtree line, the hash line, proof lines, line endings, the note', () => {
  const withHeader = (header: string): string => `${header}\n\n${NOTE}`;
  rejects(withHeader(`subtree 08 13\n${HASH}`), /without leading zeros/);
  rejects(withHeader(`subtree 8 013\n${HASH}`), /without leading zeros/);
  rejects(withHeader(`subtree -1 13\n${HASH}`), /first line/);
  rejects(withHeader(`subtree +8 13\n${HASH}`), /first line/);
  rejects(withHeader(`subtree 8  13\n${HASH}`), /first line/);
  rejects(withHeader(`subtree 8 13 \n${HASH}`), /first line/);
  rejects(withHeader(`subtree 8\n${HASH}`), /first line/);
  rejects(withHeader(`Subtree 8 13\n${HASH}`), /first line/);
  rejects(withHeader(`old 8\n${HASH}`), /first line/);
  rejects(withHeader('subtree 8 13'), /subtree hash/);
  rejects(withHeader(`subtree 8 13\n${HASH.slice(0, -1)}`), /subtree hash line/);
  rejects(withHeader(`subtree 8 13\n${encodeBase64(new Uint8Array(31))}`), /subtree hash line/);
  const nonCanonical = HASH.slice(0, 42) + 'R=';
  assert.notEqual(encodeBase64(decodeBase64(HASH)), nonCanonical);
  rejects(withHeader(`subtree 8 13\n${nonCanonical}`), /subtree hash line/);
  rejects(withHeader(`subtree 8 13\n${HASH}\n${PROOF[0]!} `), /proof line 1/);
  rejects(withHeader(`subtree 8 13\n${HASH}\n${PROOF[0]!}\nnot base64`), /proof line 2/);
  rejects(BODY.replace('\n', '\r\n'), /carriage return/);
  rejects(`subtree 8 13\n${HASH}\n${NOTE}`, /proof line 1/); // no empty line: the note text reads as proof lines
  rejects(`subtree 8 13\n${HASH}\n`, /empty line/);
  rejects(`subtree 8 13\n${HASH}\n\n${NOTE.slice(0, -1)}`, /checkpoint/);
  rejects(`subtree 8 13\n${HASH}\n\nexample.com/log\n14\n\n`, /checkpoint/);
  rejects(Uint8Array.of(0x73, 0xff, 0x0a, 0x0a), /UTF-8/);
  rejects('\ud800', /UTF-8/);
});

void test('3 000 mutated bodies: each parses and formats back to itself, or is a SignSubtreeRequestError', () => {
  const alphabet = ['0', '1', '9', ' ', '\n', '\r', '+', '/', '=', 'A', 'subtree ', '\u2014', '\u0000', '\ud800'];
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 2 }), fc.constantFrom(...alphabet)), { minLength: 1, maxLength: 3 }),
      (edits) => {
        let text = BODY;
        for (const [at, kind, piece] of edits) {
          const i = at % (text.length + 1);
          text =
            kind === 0
              ? text.slice(0, i) + piece + text.slice(i + 1)
              : kind === 1
                ? text.slice(0, i) + piece + text.slice(i)
                : text.slice(0, i) + text.slice(i + 1);
        }
        let req;
        try {
          req = parseSignSubtreeRequest(text);
        } catch (e) {
          assert.ok(e instanceof SignSubtreeRequestError, String(e));
          return;
        }
        assert.equal(formatSignSubtreeRequest(req.start, req.end, req.subtreeHash, req.proof, formatNote(req.note)), text);
      },
    ),
    { numRuns: 3_000, seed: 20261125 },
  );
});
