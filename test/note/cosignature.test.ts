// C2SP tlog-cosignature cosignature/v1 (src/note/cosignature.ts) and the deterministic vectors of
// ../shared/research/c2sp-and-peers.md Appendix C (generated and verified with
// golang.org/x/mod/sumdb/note): log seed 40..5f, witness seed 00..1f, time 1700000000.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import { formatCheckpoint, parseCheckpoint } from '../../src/note/checkpoint.ts';
import {
  MAX_COSIGNATURE_TIMESTAMP,
  cosignatureMessage,
  decodeCosignatureBytes,
  encodeCosignatureBytes,
  formatCosignatureLine,
  parseCosignatureLine,
  toCosignatureTimestamp,
} from '../../src/note/cosignature.ts';
import { ed25519Cosigner } from '../../src/note/cosigner.ts';
import { formatSignatureLine, parseNote, signNote, verifyNote } from '../../src/note/signed-note.ts';
import { ed25519NoteSigner, parseVkey } from '../../src/note/vkey.ts';

const seed = (start: number): Uint8Array => Uint8Array.from({ length: 32 }, (_, i) => start + i);
const LOG_KEY = ed25519KeyFromSeed(seed(0x40));
const WITNESS = ed25519Cosigner('witness.example/w1', ed25519KeyFromSeed(seed(0x00)));
const LOG_VKEY = 'example.com/log+01882cac+ASVDuS/xCVURR2rcg2nbbdyTNmWhGXjdoUBO4QZsqVWd';
const WITNESS_VKEY = 'witness.example/w1+e75f6532+BAOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4';
const T = 1700000000;

const VECTORS = [
  {
    size: 3,
    root: '1Pksj7uJcg6ztVZ3x9fvrd/rENEaGoSguo8aIzN/qpU=',
    logLine: '— example.com/log AYgsrE/ez4/BhHEe4UBKQHGthuzE+YCMq5nfqTEDvgtHUzlv1vwdYEWyDe6tF/l2ODx37u1cJKECMSuVvzaIINOTAgY=',
    witnessLine:
      '— witness.example/w1 519lMgAAAABlU/EAYZ6u2iYaCM2WgDyyFQck4Op4QA7FWwiBFn4VWmoq2n7G4bwnmLJVQMd24K0/GaLg2A8MIYOpoBos4ha/phuYCg==',
    message:
      '636f7369676e61747572652f76310a74696d6520313730303030303030300a6578616d706c652e636f6d2f6c6f670a330a31506b736a37754a6367367a74565a337839667672642f72454e4561476f5367756f3861497a4e2f7170553d0a',
  },
  {
    size: 8,
    root: 'xcLIIO00L92ozolra5z1uMAKIcxLIHFMxuXTwFw1JAs=',
    logLine: '— example.com/log AYgsrCZHRR9ejRCutsbrb373wd1mjNijdtXMfz6iMkcrOjk8vIHLKqS6eNYD9XEEsICUKK9wcl+C14poiq5oOG8BeQY=',
    witnessLine:
      '— witness.example/w1 519lMgAAAABlU/EAv8IGLu0y0Gi0JqSDgdAlb+Ah/KJIDaOdc25DlpDjXH8EezO5CSyPStRivEgF41whknSHFxw/DYC9yU1EJVT5DQ==',
    message:
      '636f7369676e61747572652f76310a74696d6520313730303030303030300a6578616d706c652e636f6d2f6c6f670a380a78634c49494f30304c39326f7a6f6c7261357a31754d414b4963784c4948464d78755854774677314a41733d0a',
  },
];

void test('Appendix C vkeys are reproduced from the seeds', () => {
  const log = ed25519NoteSigner('example.com/log', LOG_KEY);
  const witness = WITNESS.noteSigner(T);
  assert.equal(log.verifier.vkey, LOG_VKEY);
  assert.equal(witness.verifier.vkey, WITNESS_VKEY);
  assert.equal(parseVkey(LOG_VKEY).keyId, 0x01882cac);
  assert.equal(parseVkey(WITNESS_VKEY).keyId, 0xe75f6532);
});

