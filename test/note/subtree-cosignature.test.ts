// ML-DSA-44 subtree/v1 cosignatures (type 0x06): key IDs, vkeys, messages, lines, verification
// (src/note/subtree-message.ts, cosigner.ts, vkey.ts). Vectors of SPEC §5.7 from
// ../shared/research/pq-cosign.md §2.1–2.4 and Appendices A, B (test/helpers/mldsa-vectors.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { ml_dsa44 } from '@noble/post-quantum/ml-dsa.js';
import { generateMlDsa44, mlDsa44KeyFromSeed, mlDsa44PublicKeyBytes } from '../../src/crypto/ml-dsa.ts';
import { decodeBase64, encodeBase64 } from '../../src/encoding/base64.ts';
import { decodeHex, encodeHex } from '../../src/encoding/hex.ts';
import { NoteError } from '../../src/note/errors.ts';
import { SIG_TYPE_SUBTREE_V1, parseNote, verifyNote } from '../../src/note/signed-note.ts';
import { computeKeyId } from '../../src/note/key-id.ts';
import { mlDsa44Cosigner } from '../../src/note/cosigner.ts';
import {
  SUBTREE_V1_BLOB_LENGTH,
  checkpointSubtreeMessage,
  encodeSubtreeSignatureBytes,
  formatSubtreeCosignatureLine,
  parseSubtreeCosignatureLine,
  subtreeMessage,
  type SubtreeCosignature,
} from '../../src/note/subtree-message.ts';
import { verifyMlDsa44 } from '../../src/crypto/ml-dsa.ts';
import { formatVkey, keyIdHex, parseVkey, subtreeNoteVerifier } from '../../src/note/vkey.ts';
import * as V from '../helpers/mldsa-vectors.ts';

/** A parsed line over an arbitrary subtree: the message rebuilt from the line's name and T (false on a field the format refuses). */
function verifySubtreeCosignature(
  publicKey: Uint8Array,
  line: SubtreeCosignature,
  subtree: { origin: string; start: bigint; end: bigint; hash: Uint8Array },
): boolean {
  if (line.keyId !== computeKeyId(line.name, SIG_TYPE_SUBTREE_V1, publicKey)) return false;
  try {
    return verifyMlDsa44(publicKey, subtreeMessage({ name: line.name, timestamp: line.timestamp, ...subtree }), line.signature);
  } catch {
    return false;
  }
}

/** A parsed line over a checkpoint text, through the one line verifier (the 0x06 NoteVerifier). */
function verifyCheckpointSubtreeCosignature(publicKey: Uint8Array, line: SubtreeCosignature, checkpointText: string): boolean {
  return subtreeNoteVerifier(line.name, publicKey).verify(
    new TextEncoder().encode(checkpointText),
    encodeSubtreeSignatureBytes(line.timestamp, line.signature),
  );
}

const isNote = (code: string) => (e: unknown) => e instanceof NoteError && e.code === code;

void test('torchwood log vkey: type 0x06, 1312-byte key, key ID b5df45c5', () => {
  const v = parseVkey(V.TORCHWOOD_LOG_VKEY);
  assert.equal(v.type, SIG_TYPE_SUBTREE_V1);
  assert.equal(v.publicKey.length, 1312);
  assert.equal(keyIdHex(v.keyId), 'b5df45c5');
  assert.equal(v.name, 'example.com/mldsa-log');
  assert.equal(v.vkey, V.TORCHWOOD_LOG_VKEY);
});

