// POST /sign-subtree (SPEC §5.4) over loopback HTTP: the check table row by row and in order,
// the 200 body (one subtree/v1 line, T = 0, per own ML-DSA-44 key whose line verified, in
// --cosign-key order) checked with node:crypto and with @noble/post-quantum, Appendix B.4/B.5 of
// research/pq-cosign.md, trees of 2^32 and 2^53 − 1 leaves, the route's absence without an
// ML-DSA-44 key or with --no-sign-subtree, its own rate limit, and its metric.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPublicKey, verify as nodeVerify } from 'node:crypto';
import { sha256Hex } from '../../src/crypto/sha256.ts';
import type { KeyObject } from 'node:crypto';
import { ml_dsa44 } from '@noble/post-quantum/ml-dsa.js';
import { encodeBase64 } from '../../src/encoding/base64.ts';
import { formatCheckpoint } from '../../src/note/checkpoint.ts';
import { parseSignatureLine, signNote } from '../../src/note/signed-note.ts';
import { ed25519NoteSigner } from '../../src/note/vkey.ts';
import { mlDsa44KeyFromSeed } from '../../src/crypto/ml-dsa.ts';
import { formatSignSubtreeRequest } from '../../src/note/tlog-witness.ts';
import { formatAddCheckpointRequest } from '../../src/note/tlog-witness.ts';
import { MAX_TREE_SIZE } from '../../src/tlog/merkle.ts';
import { WITNESS_NAME, cosignKeyC, logKeyC, logsDoc, seq, startCosign } from '../helpers/cosign-harness.ts';
import type { CosignHarness, HarnessOptions, HttpResult } from '../helpers/cosign-harness.ts';
import { byteTree, subtreeConsistencyProof, uniformTree } from '../helpers/subtree-proofs.ts';
import type { Tree } from '../helpers/subtree-proofs.ts';
import { tempDir } from '../helpers/tmp.ts';
import { SignaturePool } from '../../src/anchoring/verify-pool.ts';
import { SUBTREE_LINE as B5_LINE, SUBTREE_MESSAGE_HEX as B4_MESSAGE_HEX } from '../helpers/mldsa-vectors.ts';
import { ed25519Cosigner, mlDsa44Cosigner } from '../../src/note/cosigner.ts';

// research/pq-cosign.md Appendix B: the witness ML-DSA-44 key (seed 00..1f) and the subtree vector
// (B.4 message, B.5 line: test/helpers/mldsa-vectors.ts).
const MTC_ORIGIN = 'example.com/mtc-log';
const B5_LINE_BLOB_PREFIX = '3Mz57AAAAAAAAAAA'; // key ID dcccf9ec ‖ T = 0
const SEED_A = seq(0x00);
const SEED_B = seq(0x20);
const mlDsaA = mlDsa44KeyFromSeed(SEED_A);
const mlDsaB = mlDsa44KeyFromSeed(SEED_B);
// Public keys from noble's key generation: an implementation independent of node:crypto's.
const PK_A = ml_dsa44.keygen(SEED_A).publicKey;
const PK_B = ml_dsa44.keygen(SEED_B).publicKey;
const OTHER_ORIGIN = 'other.example/log';

/** SHA-256(name ‖ 0x0A ‖ 0x06 ‖ pk)[:4] as a number (SPEC §5.1), computed here from first principles. */
function keyId06(name: string, pk: Uint8Array): number {
  return createHash('sha256').update(name).update(Uint8Array.of(0x0a, 0x06)).update(pk).digest().readUInt32BE(0);
}

/** The subtree/v1 message (SPEC §5.2), built here independently of src/note. */
function message(name: string, t: bigint, origin: string, start: bigint, end: bigint, hash: Uint8Array): Uint8Array {
  const u64 = (v: bigint): Buffer => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(v);
    return b;
  };
  const n = Buffer.from(name);
  const o = Buffer.from(origin);
  return Buffer.concat([Buffer.from('subtree/v1\n\0'), Buffer.of(n.length), n, u64(t), Buffer.of(o.length), o, u64(start), u64(end), hash]);
}

