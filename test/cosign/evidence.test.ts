// SPEC §5, evidence: kept only where the log's own signature alone proves misbehaviour against what
// this witness stored (size 0 with a non-empty root; the stored size with another root), checked
// right after the signature step whatever `old` says; never for a client's failing consistency
// proof; deduplicated by checkpoint hash; at most a bound of rows per origin, oldest evicted first.
// Reproduction (issue 16 item 3): a real, published checkpoint above the stored size replayed with
// `old` = the stored size and a garbage proof used to write one evidence row (whole note, unknown
// signature lines included), one warning and one metric increment per request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { ed25519KeyFromSeed, generateEd25519 } from '../../src/crypto/ed25519.ts';
import { sha256 } from '../../src/crypto/sha256.ts';
import { CosignService } from '../../src/cosign/service.ts';
import { parseLogsConfig } from '../../src/cosign/logs.ts';
import { encodeBase64 } from '../../src/encoding/base64.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { EVIDENCE_LIMIT } from '../../src/store/types.ts';
import type { CosignStateStorage, EvidenceRecord } from '../../src/store/types.ts';
import { join } from 'node:path';
import { formatAddCheckpointRequest } from '../../src/note/tlog-witness.ts';
import { signNote } from '../../src/note/signed-note.ts';
import { ed25519NoteSigner } from '../../src/note/vkey.ts';
import { LOG_NAME, SyntheticLog, WITNESS_NAME, cosignKeyC, logKeyC, logsDoc, seq, startCosign } from '../helpers/cosign-harness.ts';
import type { CosignHarness } from '../helpers/cosign-harness.ts';
import { tempDir } from '../helpers/tmp.ts';

const T0 = 1_800_000_000;

/** Evidence rows straight from the SQLite file (works on every schema version). */
function evidenceRows(h: CosignHarness): { origin: string; note: string; reason: string }[] {
  const db = new Database(h.dbPath, { readonly: true });
  try {
    return db.prepare('SELECT origin, note, reason FROM evidence ORDER BY id').all() as { origin: string; note: string; reason: string }[];
  } finally {
    db.close();
  }
}

/** Bytes on disk of the store: the database file and its write-ahead log. */
function storeBytes(h: CosignHarness): number {
  let n = 0;
  for (const p of [h.dbPath, `${h.dbPath}-wal`]) {
    try {
      n += statSync(p).size;
    } catch {
      // no WAL file
    }
  }
  return n;
}

interface Warned {
  obj: object;
  msg: string;
}

/** The log's second key (both are known: a log rotating keys signs with either). */
const rotatedKey = ed25519KeyFromSeed(seq(0xc0));

async function withHarness(
  fn: (h: CosignHarness, log: SyntheticLog, warned: Warned[]) => Promise<void>,
  extra: { evidenceLimit?: number } = {},
): Promise<void> {
  const { dir, cleanup } = tempDir();
  const log = new SyntheticLog(LOG_NAME, logKeyC);
  const rotated = new SyntheticLog(LOG_NAME, rotatedKey);
  const warned: Warned[] = [];
  const h = await startCosign({
    dir,
    logsDoc: logsDoc({ origin: log.origin, keys: [log.vkey, rotated.vkey] }),
    now: () => T0 * 1000,
    log: { info: () => undefined, warn: (obj, msg) => warned.push({ obj, msg }) },
    ...extra,
  });
  try {
    await fn(h, log, warned);
  } finally {
    await h.close();
    cleanup();
  }
}

void test('1 000 replays of a published checkpoint above the stored size with a garbage proof store nothing, log nothing, count nothing', async () => {
  await withHarness(async (h, log, warned) => {
    assert.equal((await h.post(log.request(0, 5))).status, 200);
    // A checkpoint the log really published (size 9 > stored 5), padded with unknown signature
    // lines (they used to be stored too), sent with old = the stored size and a garbage proof.
    const strangers = Array.from({ length: 8 }, (_, i) => ed25519NoteSigner(`junk${i}.example/k`, generateEd25519().privateKey));
    const published = signNote(log.text(9), [ed25519NoteSigner(log.keyName, log.key), ...strangers]);
    // Start from a checkpointed WAL: pages written before (the schema the migrations created,
    // the cosigned state) would otherwise count twice when the checkpointer copies them into the
    // database file, and their number grows with the schema.
    const db = new Database(h.dbPath);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    const before = storeBytes(h);
    const garbage = (i: number): Uint8Array[] => Array.from({ length: 1 + (i % 5) }, (_, k) => new Uint8Array(32).fill((i + k) & 0xff));
    const N = 1000;
    for (let i = 0; i < N; i += 10) {
      const rs = await Promise.all(Array.from({ length: 10 }, (_, k) => h.post(formatAddCheckpointRequest(5, garbage(i + k), published))));
      for (const r of rs) {
        assert.equal(r.status, 422, r.text);
        assert.match(r.text, /bad consistency proof from size 5 to 9/);
      }
    }
    const rows = evidenceRows(h);
    const grown = storeBytes(h) - before;
    const measured = `${rows.length} evidence rows (${rows.reduce((n, r) => n + r.note.length + r.reason.length, 0)} bytes), the store grew by ${grown} bytes, ${warned.length} warnings`;
    assert.equal(rows.length, 0, `no evidence row for a client-supplied failing proof: ${measured}`);
    // Slack for the cosigned state being checkpointed from the WAL into the database file.
    assert.ok(grown < 64 * 1024, measured);
    assert.equal(warned.length, 0, measured);
    const metrics = (await h.get('/metrics')).text;
    assert.doesNotMatch(metrics, /cosign_evidence_total\{origin="example.com\/log"\}/);
    assert.match(metrics, /cosign_add_checkpoint_total\{origin="example.com\/log",outcome="inconsistent"\} 1000/);
    // The witness still moves on with a real proof.
    assert.equal((await h.post(log.request(5, 9))).status, 200);
  });
});