void test('torchwood: the 112-byte message matches; verify true; false with any message field or one signature bit changed', () => {
  const v = parseVkey(V.TORCHWOOD_LOG_VKEY);
  const note = parseNote(V.TORCHWOOD_CHECKPOINT_NOTE);
  assert.equal(note.signatures.length, 1);
  const line = parseSubtreeCosignatureLine(V.TORCHWOOD_CHECKPOINT_NOTE.slice(V.TORCHWOOD_CHECKPOINT_NOTE.indexOf('\n\n') + 2));
  assert.equal(line.timestamp, 0n);
  assert.equal(keyIdHex(line.keyId), 'b5df45c5');
  const msg = checkpointSubtreeMessage(line.name, note.text, line.timestamp);
  assert.equal(msg.length, 112);
  assert.equal(encodeHex(msg), V.TORCHWOOD_MESSAGE_HEX);
  assert.equal(verifyCheckpointSubtreeCosignature(v.publicKey, line, note.text), true);
  assert.equal(ml_dsa44.verify(line.signature, msg, v.publicKey), true, 'noble agrees');
  assert.equal(verifyNote(V.TORCHWOOD_CHECKPOINT_NOTE, [v]).verified.length, 1);
  const fields = { origin: 'example.com/mldsa-log', start: 0n, end: 1n, hash: parseNoteRoot(note.text) };
  assert.equal(verifySubtreeCosignature(v.publicKey, line, fields), true);
  // every message field changed
  assert.equal(verifySubtreeCosignature(v.publicKey, { ...line, name: 'example.com/mldsa-lox' }, fields), false);
  assert.equal(verifySubtreeCosignature(v.publicKey, { ...line, timestamp: 1n }, fields), false);
  assert.equal(verifySubtreeCosignature(v.publicKey, line, { ...fields, origin: 'example.com/mldsa-loh' }), false);
  assert.equal(verifySubtreeCosignature(v.publicKey, line, { ...fields, end: 2n }), false);
  assert.equal(verifySubtreeCosignature(v.publicKey, line, { ...fields, start: 1n, end: 2n }), false);
  const h = Uint8Array.from(fields.hash);
  h[31]! ^= 1;
  assert.equal(verifySubtreeCosignature(v.publicKey, line, { ...fields, hash: h }), false);
  // one signature bit, anywhere
  for (const bit of [0, 8 * 1000 + 3, 8 * 2419 + 7]) {
    const sig = Uint8Array.from(line.signature);
    sig[bit >> 3]! ^= 1 << (bit & 7);
    assert.equal(verifySubtreeCosignature(v.publicKey, { ...line, signature: sig }, fields), false, `bit ${bit}`);
  }
  // in a note: a changed line fails the note (a known key whose signature fails)
  const flipped = V.TORCHWOOD_CHECKPOINT_NOTE.replace('1\n+zoE', '2\n+zoE');
  assert.throws(() => verifyNote(flipped, [v]), isNote('invalid_signature'));
});

function parseNoteRoot(text: string): Uint8Array {
  return decodeBase64(text.split('\n')[2]!, 32);
}

void test('tessera 0x06 vkey: key ID e43cec18; a vkey with a wrong key ID is refused', () => {
  const v = parseVkey(V.TESSERA_LOG_VKEY);
  assert.equal(keyIdHex(v.keyId), 'e43cec18');
  assert.equal(v.type, 0x06);
  const wrong = V.TESSERA_LOG_VKEY.replace('+e43cec18+', '+e43cec19+');
  assert.throws(() => parseVkey(wrong), isNote('invalid_vkey'));
  // transparency-dev/formats' test vkey name "test" with another key: a wrong ID in general
  const w = V.WITNESS_VKEY.replace('+dcccf9ec+', '+5893dc2c+');
  assert.throws(() => parseVkey(w), isNote('invalid_vkey'));
  // a 0x06 vkey with a 32-byte key is refused
  assert.throws(() => formatAndParse(0x06, new Uint8Array(32)), isNote('invalid_vkey'));
});

function formatAndParse(type: 0x06, pk: Uint8Array) {
  const raw = new Uint8Array(1 + pk.length);
  raw[0] = type;
  raw.set(pk, 1);
  return parseVkey(`a.example+00000000+${encodeBase64(raw)}`);
}

