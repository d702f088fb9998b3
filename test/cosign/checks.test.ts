// SPEC §5's check table, row by row and in order, over loopback HTTP; sigsum-go's expectation
// sequence; cosignature time; several cosign keys; the request Content-Type is ignored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes, generateEd25519 } from '../../src/crypto/ed25519.ts';
import { encodeBase64 } from '../../src/encoding/base64.ts';
import { sha256Hex } from '../../src/crypto/sha256.ts';
import { formatNote, parseNote, signNote, verifyNote } from '../../src/note/signed-note.ts';
import { ed25519NoteSigner, parseVkey } from '../../src/note/vkey.ts';
import { parseCosignatureLine } from '../../src/note/cosignature.ts';
import { EMPTY_ROOT } from '../../src/tlog/hash.ts';
import { formatAddCheckpointRequest } from '../../src/note/tlog-witness.ts';
import { createCosignRole } from '../../src/cosign/role.ts';
import { CosignConfigError } from '../../src/cosign/errors.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { LOG_NAME, SyntheticLog, WITNESS_NAME, cosignKeyC, logKeyC, logsDoc, seq, startCosign } from '../helpers/cosign-harness.ts';
import type { CosignHarness } from '../helpers/cosign-harness.ts';
import { tempDir } from '../helpers/tmp.ts';
import { join } from 'node:path';

const T0 = 1_800_000_000;

/** The same note with its first signature's bytes altered (still canonical base64). */
function tamper(signedNote: string, which = 0): string {
  const note = parseNote(signedNote);
  const sigs = note.signatures.map((s, i) => {
    if (i !== which) return s;
    const bytes = Uint8Array.from(s.signature);
    bytes[10]! ^= 0x01;
    return { ...s, signature: bytes };
  });
  return formatNote({ text: note.text, signatures: sigs });
}

interface Logs {
  a: SyntheticLog;
  b: SyntheticLog;
  q: SyntheticLog;
  r: SyntheticLog;
  rotated: SyntheticLog;
}

async function withRole(
  fn: (h: CosignHarness, clock: { now: number }, logs: Logs) => Promise<void>,
  extra: { cosignKeys?: ReturnType<typeof generateEd25519>['privateKey'][] } = {},
): Promise<void> {
  const { dir, cleanup } = tempDir();
  const clock = { now: T0 * 1000 };
  const logs = {
    a: new SyntheticLog(LOG_NAME, logKeyC),
    b: new SyntheticLog('b.example/log', ed25519KeyFromSeed(seq(0x60))),
    q: new SyntheticLog('quota.example/log', ed25519KeyFromSeed(seq(0x80))),
    r: new SyntheticLog('rotating.example/log', ed25519KeyFromSeed(seq(0xa0))),
  };
  const rotated = new SyntheticLog('rotating.example/log', ed25519KeyFromSeed(seq(0xc0)));
  const h = await startCosign({
    dir,
    logsDoc: logsDoc(
      { origin: logs.a.origin, keys: [logs.a.vkey] },
      { origin: logs.b.origin, keys: [logs.b.vkey] },
      { origin: logs.q.origin, keys: [logs.q.vkey], qpd: 24 },
      { origin: logs.r.origin, keys: [logs.r.vkey, rotated.vkey] },
    ),
    now: () => clock.now,
    ...extra,
  });
  try {
    await fn(h, clock, { ...logs, rotated });
  } finally {
    await h.close();
    cleanup();
  }
}

async function expectStatus(h: CosignHarness, body: string, status: number, text?: string | RegExp): Promise<string> {
  const r = await h.post(body);
  assert.equal(r.status, status, r.text);
  if (typeof text === 'string') assert.equal(r.text, text);
  else if (text !== undefined) assert.match(r.text, text);
  if (status !== 200) {
    assert.match(r.text, /^[^\n]*\n$/, 'one line');
    assert.equal(r.headers.get('content-type'), status === 409 ? 'text/x.tlog.size' : 'text/plain; charset=utf-8');
  }
  return r.text;
}

function evidence(h: CosignHarness): { origin: string; note: string; reason: string; at: number }[] {
  const db = new Database(h.dbPath, { readonly: true });
  try {
    return db.prepare('SELECT origin, note, reason, at FROM evidence ORDER BY id').all() as {
      origin: string;
      note: string;
      reason: string;
      at: number;
    }[];
  } finally {
    db.close();
  }
}

