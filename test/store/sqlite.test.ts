// The store conformance suite (test/store/conformance.ts) against the SQLite driver, and the
// upgrade of a store file written by an earlier schema version.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, SqliteStore } from '../../src/store/sqlite/store.ts';
import type { WitnessStore } from '../../src/store/types.ts';
import { tempDir } from '../helpers/tmp.ts';
import { storeConformance, type StoreFactory } from './conformance.ts';

const paths = new WeakMap<WitnessStore, { path: string; cleanup: () => void }>();

const factory: StoreFactory = {
  fresh() {
    const { dir, cleanup } = tempDir('aw-store-');
    const path = join(dir, 'witness.db');
    const store = SqliteStore.open(path);
    // The temp dir goes with the store's last close.
    const close = store.close.bind(store);
    store.close = async () => {
      await close();
      if (paths.get(store)?.cleanup === cleanup) cleanup();
    };
    paths.set(store, { path, cleanup });
    return Promise.resolve(store);
  },
  async reopen(store) {
    const entry = paths.get(store)!;
    paths.set(store, { path: entry.path, cleanup: () => undefined });
    await store.close();
    const again = SqliteStore.open(entry.path);
    const close = again.close.bind(again);
    again.close = async () => {
      await close();
      entry.cleanup();
    };
    paths.set(again, entry);
    return again;
  },
};

void describe('store conformance: SQLite', () => {
  storeConformance(() => factory, { multiWriter: false });
});

void test('a schema-2 store file with evidence rows opens: the rows stay (no hash), count against the bound and go first', async () => {
  const { dir, cleanup } = tempDir('aw-store-');
  const path = join(dir, 'witness.db');
  try {
    // The store as schema version 2 left it, with evidence rows written by that version.
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.exec(MIGRATIONS[0]!);
    db.exec(MIGRATIONS[1]!);
    db.pragma('user_version = 2');
    const put = db.prepare('INSERT INTO evidence (origin, note, reason, at) VALUES (?, ?, ?, ?)');
    for (let i = 0; i < 3; i++) put.run('example.com/log', `legacy ${i}\n`, `old 5: bad consistency proof ${i}`, 1700000000 + i);
    put.run('example.com/other', 'legacy other\n', 'r', 1700000000);
    db.close();

    const store = SqliteStore.open(path);
    try {
      const legacy = await store.cosign.listEvidence('example.com/log');
      assert.deepEqual(
        legacy.map((r) => [r.hash, r.note, r.at]),
        [0, 1, 2].map((i) => [undefined, `legacy ${i}\n`, 1700000000 + i]),
      );
      const hash = new Uint8Array(32).fill(1);
      assert.deepEqual(
        await store.cosign.recordEvidence({ origin: 'example.com/log', hash, note: 'new\n', reason: 'r', at: 1800000000 }, 2),
        { added: true, evicted: 2 },
      );
      assert.deepEqual(
        (await store.cosign.listEvidence('example.com/log')).map((r) => r.note),
        ['legacy 2\n', 'new\n'],
      );
      assert.deepEqual(
        await store.cosign.recordEvidence({ origin: 'example.com/log', hash, note: 'new\n', reason: 'r', at: 1800000001 }, 2),
        { added: false, evicted: 0 },
      );
      assert.equal((await store.cosign.listEvidence('example.com/other')).length, 1);
    } finally {
      await store.close();
    }
    const after = new Database(path, { readonly: true });
    try {
      assert.equal(after.pragma('user_version', { simple: true }), MIGRATIONS.length);
    } finally {
      after.close();
    }
  } finally {
    cleanup();
  }
});
