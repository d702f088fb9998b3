// KEL sources as data (SPEC §3.5 "Sources"): the dir: document (upstream readKelJson's shape,
// attachments as CESR text or hex, tip/source ignored, nothing else allowed) and the git: per-event
// blobs, with the size and count limits, into RawKels evaluateKels takes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defectiveKel, kelFromEventBlobs, parseKelDocument } from '../../src/keri/document.ts';
import { evaluateKels, verifyKels } from '../../src/keri/evaluate.ts';
import { DEFAULT_KEL_LIMITS, type RawKel } from '../../src/keri/types.ts';
import { KelBuilder, kelFile, signer as k } from '../helpers/kel-builder.ts';

function kel(): KelBuilder {
  const b = KelBuilder.incept({ signers: [k('d0')], next: [k('d1')] });
  b.interact([{ d: 'Ex' }]);
  return b;
}

function asRaw(r: ReturnType<typeof parseKelDocument>): RawKel {
  assert.ok('events' in r, `expected a RawKel, got ${JSON.stringify(r)}`);
  return r;
}

void test("dir: documents in upstream readKelJson's shape (hex attachments, tip, source) and with CESR text verify alike", () => {
  const b = kel();
  const doc = b.document();
  const upstream = JSON.stringify(
    {
      prefix: doc.prefix,
      events: doc.events,
      attachments: doc.attachments.map((a) => Buffer.from(a).toString('hex')),
      tip: { sequence: 1, said: b.tip },
      source: 'per-prefix',
    },
    null,
    2,
  );
  for (const text of [upstream, kelFile(b)]) {
    const raw = asRaw(parseKelDocument(text, `dir:/x/${b.prefix}.kel.json`, DEFAULT_KEL_LIMITS));
    assert.equal(raw.prefix, b.prefix);
    assert.deepEqual(raw.attachments, doc.attachments, 'hex is turned back into CESR text');
    assert.equal(raw.bytes, Buffer.byteLength(text));
    assert.match(raw.sourceHash, /^[0-9a-f]{64}$/);
    const ev = verifyKels(new Map([[raw.prefix, raw]])).get(b.prefix)!;
    assert.equal(ev.status, 'accepted');
    assert.equal(ev.source, `dir:/x/${b.prefix}.kel.json`);
  }
});

void test('dir: documents that are not KEL documents are refused as malformed or oversize', () => {
  const b = kel();
  const doc = b.document();
  const failure = (text: string, limits = DEFAULT_KEL_LIMITS) => parseKelDocument(text, 'dir:x', limits);
  // No readable prefix: a bare failure (the reader knows the prefix from the file name).
  for (const text of ['', '{', '[]', '{"prefix":1}', '{"prefix":"short"}', `{"prefix":"${b.prefix}","prefix":"${b.prefix}"}`]) {
    const r = failure(text);
    assert.ok(!('events' in r), text);
    assert.equal(r.prefix, null);
    assert.equal(r.reason, 'malformed');
  }
  const big = failure(kelFile(b), { maxEvents: 10, maxBytes: 100 });
  assert.ok(!('events' in big));
  assert.equal(big.reason, 'oversize');
  // A readable prefix: a RawKel with its defect, refused by evaluateKels while the state in force stays.
  const defects: [string, string][] = [
    [JSON.stringify({ ...doc, extra: 1 }), 'malformed'],
    [JSON.stringify({ ...doc, attachments: doc.attachments.slice(1) }), 'malformed'],
    [JSON.stringify({ ...doc, attachments: [doc.attachments[0], 'zz'] }), 'malformed'],
    [JSON.stringify({ ...doc, attachments: [doc.attachments[0], 7] }), 'malformed'],
    [JSON.stringify({ ...doc, attachments: [doc.attachments[0], '41'] }), 'malformed'],
    [JSON.stringify({ ...doc, events: {} }), 'malformed'],
  ];
  for (const [text, reason] of defects) {
    const raw = asRaw(failure(text));
    assert.equal(raw.defect?.reason, reason, text.slice(0, 80));
  }
  const many = asRaw(failure(kelFile(b), { maxEvents: 1, maxBytes: 1 << 20 }));
  assert.equal(many.defect?.reason, 'oversize');

  const good = evaluateKels(new Map([[b.prefix, asRaw(failure(kelFile(b)))]]), null, new Map());
  const refused = evaluateKels(new Map([[b.prefix, asRaw(failure(defects[0]![0]))]]), good.cache, new Map()).evaluations.get(b.prefix)!;
  assert.equal(refused.status, 'invalid');
  assert.equal(refused.reason, 'malformed');
  assert.equal(refused.state!.s, 1, 'the last accepted state stays in force');
  const gone = defectiveKel(b.prefix, 'dir:x', 9_000_000, '', 'oversize', 'file too large');
  const r = evaluateKels(new Map([[b.prefix, gone]]), good.cache, new Map()).evaluations.get(b.prefix)!;
  assert.equal(r.reason, 'oversize');
  assert.equal(r.state!.s, 1);
});

void test('git: per-event blobs (pretty-printed events, raw CESR attachments) assemble into a KEL', () => {
  const b = kel();
  const blobs = b.events.map((e, j) => ({ event: JSON.stringify(e, null, 2) + '\n', attachment: b.attachments[j]! }));
  const raw = kelFromEventBlobs(b.prefix, blobs, 'git:/repo refs/auths/kel/x', DEFAULT_KEL_LIMITS);
  assert.ok('events' in raw && raw.defect === undefined);
  assert.equal(verifyKels(new Map([[b.prefix, raw]])).get(b.prefix)!.status, 'accepted');
  assert.equal(
    raw.bytes,
    blobs.reduce((n, x) => n + Buffer.byteLength(x.event) + Buffer.byteLength(x.attachment), 0),
  );
  // Moving a byte from one blob to the next changes the source hash.
  const moved = kelFromEventBlobs(
    b.prefix,
    [
      { event: blobs[0]!.event + 'x', attachment: blobs[0]!.attachment },
      { event: blobs[1]!.event, attachment: blobs[1]!.attachment },
    ],
    'git',
    DEFAULT_KEL_LIMITS,
  );
  const shifted = kelFromEventBlobs(
    b.prefix,
    [
      { event: blobs[0]!.event, attachment: 'x' + blobs[0]!.attachment },
      { event: blobs[1]!.event, attachment: blobs[1]!.attachment },
    ],
    'git',
    DEFAULT_KEL_LIMITS,
  );
  assert.notEqual((moved as RawKel).sourceHash, (shifted as RawKel).sourceHash);

  const defect = (blobsIn: { event: string; attachment: string }[], limits = DEFAULT_KEL_LIMITS) => {
    const r = kelFromEventBlobs(b.prefix, blobsIn, 'git', limits);
    assert.ok('events' in r);
    return r.defect?.reason;
  };
  assert.equal(defect([{ event: '{"t":', attachment: '' }]), 'malformed');
  assert.equal(defect([{ event: blobs[0]!.event, attachment: 'AAAA' }]), 'malformed');
  assert.equal(defect(blobs, { maxEvents: 1, maxBytes: 1 << 20 }), 'oversize');
  assert.equal(defect(blobs, { maxEvents: 10, maxBytes: 100 }), 'oversize');
  // A missing attachment blob is an event without signatures.
  const unsigned = kelFromEventBlobs(b.prefix, [{ event: blobs[0]!.event, attachment: '' }], 'git', DEFAULT_KEL_LIMITS) as RawKel;
  assert.equal(verifyKels(new Map([[b.prefix, unsigned]])).get(b.prefix)!.reason, 'signature_invalid');
});
