// add-checkpoint with ML-DSA-44 keys (SPEC §5.1–§5.3, §5.7): torchwood's 0x06 log key, the
// Appendix C/B witness (Ed25519 + ML-DSA-44 lines over one checkpoint), random round trips checked
// by node:crypto and @noble/post-quantum, the response and monitoring shapes, check 3a, and the
// load-time rules. Vectors: ../shared/research/pq-cosign.md (test/helpers/mldsa-vectors.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { ml_dsa44 } from '@noble/post-quantum/ml-dsa.js';
import { SignaturePool } from '../../src/anchoring/verify-pool.ts';
import { CosignConfigError, LogsConfigError } from '../../src/cosign/errors.ts';
import { parseLogsConfig } from '../../src/cosign/logs.ts';
import { ed25519KeyFromSeed, generateEd25519 } from '../../src/crypto/ed25519.ts';
import { generateMlDsa44, mlDsa44KeyFromSeed, mlDsa44PublicKeyBytes } from '../../src/crypto/ml-dsa.ts';
import { decodeBase64, encodeBase64 } from '../../src/encoding/base64.ts';
import { decodeHex } from '../../src/encoding/hex.ts';
import { formatCheckpoint } from '../../src/note/checkpoint.ts';
import { SIG_TYPE_SUBTREE_V1, parseSignatureLines, signNote, verifyNote } from '../../src/note/signed-note.ts';
import { mlDsa44Cosigner } from '../../src/note/cosigner.ts';
import { checkpointSubtreeMessage, encodeSubtreeSignatureBytes, parseSubtreeCosignatureLine } from '../../src/note/subtree-message.ts';
import { ed25519NoteSigner, formatVkey, keyIdHex, parseVkey, subtreeNoteVerifier } from '../../src/note/vkey.ts';
import {
  APPENDIX_C_TIME,
  LOG_NAME,
  SyntheticLog,
  WITNESS_NAME,
  cosignKeyC,
  logKeyC,
  logsDoc,
  startCosign,
} from '../helpers/cosign-harness.ts';
import { tempDir } from '../helpers/tmp.ts';
import * as V from '../helpers/mldsa-vectors.ts';

const mlDsaWitnessKey = mlDsa44KeyFromSeed(decodeHex(V.WITNESS_SEED_HEX));
const originHash = (origin: string): string => createHash('sha256').update(origin).digest('hex');

/** The body lines of a 200: name, key ID hex, T of each. */
function lineHeads(body: string): { name: string; keyId: string; timestamp: bigint }[] {
  return parseSignatureLines(body).map((s) => ({
    name: s.name,
    keyId: keyIdHex(s.keyId),
    timestamp: new DataView(s.signature.buffer, s.signature.byteOffset, 8).getBigUint64(0),
  }));
}

void test("torchwood: a witness given torchwood's 0x06 log key answers 200 to old 0 + its checkpoint; the lines verify", async () => {
  const { dir, cleanup } = tempDir();
  const origin = 'example.com/mldsa-log';
  const pool = new SignaturePool(1, undefined, [mlDsaWitnessKey]);
  const h = await startCosign({
    dir,
    logsDoc: logsDoc({ origin, keys: [V.TORCHWOOD_LOG_VKEY] }),
    cosignKeys: [cosignKeyC, mlDsaWitnessKey],
    verifyPool: pool,
    now: () => APPENDIX_C_TIME * 1000,
  });
  try {
    const r = await h.post(`old 0\n\n${V.TORCHWOOD_CHECKPOINT_NOTE}`);
    assert.equal(r.status, 200, r.text);
    const vkeys = h.role.healthInfo().cosignVkeys;
    assert.equal(vkeys.length, 2);
    const note = V.TORCHWOOD_CHECKPOINT_NOTE + r.text;
    const v = verifyNote(note, [parseVkey(V.TORCHWOOD_LOG_VKEY), ...vkeys.map(parseVkey)]);
    assert.equal(v.verified.length, 3);
    const mlLine = parseSubtreeCosignatureLine(r.text.split('\n')[1]!);
    const text = V.TORCHWOOD_CHECKPOINT_NOTE.slice(0, V.TORCHWOOD_CHECKPOINT_NOTE.indexOf('\n\n') + 1);
    assert.equal(
      ml_dsa44.verify(mlLine.signature, checkpointSubtreeMessage(WITNESS_NAME, text, mlLine.timestamp), parseVkey(vkeys[1]!).publicKey),
      true,
    );
    // A changed log signature is a known key's failing signature: 403.
    const bad = V.TORCHWOOD_CHECKPOINT_NOTE.replace('td9FxQAAAAAAAAAAkjFv', 'td9FxQAAAAAAAAAAkjFw');
    assert.equal((await h.post(`old 1\n\n${bad}`)).status, 403);
  } finally {
    await h.close();
    await pool.close();
    cleanup();
  }
});