void test('rows 1–3: parse (400) before origin (404) before signatures (403)', async () => {
  await withRole(async (h, _clock, { a, r, rotated }) => {
    const stranger = new SyntheticLog('unknown.example/log', generateEd25519().privateKey);
    // 1: malformed wins over an unknown origin
    await expectStatus(h, stranger.request(0, 3).replace('old 0', 'old 00'), 400, /old <size>/);
    // 2: unknown origin wins over a bad signature and a bad proof
    await expectStatus(h, tamper(formatAddCheckpointRequest(2, [new Uint8Array(32)], stranger.checkpoint(3))), 404, /unknown log/);
    // 3a: a known key whose signature fails → 403, even with old > size (row 5) pending
    await expectStatus(h, formatAddCheckpointRequest(9, [], tamper(a.checkpoint(3))), 403, /invalid signature/);
    // 3b: no signature by a known key (same name, other key → other key ID: ignored)
    const impostor = new SyntheticLog(LOG_NAME, generateEd25519().privateKey);
    await expectStatus(h, impostor.request(0, 3), 403, /no signature by a known key/);
    const otherName = new SyntheticLog(LOG_NAME, logKeyC, 'other.example/name');
    await expectStatus(h, otherName.request(0, 3), 403);
    // 3c: unknown signatures next to a valid one are ignored
    const text = a.text(2);
    const note = signNote(text, [
      ed25519NoteSigner('someone.example/else', generateEd25519().privateKey),
      ed25519NoteSigner(LOG_NAME, logKeyC),
    ]);
    await expectStatus(h, formatAddCheckpointRequest(0, [], note), 200);
    // 3d: a log with two keys (rotation): either verifies; one good and one failing known signature → 403
    await expectStatus(h, r.request(0, 2), 200);
    await expectStatus(h, rotated.request(2, 3), 200);
    const both = signNote(r.text(4), [ed25519NoteSigner(r.keyName, r.key), ed25519NoteSigner(rotated.keyName, rotated.key)]);
    await expectStatus(h, formatAddCheckpointRequest(3, r.proof(3, 4), tamper(both, 1)), 403, /invalid signature/);
    await expectStatus(h, formatAddCheckpointRequest(3, r.proof(3, 4), both), 200);
    // stored: the log signature lines that verified (both), not the unknown one
    const stored = await h.store.cosign.getOrigin(LOG_NAME);
    assert.equal(stored?.checkpoint, a.checkpoint(2));
    const rs = await h.store.cosign.getOrigin(r.origin);
    assert.equal(rs?.checkpoint, both);
  });
});

void test('row 4: quota counts only requests that reach it; 429 before rows 5–9; Retry-After in whole seconds', async () => {
  await withRole(async (h, clock, { q }) => {
    // qpd 24: capacity 1, one token per hour. Refused requests before check 4 spend nothing.
    for (let i = 0; i < 3; i++) await expectStatus(h, tamper(q.request(0, 2)), 403);
    await expectStatus(h, q.request(0, 2).replace('old 0', 'old x'), 400);
    await expectStatus(h, q.request(0, 2), 200);
    const r = await h.post(formatAddCheckpointRequest(9, [], q.checkpoint(3))); // old > size, but 429 comes first
    assert.equal(r.status, 429);
    assert.equal(r.headers.get('retry-after'), '3600');
    assert.match(r.text, /^quota of 24 requests per day exceeded[^\n]*\n$/);
    clock.now += 1_800_000;
    const r2 = await h.post(q.request(2, 4));
    assert.equal(r2.status, 429);
    assert.equal(r2.headers.get('retry-after'), '1800');
    clock.now += 1_799_500;
    assert.equal((await h.post(q.request(2, 4))).headers.get('retry-after'), '1');
    clock.now += 500;
    // This one reaches check 4 and spends the token, then fails check 5.
    await expectStatus(h, formatAddCheckpointRequest(9, [], q.checkpoint(3)), 400, /old size 9 is larger than the checkpoint size 3/);
    assert.equal((await h.post(q.request(2, 4))).status, 429);
    clock.now += 3_600_000;
    await expectStatus(h, q.request(2, 4), 200);
    const m = await h.get('/metrics');
    assert.match(m.text, /cosign_add_checkpoint_total\{origin="quota.example\/log",outcome="quota_exceeded"\} 4/);
  });
});