void test('Appendix C: log and witness signature lines reproduced byte for byte (sizes 3 and 8)', async () => {
  for (const v of VECTORS) {
    const text = formatCheckpoint({ origin: 'example.com/log', size: v.size, rootHash: Buffer.from(v.root, 'base64'), extensions: [] });
    assert.equal(text, `example.com/log\n${v.size}\n${v.root}\n`);
    // The 94-byte cosignature/v1 message.
    const msg = cosignatureMessage(text, T);
    assert.equal(msg.length, 94);
    assert.equal(Buffer.from(msg).toString('hex'), v.message);
    // Whole note via signNote with both signers.
    const note = signNote(text, [ed25519NoteSigner('example.com/log', LOG_KEY), WITNESS.noteSigner(T)]);
    assert.equal(note, `${text}\n${v.logLine}\n${v.witnessLine}\n`);
    // The cosignature line on its own, as POST /add-checkpoint returns it (sync and async forms).
    assert.equal(WITNESS.noteSigner(1700000000n).line(text), `${v.witnessLine}\n`);
    assert.equal(await WITNESS.cosignCheckpoint(text, 1700000000n), `${v.witnessLine}\n`);
    // Verification of the vector note with both vkeys.
    const r = verifyNote(`${text}\n${v.logLine}\n${v.witnessLine}\n`, [parseVkey(LOG_VKEY), parseVkey(WITNESS_VKEY)]);
    assert.equal(r.verified.length, 2);
    assert.equal(r.verified[1]!.timestamp, BigInt(T));
    assert.deepEqual(parseCheckpoint(r.text).size, v.size);
  }
});

void test('cosignature lines: parse/format round trip and verification', () => {
  const v = VECTORS[1]!;
  const text = `example.com/log\n8\n${v.root}\n`;
  const c = parseCosignatureLine(v.witnessLine);
  assert.equal(c.name, 'witness.example/w1');
  assert.equal(c.keyId, 0xe75f6532);
  assert.equal(c.timestamp, 1700000000n);
  assert.equal(c.signature.length, 64);
  assert.equal(formatCosignatureLine(c), `${v.witnessLine}\n`);
  assert.deepEqual(parseCosignatureLine(`${v.witnessLine}\n`), c);
  // Lines are verified in one place: the cosigner's NoteVerifier.
  const verifier = WITNESS.verifier();
  assert.equal(verifier.vkey, WITNESS_VKEY);
  const enc = (t: string): Uint8Array => new TextEncoder().encode(t);
  assert.equal(verifier.verify(enc(text), encodeCosignatureBytes(c.timestamp, c.signature)), true);
  assert.equal(verifier.verify(enc(text.replace('8', '9')), encodeCosignatureBytes(c.timestamp, c.signature)), false);
  assert.equal(verifier.verify(enc(text), encodeCosignatureBytes(c.timestamp + 1n, c.signature)), false);
  // A log signature line (68 bytes) is not a cosignature.
  assert.throws(() => parseCosignatureLine(v.logLine), { code: 'malformed_cosignature' });
  assert.throws(() => parseCosignatureLine('— witness.example/w1 AAAA'), { code: 'malformed_cosignature' });
});

void test('timestamps: bounds at 0 and 2^63 − 1', () => {
  assert.equal(MAX_COSIGNATURE_TIMESTAMP, 9223372036854775807n);
  assert.equal(toCosignatureTimestamp(0), 0n);
  assert.equal(toCosignatureTimestamp(MAX_COSIGNATURE_TIMESTAMP), MAX_COSIGNATURE_TIMESTAMP);
  for (const bad of [-1, 1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN]) {
    assert.throws(() => toCosignatureTimestamp(bad), { code: 'invalid_timestamp' }, String(bad));
  }
  assert.throws(() => toCosignatureTimestamp(MAX_COSIGNATURE_TIMESTAMP + 1n), { code: 'invalid_timestamp' });
  assert.throws(() => toCosignatureTimestamp(-1n), { code: 'invalid_timestamp' });

  const text = 'example.com/log\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n';
  const line = WITNESS.noteSigner(MAX_COSIGNATURE_TIMESTAMP).line(text);
  const max = parseCosignatureLine(line);
  assert.equal(parseCosignatureLine(line).timestamp, MAX_COSIGNATURE_TIMESTAMP);
  assert.ok(
    new TextDecoder().decode(cosignatureMessage(text, MAX_COSIGNATURE_TIMESTAMP)).startsWith('cosignature/v1\ntime 9223372036854775807\n'),
  );
  assert.equal(verifyNote(text + '\n' + line, [parseVkey(WITNESS_VKEY)]).verified[0]!.timestamp, MAX_COSIGNATURE_TIMESTAMP);
  // A timestamp ≥ 2^63 in the bytes is malformed for the line parser and a failed signature for verifyNote.
  const bytes = encodeCosignatureBytes(0n, max.signature);
  bytes[0] = 0x80;
  assert.throws(() => decodeCosignatureBytes(bytes), { code: 'malformed_cosignature' });
  const overflowLine = formatSignatureLine({ name: 'witness.example/w1', keyId: 0xe75f6532, signature: bytes });
  assert.throws(() => parseCosignatureLine(overflowLine), { code: 'malformed_cosignature' });
  assert.throws(() => verifyNote(text + '\n' + overflowLine, [parseVkey(WITNESS_VKEY)]), { code: 'invalid_signature' });
  assert.equal(parseNote(text + '\n' + overflowLine).signatures.length, 1);
});
