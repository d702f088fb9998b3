// Issue 28 (cosign role): the SQLite cosign state keeps durable origin states in memory, so an
// add-checkpoint's two reads of its origin cost no statement and no wait for other commits'
// fdatasync (before, each read waited for any unsynced commit of either role: a request could
// wait for several syncs before its own). These tests hold the WAL sync back with a gate, as
// wal-sync.test.ts does, and check: a cached state is served while an unrelated commit waits for
// its sync; what is not yet durable is still never shown; a read that raced a commit of the same
// origin does not leave its older state in the map; key updates and forget are seen at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { fill } from '../helpers/anchors.ts';
import { sleep } from '../helpers/rel-common.ts';
import { gatedFlush, settledWithin } from '../helpers/gated-flush.ts';
import { tempDir } from '../helpers/tmp.ts';

const state = (origin: string, size: number, logKeys?: string[]) => ({
  origin,
  size,
  root: fill(size),
  checkpoint: `${origin}\n${size}\n`,
  cosignatures: '',
  lastTime: 1700000000 + size,
  logKeys,
});

void test('a durable origin state is read while another origin’s commit waits for its fdatasync; the unsynced one is not', async () => {
  const { dir, cleanup } = tempDir('aw-cosign-cache-');
  const g = gatedFlush();
  const store = SqliteStore.open(join(dir, 'witness.db'), { flush: g.flush });
  try {
    assert.equal(await store.cosign.updateOrigin(0, state('log.example/a', 1)), true);
    g.close();
    const b = store.cosign.updateOrigin(0, state('log.example/b', 1));
    // b commits within a few turns; its sync is held. A read of a, durable before, need not wait.
    await sleep(50);
    const a = store.cosign.getOrigin('log.example/a');
    assert.equal(await settledWithin(a, 500), true, 'a durable state waited for an unrelated fdatasync');
    assert.equal((await a)?.size, 1);
    const readB = store.cosign.getOrigin('log.example/b');
    assert.equal(await settledWithin(readB, 100), false, 'a state not yet durable was shown');
    assert.equal(await settledWithin(b, 0), false);
    g.open();
    assert.equal(await b, true);
    assert.equal((await readB)?.size, 1);
    assert.equal((await store.cosign.getOrigin('log.example/b'))?.size, 1);
  } finally {
    g.open();
    await store.close();
    cleanup();
  }
});

void test('a read that raced a commit of its origin does not keep the older state', async () => {
  const { dir, cleanup } = tempDir('aw-cosign-cache-');
  const path = join(dir, 'witness.db');
  const first = SqliteStore.open(path);
  await first.cosign.updateOrigin(0, state('log.example/a', 1, ['k1']));
  await first.close();
  const g = gatedFlush();
  const store = SqliteStore.open(path, { flush: g.flush });
  try {
    g.close();
    const other = store.cosign.updateOrigin(0, state('log.example/c', 1)); // an unsynced commit
    await sleep(50);
    const early = store.cosign.getOrigin('log.example/a'); // sees k1, released after the sync
    const rebind = store.cosign.setOriginKeys('log.example/a', ['k2']); // commits k2 meanwhile
    await sleep(50);
    g.open();
    assert.deepEqual((await early)?.logKeys, ['k1']);
    assert.equal(await rebind, true);
    assert.equal(await other, true);
    assert.deepEqual((await store.cosign.getOrigin('log.example/a'))?.logKeys, ['k2'], 'the raced read left its older state');
  } finally {
    g.open();
    await store.close();
    cleanup();
  }
});

void test('setOriginKeys and forgetOrigin are seen by the next read of a cached origin', async () => {
  const { dir, cleanup } = tempDir('aw-cosign-cache-');
  const store = SqliteStore.open(join(dir, 'witness.db'));
  try {
    assert.equal(await store.cosign.updateOrigin(0, state('log.example/a', 3, ['k1'])), true);
    assert.deepEqual((await store.cosign.getOrigin('log.example/a'))?.logKeys, ['k1']);
    assert.equal(await store.cosign.setOriginKeys('log.example/a', ['k2']), true);
    assert.deepEqual((await store.cosign.getOrigin('log.example/a'))?.logKeys, ['k2']);
    assert.equal(await store.cosign.updateOrigin(2, state('log.example/a', 4)), false, 'the CAS checks the stored size');
    assert.equal((await store.cosign.getOrigin('log.example/a'))?.size, 3);
    const forgotten = await store.cosign.forgetOrigin('log.example/a');
    assert.equal(forgotten.cosignedSize, 3);
    assert.equal(await store.cosign.getOrigin('log.example/a'), undefined);
    assert.equal(await store.cosign.updateOrigin(0, state('log.example/a', 1)), true);
    assert.equal((await store.cosign.getOrigin('log.example/a'))?.size, 1);
  } finally {
    await store.close();
    cleanup();
  }
});
