// ML-DSA-44 (type 0x06) lines wherever Ed25519 cosignatures are verified (SPEC §5.7, issue 20
// item 6): the portable verifier (WebCrypto: Node 24 has ML-DSA-44; a platform without it reports
// algorithm_unsupported and never counts the line), the node:crypto backend and the CLI's
// `verify cosignature … --vkey`. Vectors: ../shared/research/pq-cosign.md App. A/B.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as verify from '../../src/verify/index.ts';
import { nodeCryptoBackend } from '../../src/client/node-crypto.ts';
import { bothBackends, withBackend } from '../helpers/crypto-backends.ts';
import { parseVkey } from '../../src/note/vkey.ts';
import { tempDir } from '../helpers/tmp.ts';
import * as V from '../helpers/mldsa-vectors.ts';

const LOG_ED_VKEY = 'example.com/log+01882cac+ASVDuS/xCVURR2rcg2nbbdyTNmWhGXjdoUBO4QZsqVWd';
/** Appendix C's log-signed size-8 checkpoint, with the Ed25519 (C) and ML-DSA-44 (B.3) witness lines. */
const COSIGNED =
  `${V.WITNESS_CHECKPOINT_TEXT}\n— example.com/log AYgsrCZHRR9ejRCutsbrb373wd1mjNijdtXMfz6iMkcrOjk8vIHLKqS6eNYD9XEEsICUKK9wcl+C14poiq5oOG8BeQY=\n` +
  `${V.WITNESS_ED25519_LINE}\n${V.WITNESS_LINE}\n`;

bothBackends('portable verifier: a 0x06 vkey parses (ID checked), the Appendix B line counts, a flipped bit fails the note', async () => {
  assert.equal(await verify.mlDsa44Available(), true, 'Node 24 WebCrypto has ML-DSA-44');
  const ml = await verify.noteKeyFromVkey(V.WITNESS_VKEY);
  assert.equal(ml.type, 0x06);
  await assert.rejects(verify.noteKeyFromVkey(V.WITNESS_VKEY.replace('+dcccf9ec+', '+dcccf9ed+')), { code: 'key_invalid' });
  const ed = await verify.noteKeyFromVkey(V.WITNESS_ED25519_VKEY);
  const log = await verify.noteKeyFromVkey(LOG_ED_VKEY);
  const r = await verify.verifyCosignedCheckpoint(COSIGNED, { cosigners: [ed, ml], log: [log] });
  // Both lines verify; they are one witness's (one name): one cosigner (SPEC §4.1 rev 4).
  assert.deepEqual(
    r.cosigners.map((c) => [c.name, c.timestamp]),
    [[V.WITNESS_NAME, V.WITNESS_T]],
  );
  assert.deepEqual(r.unsupported, []);
  const only = await verify.verifyCosignedCheckpoint(COSIGNED, { cosigners: [ml] });
  assert.equal(only.cosigners.length, 1);
  const tampered = COSIGNED.replace(V.WITNESS_LINE, V.WITNESS_LINE.replace('3Mz57AAAAABlU/EADTdJ', '3Mz57AAAAABlU/EADTdK'));
  await assert.rejects(verify.verifyCosignedCheckpoint(tampered, { cosigners: [ml] }), { code: 'cosignature_invalid' });
  // torchwood's log signs with ML-DSA-44: a 0x06 log key
  const twLog = await verify.noteKeyFromVkey(V.TORCHWOOD_LOG_VKEY);
  const cp = await verify.verifyCheckpoint(V.TORCHWOOD_CHECKPOINT_NOTE, [twLog], 'example.com/mldsa-log');
  assert.equal(cp.checkpoint.size, 1);
  assert.equal((await verify.noteKeyFromVkey(V.TESSERA_LOG_VKEY)).vkey, V.TESSERA_LOG_VKEY);
});

void test('the node:crypto backend agrees, with keys parsed as the CLI parses them', async () => {
  const verifySync = (note: string, opts: Parameters<typeof verify.verifyCosignedCheckpoint>[1]) =>
    withBackend(nodeCryptoBackend(), () => verify.verifyCosignedCheckpoint(note, opts));
  const r = await verifySync(COSIGNED, {
    cosigners: [parseVkey(V.WITNESS_ED25519_VKEY), parseVkey(V.WITNESS_VKEY)],
    log: [parseVkey(LOG_ED_VKEY)],
  });
  assert.equal(r.cosigners.length, 1, 'one witness, however many of its lines verify');
  assert.equal((await verifySync(COSIGNED, { cosigners: [parseVkey(V.WITNESS_VKEY)] })).cosigners[0]!.timestamp, V.WITNESS_T);
  // Without the ML-DSA-44 line the witness still cosigned (its Ed25519 line): one vote either way.
  const noMl = COSIGNED.replace(`${V.WITNESS_LINE}\n`, '');
  assert.equal((await verifySync(noMl, { cosigners: [parseVkey(V.WITNESS_ED25519_VKEY), parseVkey(V.WITNESS_VKEY)] })).cosigners.length, 1);
  await assert.rejects(verifySync(noMl, { cosigners: [parseVkey(V.WITNESS_VKEY)], log: [parseVkey(LOG_ED_VKEY)] }), {
    code: 'cosignature_missing',
  });
});