/** A checkpoint of `tree` for `origin`, signed by the log key, then cosigned by our given keys. */
function reference(
  tree: Tree,
  opts: { origin?: string; mlDsa?: KeyObject[]; ed25519?: KeyObject[]; extensions?: string[]; t?: bigint; name?: string } = {},
): string {
  const origin = opts.origin ?? MTC_ORIGIN;
  const text = formatCheckpoint({ origin, size: Number(tree.size), rootHash: tree.mth(0n, tree.size), extensions: opts.extensions ?? [] });
  const t = opts.t ?? 1_800_000_000n;
  let note = signNote(text, [ed25519NoteSigner(origin, logKeyC)]);
  for (const k of opts.ed25519 ?? [])
    note = signNote(text, [ed25519Cosigner(opts.name ?? WITNESS_NAME, k).noteSigner(t)], parseNoteSigs(note));
  for (const k of opts.mlDsa ?? [])
    note += mlDsa44Cosigner(opts.name ?? WITNESS_NAME, k)
      .noteSigner(t)
      .line(text);
  return note;
}

function parseNoteSigs(note: string): ReturnType<typeof parseSignatureLine>[] {
  return note
    .slice(note.indexOf('\n\n') + 2)
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => parseSignatureLine(l));
}

function body(tree: Tree, start: bigint, end: bigint, note: string, proof = subtreeConsistencyProof(tree, start, end)): string {
  return formatSignSubtreeRequest(start, end, tree.mth(start, end), proof, note);
}