void test('Appendix C/B witness: Ed25519 then ML-DSA-44 line, one T; the Ed25519 line is the Go vector byte for byte, the ML-DSA-44 message is B.2', async () => {
  const { dir, cleanup } = tempDir();
  const log = new SyntheticLog(LOG_NAME, logKeyC);
  const h = await startCosign({
    dir,
    logsDoc: logsDoc({ origin: LOG_NAME, keys: [log.vkey] }),
    cosignKeys: [cosignKeyC, mlDsaWitnessKey],
    now: () => APPENDIX_C_TIME * 1000,
  });
  try {
    assert.deepEqual(h.role.healthInfo().cosignVkeys, [V.WITNESS_ED25519_VKEY, V.WITNESS_VKEY]);
    assert.equal(h.role.healthInfo().cosignVkey, V.WITNESS_ED25519_VKEY);
    const r = await h.post(`old 0\n\n${log.checkpoint(8)}`);
    assert.equal(r.status, 200);
    const [ed, ml] = r.text.split('\n');
    assert.equal(ed, V.WITNESS_ED25519_LINE);
    const line = parseSubtreeCosignatureLine(ml!);
    assert.equal(line.timestamp, V.WITNESS_T);
    assert.equal(keyIdHex(line.keyId), 'dcccf9ec');
    assert.equal(
      subtreeNoteVerifier(line.name, mlDsa44PublicKeyBytes(mlDsaWitnessKey)).verify(
        new TextEncoder().encode(V.WITNESS_CHECKPOINT_TEXT),
        encodeSubtreeSignatureBytes(line.timestamp, line.signature),
      ),
      true,
    );
    assert.equal(
      ml_dsa44.verify(line.signature, decodeHex(V.WITNESS_MESSAGE_HEX), mlDsa44PublicKeyBytes(mlDsaWitnessKey)),
      true,
      'noble verifies the witness line over the Appendix B.2 message',
    );
    // the keyring's ML-DSA-44 Cosigner (for sign-subtree): the B.4 statement, T = 0, signs the B.4 message
    const [mlSigner] = h.role.service.keyring.mlDsa;
    assert.equal(keyIdHex(mlSigner!.keyId), 'dcccf9ec');
    const sub = parseSubtreeCosignatureLine(
      await mlSigner!.signSubtree({
        origin: V.SUBTREE_ORIGIN,
        start: V.SUBTREE_START,
        end: V.SUBTREE_END,
        hash: decodeBase64(V.SUBTREE_HASH_B64, 32),
      }),
    );
    assert.equal(sub.timestamp, 0n);
    assert.equal(ml_dsa44.verify(sub.signature, decodeHex(V.SUBTREE_MESSAGE_HEX), mlSigner!.publicKey), true);
  } finally {
    await h.close();
    cleanup();
  }
});

/** A random origin of 1..255 UTF-8 bytes (printable ASCII and a few two-byte characters). */
function randomOrigin(): string {
  const chars = 'abcdefghijklmnopqrstuvwxyz0123456789./-_:~é';
  let s = '';
  const target = randomInt(1, 120);
  while (new TextEncoder().encode(s).length < target) s += chars.charAt(randomInt(chars.length));
  return s;
}

