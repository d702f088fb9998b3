// C2SP signed-note (src/note/signed-note.ts, src/note/vkey.ts). Vectors: the signed-note spec
// example and the litewitness / geomys checkpoints of ../shared/research/c2sp-and-peers.md §1.1
// and §3.3 (torchwood cmd/litewitness/testdata/litewitness.txt; geomys uptime test log).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ed25519KeyFromSeed, generateEd25519 } from '../../src/crypto/ed25519.ts';
import {
  MAX_NOTE_SIGNATURES,
  formatNote,
  formatSignatureLine,
  parseNote,
  parseSignatureLine,
  parseSignatureLines,
  signNote,
  verifyNote,
} from '../../src/note/signed-note.ts';
import type { NoteSignature } from '../../src/note/signed-note.ts';
import { computeKeyId } from '../../src/note/key-id.ts';
import { cosignatureNoteVerifier, ed25519NoteSigner, ed25519NoteVerifier, formatVkey, parseVkey } from '../../src/note/vkey.ts';
import { NoteError } from '../../src/note/errors.ts';
import { ed25519Cosigner } from '../../src/note/cosigner.ts';

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

// signed-note spec example (research §1.1)
const SPEC_VKEY = 'example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k';
const SPEC_NOTE =
  'This is an example message.\n\n— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n';

// litewitness test vectors (research §3.3.1)
const LW_ORIGIN = 'sigsum.org/v1/tree/4d6d8825a6bb689d459628312889dfbb0bcd41b5211d9e1ce768b0ff0309e562';
const LW_VKEY = `${LW_ORIGIN}+5202289b+Af/cLU2Y5BJNP+r3iMDC+av9eWCD0fBJVDfzAux5zxAP`;
const LW_CHECKPOINTS: [number, string, string][] = [
  [
    1,
    'KgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
    'UgIom7fPZTqpxWWhyjWduBvTvGVqsokMbqTArsQilegKoFBJQjUFAmQ0+YeSPM3wfUQMFSzVnnNuWRTYrajXpNUbIQY=',
  ],
  [
    3,
    'RcCI1Nk56ZcSmIEfIn0SleqtV7uvrlXNccFx595Iwl0=',
    'UgIom2VbtIcdFbwFAy1n7s6IkAxIY6J/GQOTuZF2ORV39d75cbAj2aQYwyJre36kezNobZs4SUUdrcawfAB8WVrx6go=',
  ],
  [
    5,
    'QrtXrQZCCvpIgsSmOsah7HdICzMLLyDfxToMql9WTjY=',
    'UgIomw/EOJmWi0i1FQsOj+etB7F8IccFam/jgd6wzRns4QPVmyEZtdvl1U2KEmLOZ/ASRcWJi0tW90dJWAShei7sDww=',
  ],
];
const lwNote = (size: number, root: string, sig: string, origin = LW_ORIGIN): string =>
  `${origin}\n${size}\n${root}\n\n— ${LW_ORIGIN} ${sig}\n`;

// geomys uptime test log (research §3.3.2)
const GEOMYS_VKEY = 'geomys.org/witness/test-log+c0787ff4+AeMb5VOzy60PTGdGmLPxOKGAa0jNyDGsgv2rnprGju1t';
const GEOMYS_NOTE =
  'geomys.org/witness/test-log\n1\nBCml5C32yqMcl0gjTrcSOeNVx59oPnSdytBzDGBO5k0=\n\n— geomys.org/witness/test-log wHh/9BPsoBNr2x0Ol3qPBYasIN0HI2ZiBg5ac0v3LQq/7F+YO7U4oWbDeJn1VaWVrlbSEM30Gr7WWYQjj2SBxRoJ/Ao=\n';