void test('rows 5–6: old > size is 400 before 409; 409 (text/x.tlog.size, "<size>\\n") before every 422', async () => {
  await withRole(async (h, _clock, { a }) => {
    await expectStatus(h, formatAddCheckpointRequest(4, a.proof(3, 4), a.checkpoint(3)), 400, /larger than the checkpoint size/);
    // stored 0: old 3 with a bad proof is 409 "0", not 422
    await expectStatus(h, formatAddCheckpointRequest(3, [new Uint8Array(32)], a.checkpoint(8)), 409, '0\n');
    await expectStatus(h, a.request(0, 5), 200);
    // stored 5: size 0 with a bad root, old 0 → 409 "5" before row 7
    await expectStatus(h, formatAddCheckpointRequest(0, [], a.checkpoint(0, new Uint8Array(32).fill(1))), 409, '5\n');
    // stored 5: old 0 with a proof → 409 before row 8
    await expectStatus(h, formatAddCheckpointRequest(0, [new Uint8Array(32)], a.checkpoint(6)), 409, '5\n');
    await expectStatus(h, a.request(3, 6), 409, '5\n');
    await expectStatus(h, a.request(5, 6), 200);
  });
});

void test('rows 7–9: 422 cases, in order; evidence only where the log signature alone contradicts the stored state', async () => {
  await withRole(async (h, _clock, { b }) => {
    // 7: size 0 with a root other than SHA-256("") (before row 8: a proof is also present)
    await expectStatus(
      h,
      formatAddCheckpointRequest(0, [new Uint8Array(32)], b.checkpoint(0, new Uint8Array(32).fill(7))),
      422,
      /size 0 with a root other than the empty-tree root/,
    );
    // size 0 with the empty root is fine
    assert.equal(encodeBase64(b.root(0)), encodeBase64(EMPTY_ROOT));
    await expectStatus(h, b.request(0, 0), 200);
    // 8: old 0 with a non-empty proof
    await expectStatus(
      h,
      formatAddCheckpointRequest(0, [new Uint8Array(32)], b.checkpoint(4)),
      422,
      /old size 0 needs an empty consistency proof/,
    );
    await expectStatus(h, b.request(0, 4), 200);
    // 9: a bad proof; a missing proof; a proof for the same size; the same size with another root
    const good = b.proof(4, 7);
    const bad = good.map((p, i) => (i === good.length - 1 ? new Uint8Array(32) : p));
    await expectStatus(h, formatAddCheckpointRequest(4, bad, b.checkpoint(7)), 422, /bad consistency proof from size 4 to 7/);
    await expectStatus(h, formatAddCheckpointRequest(4, [], b.checkpoint(7)), 422, /consistency proof/);
    await expectStatus(h, formatAddCheckpointRequest(4, [new Uint8Array(32)], b.checkpoint(4)), 422, /between equal sizes must be empty/);
    const forked = b.checkpoint(4, new Uint8Array(32).fill(9));
    await expectStatus(h, formatAddCheckpointRequest(4, [], forked), 422, /size 4 was cosigned with a different root/);
    // Nothing moved: 4 → 7 with the good proof still works.
    await expectStatus(h, formatAddCheckpointRequest(4, good, b.checkpoint(7)), 200);
    // Evidence: the size-0 checkpoint with another root and the fork at the stored size; the
    // failing and missing proofs from 4 to 7 are the client's, not the log's (SPEC §5).
    const ev = evidence(h);
    assert.deepEqual(
      ev.map((e) => e.origin),
      Array(2).fill(b.origin),
    );
    assert.equal(ev[0]!.reason, 'size 0 with a root other than the empty-tree root');
    assert.equal(ev[1]!.note, forked);
    assert.equal(ev[1]!.reason, `size 4 was cosigned with root ${encodeBase64(b.root(4))}; the log signed another root for it`);
    assert.equal(ev[1]!.at, T0);
    const m = await h.get('/metrics');
    assert.match(m.text, /cosign_evidence_total\{origin="b.example\/log"\} 2/);
    assert.match(m.text, /cosign_origin_size\{origin="b.example\/log"\} 7/);
    // An unknown origin never becomes a label.
    await expectStatus(h, new SyntheticLog('x.example/y', generateEd25519().privateKey).request(0, 1), 404);
    assert.match((await h.get('/metrics')).text, /cosign_add_checkpoint_total\{origin="_unknown",outcome="unknown_origin"\} 1/);
    assert.doesNotMatch((await h.get('/metrics')).text, /x\.example/);
  });
});