async function post(h: CosignHarness, text: string | Uint8Array): Promise<HttpResult> {
  const res = await fetch(`${h.url}/sign-subtree`, { method: 'POST', body: text });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function expectStatus(h: CosignHarness, text: string, status: number, pattern?: RegExp): Promise<HttpResult> {
  const r = await post(h, text);
  assert.equal(r.status, status, r.text);
  if (status !== 200) {
    assert.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.match(r.text, /^[^\n]+\n$/); // one line of text
  }
  if (pattern !== undefined) assert.match(r.text, pattern);
  return r;
}

/** Every line of a 200 body: our name, an ML-DSA key's ID, T = 0, valid under node:crypto and noble. */
function checkLines(
  text: string,
  subtree: { origin?: string; start: bigint; end: bigint; hash: Uint8Array },
  keys: Uint8Array[],
  name = WITNESS_NAME,
): void {
  const lines = text.split('\n');
  assert.equal(lines.pop(), '', 'the body ends with a newline');
  assert.equal(lines.length, keys.length, text);
  const m = message(name, 0n, subtree.origin ?? MTC_ORIGIN, subtree.start, subtree.end, subtree.hash);
  lines.forEach((line, i) => {
    const sig = parseSignatureLine(line);
    assert.equal(sig.name, name);
    assert.equal(sig.keyId, keyId06(name, keys[i]!), `line ${i + 1} is key ${i + 1}'s`);
    assert.equal(sig.signature.length, 8 + 2420);
    assert.equal(Buffer.from(sig.signature.subarray(0, 8)).readBigUInt64BE(), 0n, 'T = 0');
    const raw = sig.signature.subarray(8);
    const spki = Buffer.concat([Buffer.from('30820532300b06096086480165030403110382052100', 'hex'), keys[i]!]);
    assert.ok(nodeVerify(null, m, createPublicKey({ key: spki, format: 'der', type: 'spki' }), raw), `node:crypto verifies line ${i + 1}`);
    assert.ok(ml_dsa44.verify(raw, m, keys[i]!), `noble verifies line ${i + 1}`);
  });
}

async function withWitness(
  fn: (h: CosignHarness) => Promise<void>,
  opts: Partial<HarnessOptions> & { cosignKeys?: KeyObject[] } = {},
): Promise<void> {
  const { dir, cleanup } = tempDir();
  const logVkey = (origin: string): string => ed25519NoteSigner(origin, logKeyC).verifier.vkey;
  const h = await startCosign({
    dir,
    logsDoc: logsDoc({ origin: MTC_ORIGIN, keys: [logVkey(MTC_ORIGIN)], qpd: 1 }, { origin: OTHER_ORIGIN, keys: [logVkey(OTHER_ORIGIN)] }),
    cosignKeys: [mlDsaA, cosignKeyC, mlDsaB],
    signSubtreeRate: null, // its own test below
    ...opts,
  });
  try {
    await fn(h);
  } finally {
    await h.close();
    cleanup();
  }
}

const tree14 = byteTree(14);

void test('200: Appendix B.4 message, one line per own ML-DSA-44 key in --cosign-key order, T = 0, verified by node:crypto and noble', async () => {
  await withWitness(async (h) => {
    const hash = tree14.mth(8n, 13n);
    assert.equal(encodeBase64(hash), 'zHN22R/ntnIJswWRWyGrSg8AcLQFgsdOxALoB0kSpR0=');
    assert.equal(Buffer.from(message(WITNESS_NAME, 0n, MTC_ORIGIN, 8n, 13n, hash)).toString('hex'), B4_MESSAGE_HEX);
    // B.5, the deterministic line of this message, verifies over B.4 (both implementations).
    const b5 = parseSignatureLine(B5_LINE);
    assert.ok(B5_LINE.startsWith(`— ${WITNESS_NAME} ${B5_LINE_BLOB_PREFIX}`));
    assert.ok(ml_dsa44.verify(b5.signature.subarray(8), Buffer.from(B4_MESSAGE_HEX, 'hex'), PK_A));
    assert.deepEqual(
      ml_dsa44.sign(Buffer.from(B4_MESSAGE_HEX, 'hex'), ml_dsa44.keygen(SEED_A).secretKey, { extraEntropy: false }),
      b5.signature.subarray(8),
    );

    // Both ML-DSA keys (and the Ed25519 one) cosigned the checkpoint: lines for A then B, no Ed25519 line.
    const both = reference(tree14, { mlDsa: [mlDsaB, mlDsaA], ed25519: [cosignKeyC] });
    const r = await expectStatus(h, body(tree14, 8n, 13n, both), 200);
    assert.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8');
    checkLines(r.text, { start: 8n, end: 13n, hash }, [PK_A, PK_B]);
    assert.ok(r.text.startsWith(`— ${WITNESS_NAME} ${B5_LINE_BLOB_PREFIX}`)); // key A's line: the B.5 prefix

    // Only key B's line on the checkpoint: only key B signs.
    const onlyB = reference(tree14, { mlDsa: [mlDsaB] });
    checkLines((await expectStatus(h, body(tree14, 8n, 13n, onlyB), 200)).text, { start: 8n, end: 13n, hash }, [PK_B]);

    // Any T on the reference cosignature; the whole tree (empty proof); a single leaf; start 0.
    const old = reference(tree14, { mlDsa: [mlDsaA], t: 1n });
    for (const [s, e] of [
      [0n, 14n],
      [13n, 14n],
      [0n, 5n],
      [12n, 14n],
      [4n, 8n],
    ] as const) {
      checkLines((await expectStatus(h, body(tree14, s, e, old), 200)).text, { start: s, end: e, hash: tree14.mth(s, e) }, [PK_A]);
    }
    // The answer does not depend on per-origin state: nothing was stored, and asking again works.
    assert.equal(await h.store.cosign.getOrigin(MTC_ORIGIN), undefined);
    await expectStatus(h, body(tree14, 8n, 13n, onlyB), 200);
  });
});

void test('on the signature pool (as the node runs it): checks and signatures on worker threads give the same answers', async () => {
  const pool = new SignaturePool(1, undefined, [mlDsaA, mlDsaB]);
  try {
    await withWitness(
      async (h) => {
        const note = reference(tree14, { mlDsa: [mlDsaA, mlDsaB] });
        const r = await expectStatus(h, body(tree14, 8n, 13n, note), 200);
        checkLines(r.text, { start: 8n, end: 13n, hash: tree14.mth(8n, 13n) }, [PK_A, PK_B]);
        const otherLine = reference(byteTree(15), { mlDsa: [mlDsaA] })
          .split('\n')
          .at(-2)!;
        await expectStatus(h, body(tree14, 8n, 13n, `${reference(tree14, { mlDsa: [mlDsaB] })}${otherLine}\n`), 403, /does not verify/);
      },
      { verifyPool: pool },
    );
  } finally {
    await pool.close();
  }
});

void test('row 1: a body that does not parse is 400', async () => {
  await withWitness(async (h) => {
    const note = reference(tree14, { mlDsa: [mlDsaA] });
    const good = body(tree14, 8n, 13n, note);
    await expectStatus(h, good.replace('subtree 8 13', 'subtree 08 13'), 400, /leading zeros/);
    await expectStatus(h, good.replace('subtree 8 13', 'old 8'), 400, /first line/);
    await expectStatus(h, good.replace('\n\n', '\r\n\n'), 400, /carriage return/);
    await expectStatus(h, good.slice(0, good.indexOf('\n\n') + 2), 400, /checkpoint/);
    await expectStatus(h, '', 400, /empty line/);
    const sixtyFour = formatSignSubtreeRequest(8n, 13n, tree14.mth(8n, 13n), [], note).replace(
      '\n\n',
      `\n${Array.from({ length: 64 }, () => encodeBase64(new Uint8Array(32))).join('\n')}\n\n`,
    );
    await expectStatus(h, sixtyFour, 400, /more than 63/);
  });
});

void test('row 2: [3, 5), start = end and start > end are 400 before the origin is looked at', async () => {
  await withWitness(async (h) => {
    const note = reference(tree14, { mlDsa: [mlDsaA] });
    const unknown = reference(byteTree(14), { origin: 'unknown.example/log', mlDsa: [mlDsaA] });
    for (const n of [note, unknown]) {
      await expectStatus(h, formatSignSubtreeRequest(3n, 5n, tree14.mth(4n, 5n), [], n), 400, /\[3, 5\) is not a valid subtree/);
      await expectStatus(
        h,
        formatSignSubtreeRequest(4n, 4n, tree14.mth(4n, 5n), [], n),
        400,
        /not a valid subtree: start must be below end/,
      );
      await expectStatus(h, formatSignSubtreeRequest(5n, 4n, tree14.mth(4n, 5n), [], n), 400, /not a valid subtree/);
      await expectStatus(h, formatSignSubtreeRequest(6n, 9n, tree14.mth(4n, 5n), [], n), 400, /not a valid subtree/);
    }
  });
});

void test('row 3: an unknown origin is 404, before the checkpoint and signature checks', async () => {
  await withWitness(async (h) => {
    const unknown = reference(tree14, { origin: 'unknown.example/log', extensions: ['ext'] });
    await expectStatus(h, body(tree14, 8n, 13n, unknown), 404, /unknown log/);
    await expectStatus(h, formatSignSubtreeRequest(8n, 16n, tree14.mth(8n, 13n), [], unknown), 404, /unknown log/);
  });
});

void test('row 4: extension lines or end beyond the checkpoint size are 400, before the signature check', async () => {
  await withWitness(async (h) => {
    const ext = reference(tree14, { extensions: ['an extension'] }); // no cosignature of ours either
    await expectStatus(h, body(tree14, 8n, 13n, ext), 400, /extension lines/);
    const note = reference(tree14);
    await expectStatus(
      h,
      formatSignSubtreeRequest(8n, 16n, tree14.mth(8n, 13n), [], note),
      400,
      /subtree end 16 is beyond the checkpoint size 14/,
    );
    await expectStatus(h, formatSignSubtreeRequest(14n, 15n, tree14.mth(8n, 13n), [], note), 400, /beyond the checkpoint size/);
  });
});

void test('row 5: no own ML-DSA-44 line (only our Ed25519 cosignature, a foreign key, another name), or a failing one, is 403', async () => {
  await withWitness(async (h) => {
    const onlyEd = reference(tree14, { ed25519: [cosignKeyC] });
    await expectStatus(h, body(tree14, 8n, 13n, onlyEd), 403, /no ML-DSA-44 cosignature/);
    await expectStatus(h, body(tree14, 8n, 13n, reference(tree14)), 403, /no ML-DSA-44 cosignature/);
    const foreign = reference(tree14, { mlDsa: [mlDsa44KeyFromSeed(seq(0x40))] });
    await expectStatus(h, body(tree14, 8n, 13n, foreign), 403, /no ML-DSA-44 cosignature/);
    const otherName = reference(tree14, { mlDsa: [mlDsaA], name: 'other.example/w' });
    await expectStatus(h, body(tree14, 8n, 13n, otherName), 403, /no ML-DSA-44 cosignature/);
    // Our key A's line over another checkpoint (another root) does not verify over this one.
    const otherTree = byteTree(15);
    const otherLine = reference(otherTree, { mlDsa: [mlDsaA] })
      .split('\n')
      .at(-2)!;
    const moved = `${reference(tree14)}${otherLine}\n`;
    await expectStatus(h, body(tree14, 8n, 13n, moved), 403, /does not verify/);
    // One good line and one bad line of ours: refused.
    const good = reference(tree14, { mlDsa: [mlDsaB] });
    await expectStatus(h, body(tree14, 8n, 13n, `${good}${otherLine}\n`), 403, /does not verify/);
    // A bit flipped in the signature.
    const lines = reference(tree14, { mlDsa: [mlDsaA] }).split('\n');
    const sig = parseSignatureLine(lines.at(-2)!);
    const flipped = Uint8Array.from(sig.signature);
    flipped[100]! ^= 0x04;
    lines[lines.length - 2] =
      `— ${WITNESS_NAME} ${encodeBase64(Buffer.concat([Buffer.from(B5_LINE_BLOB_PREFIX.slice(0, 8), 'base64').subarray(0, 4), flipped]))}`;
    await expectStatus(h, body(tree14, 8n, 13n, lines.join('\n')), 403, /does not verify/);
  });
});

void test('row 6: a proof that does not verify is 422 (flipped bit, extra hash, missing hash, wrong subtree hash)', async () => {
  await withWitness(async (h) => {
    const note = reference(tree14, { mlDsa: [mlDsaA] });
    const proof = subtreeConsistencyProof(tree14, 8n, 13n);
    const flipped = proof.map((p, i) => (i === 2 ? Uint8Array.from(p, (b, j) => (j === 7 ? b ^ 1 : b)) : p));
    await expectStatus(h, body(tree14, 8n, 13n, note, flipped), 422, /bad subtree consistency proof from \[8, 13\) to size 14/);
    await expectStatus(h, body(tree14, 8n, 13n, note, [...proof, proof[0]!]), 422);
    await expectStatus(h, body(tree14, 8n, 13n, note, proof.slice(0, -1)), 422);
    await expectStatus(h, body(tree14, 8n, 13n, note, []), 422);
    await expectStatus(h, formatSignSubtreeRequest(8n, 13n, tree14.mth(8n, 12n), proof, note), 422);
    await expectStatus(h, formatSignSubtreeRequest(0n, 14n, tree14.mth(0n, 13n), [], note), 422);
  });
});

void test('uniform-leaf checkpoints of 2^32 + 5 and 2^53 − 1 leaves: BigInt indices end to end; 2^53 is refused', async () => {
  await withWitness(async (h) => {
    for (const size of [(1n << 32n) + 5n, BigInt(MAX_TREE_SIZE)]) {
      const tree = uniformTree(size);
      const note = reference(tree, { mlDsa: [mlDsaA] });
      const last = ((size - 1n) >> 1n) << 1n; // an aligned pair at the right edge (or the last leaf alone)
      for (const [s, e] of [
        [1n << 32n, (1n << 32n) + 4n],
        [1n << 31n, 1n << 32n],
        [last, size],
        [0n, size],
      ] as const) {
        const r = await expectStatus(h, body(tree, s, e, note), 200);
        checkLines(r.text, { start: s, end: e, hash: tree.mth(s, e) }, [PK_A]);
      }
    }
    // The proof of [2^32, 2^32 + 4) does not pass for [0, 4) (32-bit index arithmetic would alias
    // them). Only where the trees differ in shape: with every sibling on both paths complete, as in
    // 2^53 − 1, a uniform tree cannot tell the two positions apart (H(a, a) is symmetric).
    const n = (1n << 32n) + 5n;
    const tree = uniformTree(n);
    const p = subtreeConsistencyProof(tree, 1n << 32n, (1n << 32n) + 4n);
    const note = reference(tree, { mlDsa: [mlDsaA] });
    await expectStatus(h, formatSignSubtreeRequest(1n << 32n, (1n << 32n) + 4n, tree.mth(0n, 4n), p, note), 200);
    await expectStatus(h, formatSignSubtreeRequest(0n, 4n, tree.mth(0n, 4n), p, note), 422);
    const max = BigInt(MAX_TREE_SIZE);
    const tooBig = reference(uniformTree(max), { mlDsa: [mlDsaA] }).replace(`\n${max}\n`, `\n${max + 1n}\n`);
    await expectStatus(h, formatSignSubtreeRequest(0n, 1n, new Uint8Array(32), [], tooBig), 400, /2\^53/);
    const atMax = reference(uniformTree(max), { mlDsa: [mlDsaA] });
    await expectStatus(h, formatSignSubtreeRequest(0n, max + 1n, new Uint8Array(32), [], atMax), 400, /beyond the checkpoint size/);
  });
});

void test('random names, origins, sizes and subtrees: every line verifies with node:crypto and noble', async () => {
  const rnd = (n: number): number => Math.floor(Math.random() * n);
  for (let round = 0; round < 2; round++) {
    const name = `w${rnd(1e6)}.example/${'x'.repeat(rnd(40))}`;
    const origin = `log${rnd(1e6)}.example/${'y'.repeat(1 + rnd(200))}`;
    const { dir, cleanup } = tempDir();
    const h = await startCosign({
      dir,
      signSubtreeRate: null,
      name,
      logsDoc: logsDoc({ origin, keys: [ed25519NoteSigner(origin, logKeyC).verifier.vkey] }),
      cosignKeys: [mlDsaA, mlDsaB],
    });
    try {
      for (let i = 0; i < 4; i++) {
        const n = 1 + rnd(200);
        const tree = byteTree(Math.min(n, 256));
        const end = 1n + BigInt(rnd(Number(tree.size)));
        let width = 1n;
        while (width * 2n <= end && rnd(3) > 0) width *= 2n;
        const start = ((end - 1n) / width) * width;
        const note = reference(tree, { origin, name, mlDsa: [mlDsaA, mlDsaB] });
        const r = await expectStatus(h, body(tree, start, end, note), 200);
        checkLines(r.text, { origin, start, end, hash: tree.mth(start, end) }, [PK_A, PK_B], name);
      }
    } finally {
      await h.close();
      cleanup();
    }
  }
});

void test('/openapi.json describes POST /sign-subtree beside /add-checkpoint', async () => {
  await withWitness(
    async (h) => {
      const doc = JSON.parse((await h.get('/openapi.json')).text) as { paths: Record<string, { post?: { summary?: string } }> };
      assert.match(doc.paths['/sign-subtree']?.post?.summary ?? '', /sign-subtree.*ML-DSA-44 subtree\/v1/);
      assert.ok(doc.paths['/add-checkpoint']?.post !== undefined);
    },
    { server: { openapi: { title: 't', version: '0' } } },
  );
});

void test('no ML-DSA-44 key, or --no-sign-subtree: the route is absent (404 not_found like any unknown path)', async () => {
  const note = reference(tree14, { mlDsa: [mlDsaA], ed25519: [cosignKeyC] });
  for (const opts of [{ cosignKeys: [cosignKeyC] }, { cosignKeys: [mlDsaA], signSubtree: false }]) {
    await withWitness(async (h) => {
      const r = await post(h, body(tree14, 8n, 13n, note));
      assert.equal(r.status, 404);
      assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.equal((JSON.parse(r.text) as { code: string }).code, 'not_found');
    }, opts);
  }
});

void test('its own per-client rate limit: 429 with Retry-After once the burst is spent; the metric counts outcomes', async () => {
  await withWitness(
    async (h) => {
      const note = reference(tree14, { mlDsa: [mlDsaA] });
      await expectStatus(h, body(tree14, 8n, 13n, note), 200);
      await expectStatus(h, 'garbage', 400);
      await expectStatus(h, body(tree14, 3n, 5n, note), 400); // every request takes a token, valid or not
      const r = await expectStatus(h, body(tree14, 8n, 13n, note), 429, /too many sign-subtree requests/);
      const retryAfter = Number(r.headers.get('retry-after'));
      assert.ok(retryAfter >= 990 && retryAfter <= 1000, `Retry-After ${retryAfter}: the whole seconds until the next token`);
      // add-checkpoint is not limited by it
      assert.notEqual((await h.post('old 0\n\nbad')).status, 429);
      const m = (await h.get('/metrics')).text;
      assert.match(m, /sign_subtree_requests_total\{origin="example.com\/mtc-log",outcome="signed"\} 1\n/);
      assert.match(m, /sign_subtree_requests_total\{origin="other",outcome="malformed_request"\} 1\n/);
      assert.match(m, /sign_subtree_requests_total\{origin="other",outcome="invalid_subtree"\} 1\n/);
      assert.match(m, /sign_subtree_requests_total\{origin="other",outcome="rate_limited"\} 1\n/);
    },
    { signSubtreeRate: { rps: 0.001, burst: 3 } },
  );
});

void test('the default --sign-subtree-rate is 2:10 per client: 10 requests pass, then 429 with Retry-After 1', async () => {
  await withWitness(
    async (h) => {
      for (let i = 0; i < 10; i++) await expectStatus(h, 'garbage', 400);
      // A token comes back every 500 ms: a few more requests are enough to empty the bucket again.
      let refused: HttpResult | undefined;
      for (let i = 0; i < 10 && refused === undefined; i++) {
        const r = await post(h, 'garbage');
        if (r.status === 429) refused = r;
        else assert.equal(r.status, 400);
      }
      assert.ok(refused !== undefined, 'refused once the burst of 10 is spent');
      assert.equal(refused.headers.get('retry-after'), '1');
      assert.match(refused.text, /^too many sign-subtree requests; retry in 1 s\n$/);
    },
    { signSubtreeRate: undefined },
  );
});

void test('end to end: the monitoring body after add-checkpoint is a reference checkpoint sign-subtree accepts; qpd does not apply', async () => {
  await withWitness(async (h) => {
    const text = formatCheckpoint({ origin: MTC_ORIGIN, size: 14, rootHash: tree14.mth(0n, 14n), extensions: [] });
    const logNote = signNote(text, [ed25519NoteSigner(MTC_ORIGIN, logKeyC)]);
    const added = await h.post(formatAddCheckpointRequest(0, [], logNote));
    assert.equal(added.status, 200, added.text);
    assert.equal(added.text.split('\n').length - 1, 3, 'one line per cosign key (ML-DSA-44, Ed25519, ML-DSA-44)');
    const monitoring = await h.get(`/${sha256Hex(MTC_ORIGIN)}/checkpoint`);
    assert.equal(monitoring.status, 200);
    assert.equal(monitoring.text, logNote + added.text);
    // The origin's qpd of 1 is spent by that add-checkpoint; sign-subtree does not count against it.
    for (const [s, e] of [
      [8n, 13n],
      [0n, 8n],
      [12n, 14n],
    ] as const) {
      const r = await expectStatus(h, body(tree14, s, e, monitoring.text), 200);
      checkLines(r.text, { start: s, end: e, hash: tree14.mth(s, e) }, [PK_A, PK_B]);
    }
  });
});