void test('signed-note spec example verifies', () => {
  const v = parseVkey(SPEC_VKEY);
  assert.equal(v.name, 'example.com/foo');
  assert.equal(v.keyId, 0x530d903a);
  assert.equal(v.type, 0x01);
  assert.equal(v.vkey, SPEC_VKEY);
  const result = verifyNote(SPEC_NOTE, [v]);
  assert.equal(result.text, 'This is an example message.\n');
  assert.equal(result.verified.length, 1);
  assert.equal(result.verified[0]!.verifier, v);
  assert.equal(result.verified[0]!.timestamp, undefined);
  assert.deepEqual(result.unverified, []);
  // Bytes input, and the parse/format round trip.
  assert.equal(verifyNote(utf8(SPEC_NOTE), [v]).verified.length, 1);
  assert.equal(formatNote(parseNote(SPEC_NOTE)), SPEC_NOTE);
});

void test('tampered text fails with invalid_signature', () => {
  const v = parseVkey(SPEC_VKEY);
  const tampered = SPEC_NOTE.replace('example message', 'exemple message');
  assert.throws(
    () => verifyNote(tampered, [v]),
    (err: unknown) => err instanceof NoteError && err.code === 'invalid_signature',
  );
});

void test('unknown-key signatures are ignored; name or ID alone does not make a key known', () => {
  const v = parseVkey(SPEC_VKEY);
  const other = generateEd25519();
  // A second signature by an unknown key (different name).
  const stranger = ed25519NoteSigner('stranger.example/x', other.privateKey);
  const withStranger = signNote('This is an example message.\n', [stranger], parseNote(SPEC_NOTE).signatures);
  const r1 = verifyNote(withStranger, [v]);
  assert.equal(r1.verified.length, 1);
  assert.equal(r1.unverified.length, 1);
  assert.equal(r1.unverified[0]!.name, 'stranger.example/x');

  // Same name as the known key, other key (so other ID), bad signature bytes: ignored.
  const sameName = ed25519NoteSigner('example.com/foo', other.privateKey);
  assert.notEqual(sameName.keyId, v.keyId);
  const bogus: NoteSignature = { name: 'example.com/foo', keyId: sameName.keyId, signature: new Uint8Array(64).fill(7) };
  const r2 = verifyNote(formatNote({ text: 'This is an example message.\n', signatures: [bogus, ...parseNote(SPEC_NOTE).signatures] }), [
    v,
  ]);
  assert.equal(r2.verified.length, 1);
  assert.equal(r2.unverified.length, 1);

  // Same ID, other name, bad signature: ignored.
  const sameId: NoteSignature = { name: 'example.com/bar', keyId: v.keyId, signature: new Uint8Array(64).fill(7) };
  const r3 = verifyNote(formatNote({ text: 'This is an example message.\n', signatures: [...parseNote(SPEC_NOTE).signatures, sameId] }), [
    v,
  ]);
  assert.equal(r3.verified.length, 1);
  assert.deepEqual(
    r3.unverified.map((s) => s.name),
    ['example.com/bar'],
  );

  // Only unknown signatures: unverified_note.
  assert.throws(() => verifyNote(withStranger, []), { code: 'unverified_note' });
  assert.throws(() => verifyNote(SPEC_NOTE, [ed25519NoteVerifier('example.com/foo', other.publicKey)]), { code: 'unverified_note' });
});

void test('a known key with a bad signature rejects the whole note, even beside a valid one', () => {
  const v = parseVkey(SPEC_VKEY);
  const good = parseNote(SPEC_NOTE).signatures[0]!;
  const bad: NoteSignature = { ...good, signature: Uint8Array.from(good.signature).fill(1, 0, 1) };
  const text = 'This is an example message.\n';
  for (const sigs of [[bad], [good, bad], [bad, good]]) {
    assert.throws(() => verifyNote(formatNote({ text, signatures: sigs }), [v]), { code: 'invalid_signature' });
  }
  // A repeated valid signature is fine and reported once.
  assert.equal(verifyNote(formatNote({ text, signatures: [good, good] }), [v]).verified.length, 1);
  // Wrong signature length for the type is a failed signature, not an ignored one.
  const short: NoteSignature = { ...good, signature: good.signature.subarray(0, 63) };
  assert.throws(() => verifyNote(formatNote({ text, signatures: [short] }), [v]), { code: 'invalid_signature' });
});

