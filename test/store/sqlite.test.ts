// The store conformance suite (test/store/conformance.ts) against the SQLite driver.
import { describe } from 'node:test';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite.ts';
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
  storeConformance(() => factory);
});