void test('round trip: random names, origins and sizes; every line verifies with node:crypto and with noble; one T; start 0, end = size', async () => {
  const { dir, cleanup } = tempDir();
  for (let round = 0; round < 3; round++) {
    const name = `w${randomBytes(3).toString('hex')}.example/${'x'.repeat(randomInt(0, 40))}`;
    const ml1 = generateMlDsa44();
    const ml2 = generateMlDsa44();
    const ed = generateEd25519();
    const logKey = generateEd25519();
    const logs = Array.from({ length: 4 }, () => randomOrigin());
    const pool = new SignaturePool(round === 0 ? 0 : 1, undefined, [ml1.privateKey, ml2.privateKey]);
    const h = await startCosign({
      dir,
      dbName: `rt${round}.db`,
      name,
      logsDoc: logsDoc(...[...new Set(logs)].map((o) => ({ origin: o, keys: [formatVkey(o, 0x01, logKeyEdPub(logKey))] }))),
      cosignKeys: [ml1.privateKey, ed.privateKey, ml2.privateKey],
      verifyPool: pool,
    });
    try {
      const vkeys = h.role.healthInfo().cosignVkeys;
      assert.equal(vkeys.length, 3);
      assert.equal(h.role.healthInfo().cosignVkey, vkeys[1]);
      for (const origin of new Set(logs)) {
        const size = randomInt(0, 2 ** 47);
        const root = size === 0 ? decodeBase64('47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=', 32) : new Uint8Array(randomBytes(32));
        const text = formatCheckpoint({ origin, size, rootHash: root, extensions: [] });
        const note = signNote(text, [ed25519NoteSigner(origin, logKey.privateKey)]);
        const r = await h.post(`old 0\n\n${note}`);
        assert.equal(r.status, 200, `${origin}: ${r.text}`);
        const heads = lineHeads(r.text);
        assert.deepEqual(
          heads.map((x) => x.keyId),
          vkeys.map((k) => k.split('+')[1]),
          'one line per key, in --cosign-key order',
        );
        assert.equal(new Set(heads.map((x) => x.timestamp)).size, 1, 'one T for all lines');
        assert.ok(heads[0]!.timestamp > 0n);
        const v = verifyNote(note + r.text, [parseVkey(formatVkey(origin, 0x01, logKeyEdPub(logKey))), ...vkeys.map(parseVkey)]);
        assert.equal(v.verified.length, 4);
        for (const [i, k] of [ml1, ml2].entries()) {
          const line = parseSubtreeCosignatureLine(r.text.split('\n')[i === 0 ? 0 : 2]!);
          const msg = checkpointSubtreeMessage(name, text, line.timestamp);
          // start 0, end = size, hash = root, in the message the line signs
          const dv = new DataView(msg.buffer, msg.byteOffset + msg.length - 48, 16);
          assert.equal(dv.getBigUint64(0), 0n);
          assert.equal(dv.getBigUint64(8), BigInt(size));
          assert.deepEqual(msg.subarray(msg.length - 32), root);
          assert.equal(ml_dsa44.verify(line.signature, msg, k.publicKey), true, 'noble verifies');
        }
        // the monitoring body: stored checkpoint text, blank line, the log line, every witness line
        const m = await h.get(`/${originHash(origin)}/checkpoint`);
        assert.equal(m.status, 200);
        assert.equal(m.text, note + r.text);
      }
    } finally {
      await h.close();
      await pool.close();
    }
  }
  cleanup();
});

function logKeyEdPub(k: { publicKey: Uint8Array }): Uint8Array {
  return k.publicKey;
}

void test('response shape: 0x06 log key and two witness keys; the monitoring body holds the log line and every witness line; a log 0x04 key is refused', async () => {
  const { dir, cleanup } = tempDir();
  const logMl = generateMlDsa44();
  const origin = 'pq.example/log';
  const logVkey = formatVkey(origin, SIG_TYPE_SUBTREE_V1, logMl.publicKey);
  const h = await startCosign({ dir, logsDoc: logsDoc({ origin, keys: [logVkey] }), cosignKeys: [mlDsaWitnessKey, cosignKeyC] });
  try {
    const text = formatCheckpoint({ origin, size: 5, rootHash: randomBytes(32), extensions: [] });
    // The log signs with ML-DSA-44 (any T; here 0 as torchwood's vector does).
    const logSig = parseSubtreeCosignatureLine(mlDsa44Cosigner(origin, logMl.privateKey).noteSigner(0n).line(text));
    const note = `${text}\n— ${origin} ${encodeBase64(Uint8Array.of(...u32(logSig.keyId), ...new Uint8Array(8), ...logSig.signature))}\n`;
    const r = await h.post(`old 0\n\n${note}`);
    assert.equal(r.status, 200, r.text);
    const m = await h.get(`/${originHash(origin)}/checkpoint`);
    assert.equal(m.text, note + r.text);
    const lines = m.text.slice(m.text.indexOf('\n\n') + 2);
    assert.equal(parseSignatureLines(lines).length, 3);
    assert.deepEqual(
      lineHeads(r.text).map((x) => x.name),
      [WITNESS_NAME, WITNESS_NAME],
    );
  } finally {
    await h.close();
    cleanup();
  }
  assert.throws(
    () => parseLogsConfig({ logs: [{ origin, keys: [V.WITNESS_ED25519_VKEY] }] }),
    (e: unknown) => e instanceof LogsConfigError && /not a log key/.test(e.message),
  );
});

function u32(n: number): number[] {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
}