void test('witness vector: seed 00..1f, vkey with ID dcccf9ec, the B.2 message, the B.3 line verifies; noble reproduces B.3 byte for byte', async () => {
  const key = mlDsa44KeyFromSeed(decodeHex(V.WITNESS_SEED_HEX));
  const pk = mlDsa44PublicKeyBytes(key);
  assert.equal(formatVkey(V.WITNESS_NAME, SIG_TYPE_SUBTREE_V1, pk), V.WITNESS_VKEY);
  assert.equal(keyIdHex(mlDsa44Cosigner(V.WITNESS_NAME, key).keyId), 'dcccf9ec');
  const msg = checkpointSubtreeMessage(V.WITNESS_NAME, V.WITNESS_CHECKPOINT_TEXT, V.WITNESS_T);
  assert.equal(encodeHex(msg), V.WITNESS_MESSAGE_HEX);
  assert.equal(msg.length, 103);
  const line = parseSubtreeCosignatureLine(V.WITNESS_LINE);
  assert.equal(line.timestamp, V.WITNESS_T);
  assert.equal(createHash('sha256').update(line.signature).digest('hex'), V.WITNESS_SIGNATURE_SHA256);
  assert.equal(verifyCheckpointSubtreeCosignature(pk, line, V.WITNESS_CHECKPOINT_TEXT), true);
  assert.equal(formatSubtreeCosignatureLine(line), `${V.WITNESS_LINE}\n`);
  // noble's deterministic FIPS 204 signature of the same message is the Appendix B line
  const { secretKey } = ml_dsa44.keygen(decodeHex(V.WITNESS_SEED_HEX));
  const det = ml_dsa44.sign(msg, secretKey, { extraEntropy: false });
  assert.equal(
    formatSubtreeCosignatureLine({ name: V.WITNESS_NAME, keyId: line.keyId, timestamp: V.WITNESS_T, signature: det }),
    `${V.WITNESS_LINE}\n`,
  );
  // the Cosigner signs (hedged) a line that verifies, with the same key ID and T
  const ours = parseSubtreeCosignatureLine(
    await mlDsa44Cosigner(V.WITNESS_NAME, key).cosignCheckpoint(V.WITNESS_CHECKPOINT_TEXT, V.WITNESS_T),
  );
  assert.equal(ours.keyId, line.keyId);
  assert.equal(verifyCheckpointSubtreeCosignature(pk, ours, V.WITNESS_CHECKPOINT_TEXT), true);
  assert.equal(ml_dsa44.verify(ours.signature, msg, pk), true);
  // the note verifier agrees, and reports T
  const note = `${V.WITNESS_CHECKPOINT_TEXT}\n${V.WITNESS_LINE}\n`;
  const verified = verifyNote(note, [parseVkey(V.WITNESS_VKEY)]);
  assert.equal(verified.verified[0]!.timestamp, V.WITNESS_T);
});

void test('subtree vector: [8, 13) of example.com/mtc-log, T = 0: message B.4, line B.5 verifies; T ≠ 0 with start ≠ 0 is refused', async () => {
  const pk = mlDsa44PublicKeyBytes(mlDsa44KeyFromSeed(decodeHex(V.WITNESS_SEED_HEX)));
  const hash = decodeBase64(V.SUBTREE_HASH_B64, 32);
  const fields = { origin: V.SUBTREE_ORIGIN, start: V.SUBTREE_START, end: V.SUBTREE_END, hash };
  const msg = subtreeMessage({ name: V.WITNESS_NAME, timestamp: 0n, ...fields });
  assert.equal(encodeHex(msg), V.SUBTREE_MESSAGE_HEX);
  const line = parseSubtreeCosignatureLine(V.SUBTREE_LINE);
  assert.equal(line.timestamp, 0n);
  assert.equal(verifySubtreeCosignature(pk, line, fields), true);
  assert.equal(verifySubtreeCosignature(pk, line, { ...fields, end: 14n }), false);
  assert.throws(() => subtreeMessage({ name: V.WITNESS_NAME, timestamp: 1n, ...fields }), isNote('invalid_subtree_message'));
  assert.equal(verifySubtreeCosignature(pk, { ...line, timestamp: 1n }, fields), false);
  // the Cosigner signs subtrees too (hedged, T = 0): the line verifies
  const { privateKey } = generateMlDsa44();
  const l2 = parseSubtreeCosignatureLine(await mlDsa44Cosigner(V.WITNESS_NAME, privateKey).signSubtree(fields));
  assert.equal(verifySubtreeCosignature(mlDsa44PublicKeyBytes(privateKey), l2, fields), true);
});

