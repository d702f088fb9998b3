// bench/_build-log.ts (the log-size bench's fixture builder) must leave exactly what
// TransparencyLog leaves for the same entries: the same log_entries and tree_nodes rows, the same
// tree size and signed checkpoint; and a store opened on the result must serve valid inclusion
// proofs at the edges of the tree and go on appending. A node written wrong must show up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { buildLog } from '../../bench/_build-log.ts';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import { TransparencyLog } from '../../src/log/log.ts';
import { LogSigner } from '../../src/log/signer.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { hashLeaf } from '../../src/tlog/hash.ts';
import { verifyInclusion } from '../../src/tlog/merkle.ts';
import { tempDir } from '../helpers/tmp.ts';

const signer = () => new LogSigner('witness.test/w/anchors', ed25519KeyFromSeed(Buffer.alloc(32, 7)));

/** Entry i: its index and a length that varies (so a shifted or swapped entry changes a hash). */
function entryAt(i: number): Uint8Array {
  const e = Buffer.alloc(24 + (i % 17), 0x61 + (i % 26));
  e.writeUIntBE(i, 0, 6);
  return e;
}

/** Append entries [from, to) through TransparencyLog on SqliteStore, `batch` per transaction. */
async function appendThroughLog(path: string, from: number, to: number, batch = 500): Promise<void> {
  const store = SqliteStore.open(path);
  try {
    const log = new TransparencyLog(store, signer());
    for (let start = from; start < to; start += batch) {
      await log.transaction((_tx, b) => {
        for (let i = start; i < Math.min(start + batch, to); i++) b.append(entryAt(i));
        return Promise.resolve();
      });
    }
  } finally {
    await store.close();
  }
}

interface LogRows {
  entries: string[];
  nodes: string[];
  meta: Record<string, string>;
}

/** Every row the log keeps, in key order, as text. */
function logRows(path: string): LogRows {
  const db = new Database(path);
  try {
    const entries = (db.prepare('SELECT idx, hex(entry) AS e FROM log_entries ORDER BY idx').all() as { idx: number; e: string }[]).map(
      (r) => `${r.idx} ${r.e}`,
    );
    const nodes = (
      db.prepare('SELECT level, idx, hex(hash) AS h FROM tree_nodes ORDER BY level, idx').all() as {
        level: number;
        idx: number;
        h: string;
      }[]
    ).map((r) => `${r.level}/${r.idx} ${r.h}`);
    const meta = Object.fromEntries(
      (
        db
          .prepare(
            "SELECT key, value FROM meta WHERE key IN ('tree_size', 'checkpoint', 'checkpoint_size', 'checkpoint_root') ORDER BY key",
          )
          .all() as { key: string; value: string }[]
      ).map((r) => [r.key, r.value]),
    );
    return { entries, nodes, meta };
  } finally {
    db.close();
  }
}

/** The rows of `a` that `b` lacks, and the other way round (empty when the logs are equal). */
function differences(a: LogRows, b: LogRows): string[] {
  const out: string[] = [];
  for (const kind of ['entries', 'nodes'] as const) {
    const inB = new Set(b[kind]);
    const inA = new Set(a[kind]);
    for (const r of a[kind]) if (!inB.has(r)) out.push(`${kind} only in first: ${r.slice(0, 40)}`);
    for (const r of b[kind]) if (!inA.has(r)) out.push(`${kind} only in second: ${r.slice(0, 40)}`);
  }
  for (const k of new Set([...Object.keys(a.meta), ...Object.keys(b.meta)])) {
    if (a.meta[k] !== b.meta[k]) out.push(`meta ${k}: ${a.meta[k]} vs ${b.meta[k]}`);
  }
  return out;
}

/** Open the store, check inclusion proofs of `indices` against its checkpoint, append one entry; returns the new root. */
async function serveAndAppend(path: string, indices: number[]): Promise<string> {
  const store = SqliteStore.open(path);
  try {
    const log = new TransparencyLog(store, signer());
    const cp = await log.checkpoint();
    assert.ok(cp !== undefined);
    for (const i of indices) {
      const proof = await log.inclusionProof(i, cp.size);
      assert.ok(verifyInclusion(hashLeaf(entryAt(i)), i, cp.size, proof, cp.root), `inclusion proof of entry ${i} in ${cp.size}`);
    }
    const r = await log.transaction((_tx, b) => {
      b.append(entryAt(cp.size));
      return Promise.resolve();
    });
    return Buffer.from(r.checkpoint!.root).toString('hex');
  } finally {
    await store.close();
  }
}