void test('litewitness checkpoints (sizes 1, 3, 5) verify; a changed signature fails', () => {
  const v = parseVkey(LW_VKEY);
  assert.equal(v.name, LW_ORIGIN);
  assert.equal(Buffer.from(v.publicKey).toString('hex'), 'ffdc2d4d98e4124d3feaf788c0c2f9abfd796083d1f0495437f302ec79cf100f');
  for (const [size, root, sig] of LW_CHECKPOINTS) {
    const r = verifyNote(lwNote(size, root, sig), [v]);
    assert.equal(r.text, `${LW_ORIGIN}\n${size}\n${root}\n`);
  }
  const [, root3, sig3] = LW_CHECKPOINTS[1]!;
  assert.ok(sig3.endsWith('6go='));
  // litewitness's "last char changed" case `…6gx=` sets unused base64 bits: non-canonical, so it
  // is malformed here (litewitness, with Go's lenient decoder, answers 403).
  assert.throws(() => verifyNote(lwNote(3, root3, sig3.replace(/6go=$/, '6gx=')), [v]), { code: 'malformed_note' });
  // A canonical change of the last character is a signature failure.
  assert.throws(() => verifyNote(lwNote(3, root3, sig3.replace(/6go=$/, '6gs=')), [v]), { code: 'invalid_signature' });
  // Signature of size 3 on the size-1 body.
  assert.throws(() => verifyNote(lwNote(1, LW_CHECKPOINTS[0]![1], sig3), [v]), { code: 'invalid_signature' });
});

void test('geomys test-log checkpoint verifies', () => {
  const v = parseVkey(GEOMYS_VKEY);
  const r = verifyNote(GEOMYS_NOTE, [v, parseVkey(LW_VKEY)]);
  assert.equal(r.verified.length, 1);
  assert.equal(r.verified[0]!.verifier.name, 'geomys.org/witness/test-log');
});

void test('vkeys: parse/format round trip, key ID check, key checks, type checks', () => {
  for (const vk of [SPEC_VKEY, LW_VKEY, GEOMYS_VKEY, 'witness.example/w1+e75f6532+BAOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4']) {
    const v = parseVkey(vk);
    assert.equal(formatVkey(v.name, v.type, v.publicKey), vk);
    assert.equal(v.vkey, vk);
  }
  // Uppercase key ID accepted, canonical output lowercase.
  assert.equal(parseVkey(SPEC_VKEY.replace('530d903a', '530D903A')).vkey, SPEC_VKEY);
  const cases: [string, string][] = [
    [SPEC_VKEY.replace('530d903a', '530d903b'), 'invalid_vkey'], // wrong key ID
    ['example.com/bar+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k', 'invalid_vkey'], // ID for another name
    ['example.com/foo+530d903+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k', 'invalid_vkey'],
    ['example.com/foo+530d903a', 'invalid_vkey'],
    ['example.com/foo', 'invalid_vkey'],
    ['+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k', 'invalid_vkey'],
    ['example .com+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k', 'invalid_vkey'],
    ['example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2', 'invalid_vkey'], // not base64
    ['example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2kAA==', 'invalid_vkey'], // 34 bytes
    ['example.com/foo+530d903a+AgkyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k', 'unsupported_key_type'], // 0x02
    ['example.com/foo+530d903a+BgkyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k', 'invalid_vkey'], // 0x06 with a 32-byte key
    ['example.com/foo+530d903a+BQkyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k', 'unsupported_key_type'], // 0x05
    ['example.com/foo+530d903a+', 'unsupported_key_type'],
  ];
  for (const [vk, code] of cases) assert.throws(() => parseVkey(vk), { code }, vk);
  // Small-order key in a vkey (with its correct key ID) is refused by the key check.
  const identity = Uint8Array.from([1, ...new Uint8Array(31)]);
  const id = computeKeyId('evil.example', 0x01, identity).toString(16).padStart(8, '0');
  const raw = Buffer.from([0x01, ...identity]).toString('base64');
  assert.throws(() => parseVkey(`evil.example+${id}+${raw}`), { code: 'small_order_key' });
  assert.throws(() => ed25519NoteVerifier('evil.example', identity), { code: 'small_order_key' });
  assert.throws(() => ed25519NoteVerifier('bad+name', generateEd25519().publicKey), { code: 'invalid_key_name' });
});