void test('message length rules: name and origin 1..255 bytes, T ≤ 2^63−1, start ≤ end, empty subtree = empty hash, 32-byte hash', () => {
  const base = { name: 'w.example', timestamp: 1n, origin: 'o.example/log', start: 0n, end: 3n, hash: new Uint8Array(32) };
  assert.equal(subtreeMessage(base).length, 70 + 9 + 13);
  assert.equal(subtreeMessage({ ...base, name: 'n'.repeat(255), origin: 'o'.repeat(255) }).length, 70 + 510);
  for (const [i, bad] of [
    { ...base, name: '' },
    { ...base, name: 'n'.repeat(256) },
    { ...base, origin: '' },
    { ...base, origin: 'é'.repeat(128) }, // 256 bytes
    { ...base, timestamp: 1n << 63n },
    { ...base, start: 4n },
    { ...base, end: 1n << 64n },
    { ...base, hash: new Uint8Array(31) },
    { ...base, end: 0n }, // empty subtree with a hash other than SHA-256("")
  ].entries()) {
    assert.throws(() => subtreeMessage(bad), isNote('invalid_subtree_message'), `case ${i}`);
  }
  assert.equal(subtreeMessage({ ...base, timestamp: (1n << 63n) - 1n }).length, 92);
  // a checkpoint with extension lines cannot be ML-DSA-44 signed
  assert.throws(
    () => checkpointSubtreeMessage('w.example', 'o.example/log\n1\n' + encodeBase64(new Uint8Array(32)) + '\next\n', 1n),
    isNote('invalid_subtree_message'),
  );
  // size 0 signs [0, 0) with the empty-tree hash
  assert.equal(checkpointSubtreeMessage('w.example', 'o.example/log\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n', 5n).length, 92);
});

void test('line format: blob exactly 2432 bytes, T ≤ 2^63−1; a 0x06 line over a checkpoint with extension lines is invalid', () => {
  const { privateKey, publicKey } = generateMlDsa44();
  const text = 'o.example/log\n5\n' + encodeBase64(randomBytes(32)) + '\n';
  const lineText = mlDsa44Cosigner('w.example', privateKey).noteSigner(1234n).line(text);
  const b64 = lineText.trim().split(' ')[2]!;
  assert.equal(decodeBase64(b64).length, SUBTREE_V1_BLOB_LENGTH);
  const blob = decodeBase64(b64);
  assert.throws(() => parseSubtreeCosignatureLine(`— w.example ${encodeBase64(blob.subarray(0, 2431))}`), isNote('malformed_cosignature'));
  assert.throws(
    () => parseSubtreeCosignatureLine(`— w.example ${encodeBase64(Uint8Array.of(...blob, 0))}`),
    isNote('malformed_cosignature'),
  );
  const bigT = Uint8Array.from(blob);
  bigT[4] = 0x80;
  assert.throws(() => parseSubtreeCosignatureLine(`— w.example ${encodeBase64(bigT)}`), isNote('malformed_cosignature'));
  const v = subtreeNoteVerifier('w.example', publicKey);
  assert.equal(verifyNote(`${text}\n${lineText}`, [v]).verified.length, 1);
  const ext = text + 'extension\n';
  assert.throws(() => verifyNote(`${ext}\n${lineText}`, [v]), isNote('invalid_signature'));
});