void test('sigsum-go witness-add-checkpoint-test: 0→2:200, 1→2:409 "2", 2→4:200, 4→4:200, 4→5:200', async () => {
  const { dir, cleanup } = tempDir();
  const logKey = ed25519KeyFromSeed(seq(0x11));
  const origin = `sigsum.org/v1/tree/${sha256Hex(new Uint8Array(32).fill(0x11))}`;
  const log = new SyntheticLog(origin, logKey);
  const witness = generateEd25519();
  const name = `sigsum.org/v1/witness/${sha256Hex(witness.publicKey)}`;
  const h = await startCosign({ dir, name, cosignKeys: [witness.privateKey], logsDoc: logsDoc({ origin, keys: [log.vkey] }) });
  try {
    const line = new RegExp(`^— sigsum\\.org/v1/witness/[0-9a-f]{64} [A-Za-z0-9/+]{102}==\\n$`);
    for (const [old, size, status, text] of [
      [0, 2, 200, line],
      [1, 2, 409, '2\n'],
      [2, 4, 200, line],
      [4, 4, 200, line],
      [4, 5, 200, line],
    ] as const) {
      await expectStatus(h, log.request(old, size), status, text);
    }
  } finally {
    await h.close();
    cleanup();
  }
});

void test('cosignature time = max(now, last issued), persisted; several cosign keys give one verifying line each', async () => {
  const second = ed25519KeyFromSeed(seq(0xe0));
  await withRole(
    async (h, clock, { a }) => {
      const vkeys = h.role.healthInfo().cosignVkeys;
      assert.equal(vkeys.length, 2);
      const t1 = await expectStatus(h, a.request(0, 3), 200);
      const lines = t1.split('\n').filter((l) => l !== '');
      assert.equal(lines.length, 2);
      const v = verifyNote(
        a.checkpoint(3) + t1,
        vkeys.map((k) => parseVkey(k)),
      );
      assert.equal(v.verified.length, 2);
      assert.deepEqual(
        lines.map((l) => parseCosignatureLine(l).timestamp),
        [BigInt(T0), BigInt(T0)],
      );
      clock.now -= 3_600_000; // the clock steps back an hour
      const t2 = await expectStatus(h, a.request(3, 4), 200);
      assert.equal(parseCosignatureLine(t2.split('\n')[0]!).timestamp, BigInt(T0));
      clock.now += 7_200_000;
      const t3 = await expectStatus(h, a.request(4, 5), 200);
      assert.equal(parseCosignatureLine(t3.split('\n')[0]!).timestamp, BigInt(T0 + 3600));
      assert.equal((await h.store.cosign.getOrigin(LOG_NAME))?.lastTime, T0 + 3600);
    },
    { cosignKeys: [cosignKeyC, second] },
  );
});

void test('the request Content-Type is ignored (no 415, no JSON parsing)', async () => {
  await withRole(async (h, _clock, { a }) => {
    let r = await h.post(a.request(0, 1), { 'content-type': 'application/json' });
    assert.equal(r.status, 200);
    r = await h.post(new TextEncoder().encode(a.request(1, 2))); // no Content-Type at all
    assert.equal(r.status, 200);
    r = await h.post(a.request(2, 3), { 'content-type': 'application/x-www-form-urlencoded' });
    assert.equal(r.status, 200);
    r = await h.post('{"old": 3}', { 'content-type': 'application/json' });
    assert.equal(r.status, 400);
    assert.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8');
    r = await h.post(new Uint8Array(0));
    assert.equal(r.status, 400);
    // The shared body cap still applies (problem+json from the shared layer).
    r = await h.post('x'.repeat(70_000));
    assert.equal(r.status, 413);
  });
});

void test('start-up: cosign keys must be distinct Ed25519 keys and not the witness key; the name is checked', async () => {
  const { dir, cleanup } = tempDir();
  const store = SqliteStore.open(join(dir, 'w.db'));
  try {
    const base = { store: store.cosign, name: WITNESS_NAME, watch: false };
    const refused = async (opts: Parameters<typeof createCosignRole>[0], code: string): Promise<void> => {
      await assert.rejects(createCosignRole(opts), (e: unknown) => e instanceof CosignConfigError && e.code === code);
    };
    await refused({ ...base, cosignKeys: [] }, 'invalid_cosign_key');
    await refused({ ...base, cosignKeys: [cosignKeyC, ed25519KeyFromSeed(seq(0))] }, 'invalid_cosign_key');
    await refused({ ...base, cosignKeys: [cosignKeyC], witnessPublicKey: ed25519PublicKeyBytes(cosignKeyC) }, 'invalid_cosign_key');
    await refused({ ...base, cosignKeys: [generateEd25519().privateKey], name: 'no-dot/name' }, 'invalid_name');
    const role = await createCosignRole({ ...base, cosignKeys: [cosignKeyC], witnessPublicKey: generateEd25519().publicKey });
    assert.deepEqual(role.healthInfo(), {
      cosignVkey: 'witness.example/w1+e75f6532+BAOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4',
      cosignVkeys: ['witness.example/w1+e75f6532+BAOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4'],
      origins: [],
    });
    role.stop();
  } finally {
    await store.close();
    cleanup();
  }
});