const hashHex = (text: string): string => Buffer.from(sha256(new TextEncoder().encode(text))).toString('hex');
const shape = (rows: EvidenceRecord[]) =>
  rows.map((r) => ({ hash: r.hash === undefined ? null : Buffer.from(r.hash).toString('hex'), note: r.note, reason: r.reason }));

void test('both kinds of evidence are recorded once per distinct checkpoint, whatever `old` says, with only the log signature lines; every request gets its normal answer', async () => {
  await withHarness(async (h, log, warned) => {
    assert.equal((await h.post(log.request(0, 4))).status, 200);
    const rotated = new SyntheticLog(LOG_NAME, rotatedKey);
    const junk = ed25519NoteSigner('junk.example/k', generateEd25519().privateKey);
    const forkText = log.text(4, new Uint8Array(32).fill(9));
    const otherForkText = log.text(4, new Uint8Array(32).fill(10));
    const emptyText = log.text(0, new Uint8Array(32).fill(7));
    const logLine = ed25519NoteSigner(log.keyName, log.key);
    // The stored size with another root, validly log-signed, sent with unknown signature lines.
    const fork = signNote(forkText, [logLine, junk]);
    // The same checkpoint text signed by the log's other key: the same checkpoint, no new row.
    const forkRotated = signNote(forkText, [ed25519NoteSigner(rotated.keyName, rotated.key)]);
    const otherFork = signNote(otherForkText, [logLine]);
    const empty = signNote(emptyText, [junk, logLine]);
    const garbage = [new Uint8Array(32).fill(3)];
    const cases: [string, number, Uint8Array[], number, string | RegExp][] = [
      [fork, 0, [], 409, '4\n'],
      [fork, 1, garbage, 409, '4\n'],
      [fork, 3, garbage, 409, '4\n'],
      [fork, 4, [], 422, /size 4 was cosigned with a different root/],
      [fork, 4, garbage, 422, /size 4 was cosigned with a different root/],
      [fork, 5, [], 400, /old size 5 is larger than the checkpoint size 4/],
      [forkRotated, 4, [], 422, /size 4 was cosigned with a different root/],
      [forkRotated, 2, [], 409, '4\n'],
      [otherFork, 4, [], 422, /size 4 was cosigned with a different root/],
      [otherFork, 0, [], 409, '4\n'],
      [empty, 0, [], 409, '4\n'],
      [empty, 0, garbage, 409, '4\n'],
      [empty, 4, [], 400, /old size 4 is larger than the checkpoint size 0/],
    ];
    for (let round = 0; round < 5; round++) {
      for (const [note, old, proof, status, text] of cases) {
        const r = await h.post(formatAddCheckpointRequest(old, proof, note));
        assert.equal(r.status, status, `old ${old}: ${r.text}`);
        if (typeof text === 'string') assert.equal(r.text, text);
        else assert.match(r.text, text);
      }
    }
    const storedRoot = encodeBase64(log.root(4));
    assert.deepEqual(shape(await h.store.cosign.listEvidence(LOG_NAME)), [
      {
        hash: hashHex(forkText),
        note: log.checkpoint(4, new Uint8Array(32).fill(9)),
        reason: `size 4 was cosigned with root ${storedRoot}; the log signed another root for it`,
      },
      {
        hash: hashHex(otherForkText),
        note: otherFork,
        reason: `size 4 was cosigned with root ${storedRoot}; the log signed another root for it`,
      },
      {
        hash: hashHex(emptyText),
        note: log.checkpoint(0, new Uint8Array(32).fill(7)),
        reason: 'size 0 with a root other than the empty-tree root',
      },
    ]);
    assert.equal(warned.length, 3, 'one warning per new evidence row');
    const metrics = (await h.get('/metrics')).text;
    assert.match(metrics, /cosign_evidence_total\{origin="example.com\/log"\} 3\n/);
    assert.doesNotMatch(metrics, /cosign_evidence_evicted_total\{/);
    // Nothing moved: the witness goes on from 4 with a real proof.
    assert.equal((await h.post(log.request(4, 7))).status, 200);
    // A size-0 checkpoint with a non-empty root is evidence against any stored state, with any old.
    for (const old of [0, 7]) assert.equal((await h.post(formatAddCheckpointRequest(old, [], empty))).status, old === 0 ? 409 : 400);
    assert.equal((await h.store.cosign.listEvidence(LOG_NAME)).length, 3);
  });
});

void test('a fork at the stored size is evidence even when the state reached that size after the first read (re-checked under the lock)', async () => {
  const { dir, cleanup } = tempDir();
  const inner = SqliteStore.open(join(dir, 'w.db'));
  try {
    const log = new SyntheticLog(LOG_NAME, logKeyC);
    const logs = new Map(parseLogsConfig(logsDoc({ origin: log.origin, keys: [log.vkey] })).map((l) => [l.origin, l]));
    const svc = new CosignService({
      store: inner.cosign,
      name: WITNESS_NAME,
      cosignKeys: [cosignKeyC],
      logs: () => logs,
      now: () => T0 * 1000,
    });
    assert.equal((await svc.addCheckpoint(log.request(0, 3))).kind, 'cosigned');
    // The first read sees size 3; another replica then cosigns size 4 before the request takes the lock.
    let reads = 0;
    const racy = Object.create(inner.cosign) as CosignStateStorage;
    racy.getOrigin = async (o) => {
      const state = await inner.cosign.getOrigin(o);
      if (++reads === 1)
        assert.ok(await inner.cosign.updateOrigin(3, { ...state!, size: 4, root: log.root(4), checkpoint: log.checkpoint(4) }));
      return state;
    };
    const kept: string[] = [];
    const svc2 = new CosignService({
      store: racy,
      name: WITNESS_NAME,
      cosignKeys: [cosignKeyC],
      logs: () => logs,
      now: () => T0 * 1000,
      onEvidence: (_o, reason) => kept.push(reason),
    });
    const fork = log.checkpoint(4, new Uint8Array(32).fill(9));
    const r = await svc2.addCheckpoint(formatAddCheckpointRequest(4, [], fork));
    assert.equal(r.kind === 'rejected' && r.code, 'inconsistent');
    assert.deepEqual(kept, [`size 4 was cosigned with root ${encodeBase64(log.root(4))}; the log signed another root for it`]);
    assert.deepEqual(
      (await inner.cosign.listEvidence(LOG_NAME)).map((e) => e.note),
      [fork],
    );
  } finally {
    await inner.close();
    cleanup();
  }
});

void test('evidence is bounded per origin: the oldest rows are evicted, cosign_evidence_evicted_total counts them; the default bound is 1 000', async () => {
  await withHarness(
    async (h, log, warned) => {
      assert.equal((await h.post(log.request(0, 4))).status, 200);
      const forks = Array.from({ length: 8 }, (_, i) => log.checkpoint(4, new Uint8Array(32).fill(0x20 + i)));
      for (const f of forks) {
        for (const old of [4, 0]) assert.equal((await h.post(formatAddCheckpointRequest(old, [], f))).status, old === 4 ? 422 : 409);
      }
      assert.deepEqual(
        (await h.store.cosign.listEvidence(LOG_NAME)).map((e) => e.note),
        forks.slice(3),
      );
      const metrics = (await h.get('/metrics')).text;
      assert.match(metrics, /cosign_evidence_total\{origin="example.com\/log"\} 8\n/);
      assert.match(metrics, /cosign_evidence_evicted_total\{origin="example.com\/log"\} 3\n/);
      assert.equal(warned.filter((w) => /evicted/.test(w.msg)).length, 3);
    },
    { evidenceLimit: 5 },
  );
  // The service's default bound: the limit it hands to the store is EVIDENCE_LIMIT, 1 000 (the
  // store conformance suite fills 1 001 rows under that default on both drivers).
  assert.equal(EVIDENCE_LIMIT, 1000);
  const { dir, cleanup } = tempDir();
  const inner = SqliteStore.open(join(dir, 'w.db'));
  try {
    const log = new SyntheticLog(LOG_NAME, logKeyC);
    const logs = new Map(parseLogsConfig(logsDoc({ origin: log.origin, keys: [log.vkey] })).map((l) => [l.origin, l]));
    const limits: (number | undefined)[] = [];
    const spy = Object.create(inner.cosign) as CosignStateStorage;
    spy.recordEvidence = (e, limit) => {
      limits.push(limit);
      return inner.cosign.recordEvidence(e, limit);
    };
    const svc = new CosignService({ store: spy, name: WITNESS_NAME, cosignKeys: [cosignKeyC], logs: () => logs, now: () => T0 * 1000 });
    await svc.addCheckpoint(formatAddCheckpointRequest(0, [], log.checkpoint(0, new Uint8Array(32).fill(1))));
    assert.deepEqual(limits, [1000]);
    assert.throws(
      () => new CosignService({ store: inner.cosign, name: WITNESS_NAME, cosignKeys: [cosignKeyC], logs: () => logs, evidenceLimit: 0 }),
      /evidence limit/,
    );
  } finally {
    await inner.close();
    cleanup();
  }
});