void test('sign and verify with type 0x01 and 0x04 signers together', () => {
  const log = ed25519NoteSigner('example.com/log', ed25519KeyFromSeed(new Uint8Array(32).fill(2)));
  const witness = ed25519Cosigner('witness.example/w1', ed25519KeyFromSeed(new Uint8Array(32).fill(3))).noteSigner(1700000000);
  const text = 'example.com/log\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n';
  const note = signNote(text, [log, witness]);
  const r = verifyNote(note, [log.verifier, witness.verifier]);
  assert.equal(r.verified.length, 2);
  assert.equal(r.verified[1]!.timestamp, 1700000000n);
  // Each verifier alone is enough; the other signature is then unknown.
  assert.equal(verifyNote(note, [witness.verifier]).unverified.length, 1);
  // A cosignature/v1 verifier does not accept a type-0x01 signature under the same name and key.
  const pub = witness.verifier.publicKey;
  assert.notEqual(ed25519NoteVerifier('witness.example/w1', pub).keyId, cosignatureNoteVerifier('witness.example/w1', pub).keyId);
  // Two different keys with the same name and key ID cannot be told apart.
  const twin = { ...log.verifier, vkey: 'different', publicKey: generateEd25519().publicKey };
  assert.throws(() => verifyNote(note, [log.verifier, twin]), { code: 'ambiguous_verifier' });
  // Text with empty lines is fine; the last blank line separates.
  const multi = signNote('a\n\nb\n\n', [log]);
  assert.equal(parseNote(multi).text, 'a\n\nb\n\n');
  assert.equal(verifyNote(multi, [log.verifier]).text, 'a\n\nb\n\n');
});