void test('check 3a: extension lines → 400 with an ML-DSA-44 key, 200 without; a note with 16 signature lines is accepted', async () => {
  const { dir, cleanup } = tempDir();
  const log = new SyntheticLog(LOG_NAME, logKeyC);
  const text = `${log.text(3)}some extension\n`;
  const note = signNote(text, [ed25519NoteSigner(LOG_NAME, logKeyC)]);
  const withMl = await startCosign({
    dir,
    dbName: 'a.db',
    logsDoc: logsDoc({ origin: LOG_NAME, keys: [log.vkey] }),
    cosignKeys: [cosignKeyC, mlDsaWitnessKey],
  });
  const edOnly = await startCosign({ dir, dbName: 'b.db', logsDoc: logsDoc({ origin: LOG_NAME, keys: [log.vkey] }) });
  try {
    const a = await withMl.post(`old 0\n\n${note}`);
    assert.equal(a.status, 400);
    assert.match(a.text, /extension lines/);
    // nothing was stored
    assert.equal((await withMl.get(`/${originHash(LOG_NAME)}/checkpoint`)).status, 404);
    const b = await edOnly.post(`old 0\n\n${note}`);
    assert.equal(b.status, 200);
    // 16 signature lines: the log's, and 15 unknown ML-DSA-44 lines (≈ 3.3 kB each) — accepted
    const others = Array.from({ length: 15 }, (_, i) => `— other${i}.example ${encodeBase64(randomBytes(2432))}\n`).join('');
    const many = log.checkpoint(3) + others;
    assert.equal(parseSignatureLines(many.slice(many.indexOf('\n\n') + 2)).length, 16);
    const c = await withMl.post(`old 0\n\n${many}`);
    assert.equal(c.status, 200, c.text);
  } finally {
    await withMl.close();
    await edOnly.close();
    cleanup();
  }
});

void test('load-time rules: two keys with one public key, origins over 255 bytes with an ML-DSA-44 key', async () => {
  const { dir, cleanup } = tempDir();
  try {
    await assert.rejects(
      startCosign({
        dir,
        dbName: 'd1.db',
        logsDoc: logsDoc(),
        cosignKeys: [mlDsaWitnessKey, mlDsa44KeyFromSeed(decodeHex(V.WITNESS_SEED_HEX))],
      }),
      (e: unknown) => e instanceof CosignConfigError && e.code === 'invalid_cosign_key',
    );
    await assert.rejects(
      startCosign({
        dir,
        dbName: 'd2.db',
        logsDoc: logsDoc(),
        cosignKeys: [cosignKeyC, ed25519KeyFromSeed(Uint8Array.from({ length: 32 }, (_, i) => i))],
      }),
      (e: unknown) => e instanceof CosignConfigError && e.code === 'invalid_cosign_key',
    );
    const long = `long.example/${'a'.repeat(250)}`;
    const vkey = new SyntheticLog(long, logKeyC).vkey;
    await assert.rejects(
      startCosign({ dir, dbName: 'd3.db', logsDoc: logsDoc({ origin: long, keys: [vkey] }), cosignKeys: [mlDsaWitnessKey] }),
      (e: unknown) => e instanceof LogsConfigError && /longer than 255 bytes/.test(e.message),
    );
    const ok = await startCosign({ dir, dbName: 'd4.db', logsDoc: logsDoc({ origin: long, keys: [vkey] }) });
    await ok.close();
    // ML-DSA-44 keys only: /health's cosign_vkey (the first Ed25519 one) is null
    const mlOnly = await startCosign({ dir, dbName: 'd5.db', logsDoc: logsDoc(), cosignKeys: [mlDsaWitnessKey] });
    assert.deepEqual(mlOnly.role.healthInfo(), { cosignVkey: null, cosignVkeys: [V.WITNESS_VKEY], origins: [] });
    await mlOnly.close();
  } finally {
    cleanup();
  }
});

void test('ML-DSA-44 lines are signed through the worker pool, never on the calling thread, and stored before the 200', async () => {
  const { dir, cleanup } = tempDir();
  const log = new SyntheticLog(LOG_NAME, logKeyC);
  const real = new SignaturePool(1, undefined, [mlDsaWitnessKey]);
  let pooled = 0;
  const pool = Object.assign(Object.create(real) as SignaturePool, {
    signMlDsa44: (key: Parameters<SignaturePool['signMlDsa44']>[0], message: Uint8Array) => {
      pooled++;
      return real.signMlDsa44(key, message);
    },
  });
  const h = await startCosign({
    dir,
    logsDoc: logsDoc({ origin: LOG_NAME, keys: [log.vkey] }),
    cosignKeys: [mlDsaWitnessKey, cosignKeyC],
    verifyPool: pool,
  });
  try {
    for (const [old, size] of [
      [0, 3],
      [3, 8],
    ] as const) {
      const r = await h.post(log.request(old, size));
      assert.equal(r.status, 200, r.text);
      const state = await h.store.cosign.getOrigin(LOG_NAME);
      assert.equal(state?.size, size);
      assert.equal(state.cosignatures, r.text, 'the lines of the 200 are the stored ones');
    }
    assert.equal(pooled, 2, 'one pool signature per request (one ML-DSA-44 key)');
  } finally {
    await h.close();
    await real.close();
    cleanup();
  }
});