/** A child Node whose crypto.subtle refuses ML-DSA-44 as a browser does (NotSupportedError); runs `body` with `v` (the verifier SDK), `args` and `out`. */
function withoutWebCryptoMlDsa(body: string, args: unknown): Promise<Record<string, unknown>> {
  const script = `
const subtle = globalThis.crypto.subtle;
const refuse = (alg) => (typeof alg === 'string' ? alg : alg?.name) === 'ML-DSA-44';
const notSupported = () => Promise.reject(new DOMException('Unrecognized name', 'NotSupportedError'));
for (const m of ['importKey', 'verify']) {
  const orig = subtle[m].bind(subtle);
  subtle[m] = (...a) => (refuse(m === 'importKey' ? a[2] : a[0]) ? notSupported() : orig(...a));
}
const v = await import(${JSON.stringify(join(import.meta.dirname, '..', '..', 'src', 'verify', 'index.ts'))});
const args = JSON.parse(process.argv[1]);
const out = { available: await v.mlDsa44Available() };
const verdict = async (f) => { try { await f(); return 'verified'; } catch (e) { return e.code ?? String(e); } };
${body}
process.stdout.write(JSON.stringify(out));`;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '--no-warnings', '-e', script, JSON.stringify(args)],
      { timeout: 30_000, cwd: join(import.meta.dirname, '..', '..') },
      (err, out, stderr) => {
        if (err === null) resolve(JSON.parse(out) as Record<string, unknown>);
        else reject(new Error(`${err.message}\n${stderr}`));
      },
    );
  });
}

void test('a platform whose WebCrypto lacks ML-DSA-44: a line of a given 0x06 key is algorithm_unsupported, never skipped', async () => {
  const out = await withoutWebCryptoMlDsa(
    `
const [note, edV, mlV, logV, noMl] = args;
const ed = await v.noteKeyFromVkey(edV), ml = await v.noteKeyFromVkey(mlV), log = await v.noteKeyFromVkey(logV);
out.noMlLineQuorum1 = await verdict(() => v.verifyCosignedCheckpoint(noMl, { cosigners: [ed, ml], quorum: 1 }));
out.quorum1 = await verdict(() => v.verifyCosignedCheckpoint(note, { cosigners: [ed, ml], quorum: 1 }));
out.all = await verdict(() => v.verifyCosignedCheckpoint(note, { cosigners: [ed, ml] }));
out.mlOnly = await verdict(() => v.verifyCosignedCheckpoint(note, { cosigners: [ml], log: [log] }));
out.note = await verdict(() => v.verifyNote(note, [ml]));
out.edOnly = await verdict(() => v.verifyCosignedCheckpoint(note, { cosigners: [ed], log: [log] }));
`,
    [COSIGNED, V.WITNESS_ED25519_VKEY, V.WITNESS_VKEY, LOG_ED_VKEY, COSIGNED.replace(`${V.WITNESS_LINE}\n`, '')],
  );
  assert.deepEqual(out, {
    available: false,
    // no line of the ML-DSA-44 key: nothing unverifiable, the Ed25519 line meets quorum 1 (as in Node)
    noMlLineQuorum1: 'verified',
    quorum1: 'algorithm_unsupported',
    all: 'algorithm_unsupported',
    mlOnly: 'algorithm_unsupported',
    note: 'algorithm_unsupported',
    // no ML-DSA key given: nothing to verify with it, the Ed25519 cosigner suffices
    edOnly: 'verified',
  });
});