void test('a fresh 5 000-entry log: the same rows as TransparencyLog, and a store on it proves the edges and appends', async (t) => {
  const tmp = tempDir('aw-build-log-');
  t.after(tmp.cleanup);
  const built = join(tmp.dir, 'built', 'witness.db');
  const reference = join(tmp.dir, 'reference', 'witness.db');
  await appendThroughLog(reference, 0, 5000);
  // 777 per chunk: chunks, multi-row inserts and subtrees all end at unaligned places
  const r = buildLog({ path: built, signer: signer(), target: 5000, entry: entryAt, chunk: 777 });
  assert.equal(r.from, 0);
  assert.equal(r.size, 5000);

  const b = logRows(built);
  const ref = logRows(reference);
  assert.equal(ref.entries.length, 5000);
  assert.equal(ref.nodes.length, 2 * 5000 - 5); // 2n − popcount(n) complete subtrees
  assert.deepEqual(differences(b, ref), []);
  assert.equal(b.meta.tree_size, '5000');
  assert.equal(b.meta.checkpoint, ref.meta.checkpoint);

  const edges = [0, 1, 2047, 2048, 4095, 4096, 4998, 4999];
  assert.equal(await serveAndAppend(built, edges), await serveAndAppend(reference, edges));
  assert.deepEqual(differences(logRows(built), logRows(reference)), []);
  // in WAL mode again, as the witness keeps it
  const db = new Database(built);
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  db.close();
});

void test('a witness-made 1 000-entry log grown to 4 097 (one leaf past a power of two) equals the same growth through TransparencyLog', async (t) => {
  const tmp = tempDir('aw-build-log-');
  t.after(tmp.cleanup);
  const built = join(tmp.dir, 'built', 'witness.db');
  const reference = join(tmp.dir, 'reference', 'witness.db');
  await appendThroughLog(built, 0, 1000, 333);
  await appendThroughLog(reference, 0, 1000, 333);
  await appendThroughLog(reference, 1000, 4097);
  const r = buildLog({ path: built, signer: signer(), target: 4097, entry: entryAt, chunk: 1024 });
  assert.deepEqual([r.from, r.size], [1000, 4097]);
  assert.deepEqual(differences(logRows(built), logRows(reference)), []);
  assert.equal(logRows(built).meta.tree_size, '4097');

  const edges = [0, 999, 1000, 4095, 4096];
  assert.equal(await serveAndAppend(built, edges), await serveAndAppend(reference, edges));

  // already that large: nothing is written
  const again = buildLog({ path: built, signer: signer(), target: 4000, entry: entryAt });
  assert.deepEqual([again.from, again.size, again.checkpoint], [4098, 4098, undefined]);
});

void test('one tree node written wrong is found by the row comparison and breaks the proofs through it', async (t) => {
  const tmp = tempDir('aw-build-log-');
  t.after(tmp.cleanup);
  const built = join(tmp.dir, 'built', 'witness.db');
  const reference = join(tmp.dir, 'reference', 'witness.db');
  await appendThroughLog(reference, 0, 1500);
  buildLog({ path: built, signer: signer(), target: 1500, entry: entryAt, chunk: 400 });
  assert.deepEqual(differences(logRows(built), logRows(reference)), []);

  // the subtree of leaves 1 024 … 1 279 (level 8, index 4): a sibling on leaf 0's proof path
  const db = new Database(built);
  db.prepare('UPDATE tree_nodes SET hash = zeroblob(32) WHERE level = 8 AND idx = 4').run();
  db.close();
  const diff = differences(logRows(built), logRows(reference));
  assert.equal(diff.length, 2);
  assert.match(diff[0]!, /^nodes only in first: 8\/4 0{32}/);
  await assert.rejects(serveAndAppend(built, [0]), /inclusion proof of entry 0 in 1500/);
});