void test('parse rejections', () => {
  const line = '— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=';
  const bad: [string, string, string?][] = [
    ['text\r\n\n' + line + '\n', 'malformed_note', '\\r'],
    ['text\n\n' + line + '\r\n', 'malformed_note', '\\r in signature'],
    ['te\u0000xt\n\n' + line + '\n', 'malformed_note', 'NUL'],
    ['te\txt\n\n' + line + '\n', 'malformed_note', 'tab'],
    ['te\u001bxt\n\n' + line + '\n', 'malformed_note', 'ESC'],
    ['text\n\n' + line, 'malformed_note', 'missing final newline'],
    ['text\n' + line + '\n', 'malformed_note', 'no blank line'],
    ['text\n\n', 'malformed_note', 'no signatures'],
    ['text\n\n' + line + '\n\n', 'malformed_note', 'trailing blank line'],
    ['text\n\n' + line.replace('—', '-') + '\n', 'malformed_note', 'hyphen instead of em dash'],
    ['text\n\n' + line.replace('—', '–') + '\n', 'malformed_note', 'en dash'],
    ['text\n\n' + line.replace('— ', '—') + '\n', 'malformed_note', 'no space after dash'],
    ['text\n\n' + line.replace('— ', '—  ') + '\n', 'malformed_note', 'two spaces'],
    ['text\n\n' + line.replace('example.com/foo ', 'example.com/foo  ') + '\n', 'malformed_note', 'two spaces before base64'],
    ['text\n\n' + line.replace('example.com/foo', 'ex+ample') + '\n', 'malformed_note', '+ in name'],
    ['text\n\n' + line.replace('example.com/foo', 'exa\u00a0mple') + '\n', 'malformed_note', 'NBSP in name'],
    ['text\n\n' + line.replace('example.com/foo', 'exa\u2003mple') + '\n', 'malformed_note', 'em space in name'],
    ['text\n\n— example.com/foo\n', 'malformed_note', 'no signature'],
    ['text\n\n— example.com/foo \n', 'malformed_note', 'empty signature'],
    ['text\n\n—  AAAAAAA=\n', 'malformed_note', 'empty name'],
    ['text\n\n— example.com/foo AAAAAA==\n', 'malformed_note', '4 bytes: key ID only'],
    ['text\n\n' + line.slice(0, -1) + '\n', 'malformed_note', 'unpadded base64'],
    ['text\n\n' + line.replace('aQM=', 'aQN=') + '\n', 'malformed_note', 'non-canonical base64'],
    ['text\n\n' + line.replace('Uw2Q', 'Uw-Q') + '\n', 'malformed_note', 'base64url alphabet'],
    ['text\n\nplain line\n', 'malformed_note', 'not a signature line'],
    ['text\n\n' + `${line}\n`.repeat(MAX_NOTE_SIGNATURES + 1), 'too_many_signatures'],
  ];
  for (const [note, code, why] of bad) assert.throws(() => parseNote(note), { code }, why ?? code);
  // MAX_NOTE_SIGNATURES (≥ 16, as the spec requires) lines are accepted.
  assert.ok((MAX_NOTE_SIGNATURES as number) >= 16);
  assert.equal(parseNote('text\n\n' + `${line}\n`.repeat(MAX_NOTE_SIGNATURES)).signatures.length, MAX_NOTE_SIGNATURES);
  // Invalid UTF-8 bytes, lone surrogates; a BOM is kept as text (and so would have to be signed).
  const bytes = utf8(SPEC_NOTE);
  const broken = new Uint8Array([0xff, ...bytes]);
  assert.throws(() => parseNote(broken), { code: 'malformed_note' });
  assert.throws(() => parseNote('\ud800' + SPEC_NOTE), { code: 'malformed_note' });
  const bom = parseNote(new Uint8Array([0xef, 0xbb, 0xbf, ...bytes]));
  assert.equal(bom.text, '\ufeffThis is an example message.\n');
  assert.throws(() => verifyNote(new Uint8Array([0xef, 0xbb, 0xbf, ...bytes]), [parseVkey(SPEC_VKEY)]), { code: 'invalid_signature' });
  // DEL (0x7f) is not below U+0020: allowed, as the spec says.
  assert.equal(parseNote('te\u007fxt\n\n' + line + '\n').text, 'te\u007fxt\n');
});

void test('signature lines: format/parse round trip, block parsing', () => {
  const sig: NoteSignature = { name: 'witness.example/w1', keyId: 0xe75f6532, signature: new Uint8Array(72).fill(9) };
  const line = formatSignatureLine(sig);
  assert.ok(line.startsWith('— witness.example/w1 51'));
  assert.ok(line.endsWith('\n'));
  assert.deepEqual(parseSignatureLine(line), sig);
  assert.deepEqual(parseSignatureLine(line.slice(0, -1)), sig);
  assert.deepEqual(parseSignatureLines(line + line), [sig, sig]);
  assert.throws(() => parseSignatureLines(line.slice(0, -1)), { code: 'malformed_note' });
  assert.throws(() => parseSignatureLines(''), { code: 'malformed_note' });
  assert.throws(() => parseSignatureLine(line + line), { code: 'malformed_note' });
  assert.throws(() => formatSignatureLine({ ...sig, name: 'a b' }), { code: 'invalid_key_name' });
  assert.throws(() => formatSignatureLine({ ...sig, keyId: 2 ** 32 }), { code: 'malformed_note' });
});

void test('signNote and formatNote refuse text a parser would not give back', () => {
  const s = ed25519NoteSigner('example.com/log', ed25519KeyFromSeed(new Uint8Array(32)));
  for (const text of ['', 'no newline', 'cr\r\n', 'nul\u0000\n', '\ud800\n']) {
    assert.throws(() => signNote(text, [s]), { code: 'malformed_note' }, JSON.stringify(text));
  }
  assert.throws(() => formatNote({ text: 'x\n', signatures: [] }), { code: 'malformed_note' });
  const many = Array.from({ length: MAX_NOTE_SIGNATURES + 1 }, () => s);
  assert.throws(() => signNote('x\n', many), { code: 'too_many_signatures' });
});