void test('issue 25 item 15: a corrupted line of a pinned ML-DSA-44 cosigner gets the same verdict without WebCrypto ML-DSA as in Node', async () => {
  // Reproduction: quorum 1 of {Ed25519, ML-DSA-44} cosigners of one witness, the ML-DSA-44 line
  // corrupted. Node refuses (a known key's line fails); a browser without ML-DSA-44 used to drop
  // the key and accept on the Ed25519 line alone.
  const corrupted = COSIGNED.replace(V.WITNESS_LINE, V.WITNESS_LINE.replace('3Mz57AAAAABlU/EADTdJ', '3Mz57AAAAABlU/EADTdK'));
  const ed = await verify.noteKeyFromVkey(V.WITNESS_ED25519_VKEY);
  const ml = await verify.noteKeyFromVkey(V.WITNESS_VKEY);
  const nodeVerdict = async (note: string): Promise<string> => {
    try {
      await verify.verifyCosignedCheckpoint(note, { cosigners: [ed, ml], quorum: 1 });
      return 'verified';
    } catch (e) {
      return (e as { code: string }).code;
    }
  };
  const inNode = { corrupted: await nodeVerdict(corrupted), good: await nodeVerdict(COSIGNED) };
  assert.deepEqual(inNode, { corrupted: 'cosignature_invalid', good: 'verified' });
  const out = await withoutWebCryptoMlDsa(
    `
const [corrupted, good, edV, mlV] = args;
const ed = await v.noteKeyFromVkey(edV), ml = await v.noteKeyFromVkey(mlV);
const run = (note) => verdict(() => v.verifyCosignedCheckpoint(note, { cosigners: [ed, ml], quorum: 1 }));
out.without = { corrupted: await run(corrupted), good: await run(good) };
const { ml_dsa44 } = await import('@noble/post-quantum/ml-dsa.js');
let calls = 0;
v.setCryptoBackend({ mlDsa44Verify: (pk, msg, sig) => { calls++; return ml_dsa44.verify(sig, msg, pk); } });
out.availableWithBackend = await v.mlDsa44Available();
out.withBackend = { corrupted: await run(corrupted), good: await run(good) };
out.backendCalls = calls;
const r = await v.verifyCosignedCheckpoint(good, { cosigners: [ed, ml] });
out.counted = r.cosigners.length;
v.setCryptoBackend(undefined);
out.afterRemoval = await run(corrupted);
`,
    [corrupted, COSIGNED, V.WITNESS_ED25519_VKEY, V.WITNESS_VKEY],
  );
  assert.deepEqual(out, {
    available: false,
    without: { corrupted: 'algorithm_unsupported', good: 'algorithm_unsupported' },
    availableWithBackend: true,
    withBackend: inNode,
    backendCalls: 2,
    counted: 1, // one witness (one name), however many of its lines verify (SPEC §4.1)
    afterRemoval: 'algorithm_unsupported',
  });
});

void test('CLI: verify cosignature FILE --vkey <0x06 vkey> --log-vkey <0x01>; verify checkpoint with a 0x06 log vkey', async () => {
  const { dir, cleanup } = tempDir();
  const cli = join(import.meta.dirname, '..', 'helpers', 'client-cli.ts');
  const run = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [cli, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr });
      });
    });
  try {
    const f = join(dir, 'cosigned.txt');
    writeFileSync(f, COSIGNED);
    const good = await run([
      'verify',
      'cosignature',
      f,
      '--vkey',
      V.WITNESS_VKEY,
      '--vkey',
      V.WITNESS_ED25519_VKEY,
      '--log-vkey',
      LOG_ED_VKEY,
    ]);
    assert.equal(good.code, 0, good.stderr);
    assert.match(good.stdout, /^OK .*cosigned by witness\.example\/w1 at 1700000000; log signature verified/);
    // the offline checkpoint verifier with torchwood's ML-DSA-44 log key
    const cp = join(dir, 'torchwood.txt');
    writeFileSync(cp, V.TORCHWOOD_CHECKPOINT_NOTE);
    const tw = await run(['verify', 'checkpoint', cp, '--vkey', V.TORCHWOOD_LOG_VKEY]);
    assert.equal(tw.code, 0, tw.stderr);
    assert.match(tw.stdout, /^OK .*example\.com\/mldsa-log/);
    writeFileSync(cp, V.TORCHWOOD_CHECKPOINT_NOTE.replace('\n1\n', '\n2\n'));
    assert.equal((await run(['verify', 'checkpoint', cp, '--vkey', V.TORCHWOOD_LOG_VKEY])).code, 1);
    const bad = join(dir, 'bad.txt');
    writeFileSync(bad, COSIGNED.replace(`${V.WITNESS_LINE}\n`, ''));
    // Without its ML-DSA-44 line, the witness given by that key alone has not cosigned (its
    // Ed25519 line is of a key not given, ignored).
    const missing = await run(['verify', 'cosignature', bad, '--vkey', V.WITNESS_VKEY, '--log-vkey', LOG_ED_VKEY]);
    assert.equal(missing.code, 1);
    assert.match(missing.stdout + missing.stderr, /cosignature_missing/);
  } finally {
    cleanup();
  }
});
