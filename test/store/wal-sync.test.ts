// Issue 28, lever 1: the SQLite writer commits with synchronous=NORMAL and the WAL is made durable
// by an fdatasync on libuv's thread pool (src/store/sqlite/wal-sync.ts). These tests inject a
// flush that waits on a gate (a slow disk) and check that nothing built on a commit is released
// before its fdatasync completes: a write transaction's promise, a read that could see the
// commit, the cosign role's group-committed CAS, and an anchor's HTTP 200 over a real socket.
// Also: commits that land during one fdatasync share the next (group commit), a failed fdatasync
// answers store_unavailable from then on, and a replaced -wal file is re-opened.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fdatasync, fstatSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { encodeAnchor } from '../../src/anchor/codec.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import { parseRegistry } from '../../src/anchor/registry.ts';
import { AnchorService } from '../../src/anchoring/service.ts';
import { registerAnchorRoutes } from '../../src/anchoring/routes.ts';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { TransparencyLog } from '../../src/log/log.ts';
import { LogSigner } from '../../src/log/signer.ts';
import { createServer } from '../../src/server/server.ts';
import { listen } from '../../src/server/lifecycle.ts';
import { StoreUnavailableError } from '../../src/store/errors.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { WalSync } from '../../src/store/sqlite/wal-sync.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { httpRequest, sleep, toJson } from '../helpers/rel-common.ts';
import { gatedFlush, settledWithin } from '../helpers/gated-flush.ts';
import { tempDir } from '../helpers/tmp.ts';

const NAME = 'witness.example/w1';
const ORIGIN = 'witness.example/w1/anchors';
const witnessKey = ed25519KeyFromSeed(fill(0x01));

const origin = (size: number) => ({
  origin: 'log.example/a',
  size,
  root: fill(size),
  checkpoint: `log.example/a\n${size}\n`,
  cosignatures: '',
  lastTime: 1700000000 + size,
});

void test('a write transaction, a read that sees it and a cosign CAS resolve only after the WAL fdatasync', async () => {
  const { dir, cleanup } = tempDir('aw-walsync-');
  const g = gatedFlush();
  const store = SqliteStore.open(join(dir, 'witness.db'), { flush: g.flush });
  const log = new TransparencyLog(store, new LogSigner(ORIGIN, witnessKey));
  try {
    await store.bindIdentity({ witnessKey: encodeHex(ed25519PublicKeyBytes(witnessKey)), name: NAME, logOrigin: ORIGIN });
    g.close();
    const before = g.calls();
    const tx = log.transaction((_tx, batch) => {
      batch.append(fill(7));
      return Promise.resolve('done');
    });
    // The transaction commits within a few turns (bounded wait, not a timing assertion); its
    // promise must still wait for the gate.
    for (let i = 0; i < 500 && g.calls() === before; i++) await sleep(10);
    assert.equal(g.calls(), before + 1, 'the commit asked for one fdatasync');
    const read = store.log.checkpoint(); // the reader already sees the commit: held back too
    const cas = store.cosign.updateOrigin(0, origin(1));
    assert.equal(await settledWithin(tx, 200), false, 'no transaction result before the fdatasync completes');
    assert.equal(await settledWithin(read, 0), false, 'no read of the commit before the fdatasync completes');
    assert.equal(await settledWithin(cas, 0), false, 'no cosign result before its fdatasync completes');
    g.open();
    assert.equal((await tx).value, 'done');
    assert.equal((await read)?.size, 1);
    assert.equal(await cas, true);
  } finally {
    g.open();
    await store.close();
    cleanup();
  }
});

void test('commits made while an fdatasync runs share the next one (group commit)', async () => {
  const { dir, cleanup } = tempDir('aw-walsync-');
  const g = gatedFlush();
  const store = SqliteStore.open(join(dir, 'witness.db'), { flush: g.flush });
  try {
    g.close();
    const before = g.calls();
    let ran = 0;
    const results = Array.from({ length: 20 }, (_, i) =>
      store.transaction(() => {
        ran++;
        return Promise.resolve(i);
      }),
    );
    // All 20 commit while the first fdatasync is stalled: the write lane is not held during it.
    for (let i = 0; i < 500 && ran < 20; i++) await sleep(10);
    await sleep(20); // the last one's COMMIT follows its function within the same few turns
    g.open();
    assert.deepEqual(await Promise.all(results), [...Array(20).keys()]);
    const flushes = g.calls() - before;
    assert.ok(flushes >= 1 && flushes <= 2, `20 commits during one stalled fdatasync took ${flushes} fdatasyncs`);
  } finally {
    g.open();
    await store.close();
    cleanup();
  }
});

void test('a failed fdatasync answers store_unavailable, for that commit and every later call', async () => {
  const { dir, cleanup } = tempDir('aw-walsync-');
  let fail = false;
  const store = SqliteStore.open(join(dir, 'witness.db'), {
    flush: (fd) =>
      fail
        ? Promise.reject(new Error('EIO: i/o error, fdatasync'))
        : new Promise((r) => {
            fdatasync(fd, () => {
              r();
            });
          }),
  });
  try {
    assert.equal(await store.transaction(() => Promise.resolve(1)), 1);
    fail = true;
    await assert.rejects(store.cosign.updateOrigin(0, origin(1)), StoreUnavailableError);
    fail = false; // after fsync reported an error, later syncs prove nothing: the store stays refused
    await assert.rejects(
      store.transaction(() => Promise.resolve(2)),
      StoreUnavailableError,
    );
    await assert.rejects(store.cosign.getOrigin('log.example/a'), StoreUnavailableError);
  } finally {
    await store.close();
    cleanup();
  }
});

void test('WalSync re-opens the -wal file when it was replaced (new inode)', async () => {
  const { dir, cleanup } = tempDir('aw-walsync-');
  const wal = join(dir, 'x.db-wal');
  writeFileSync(wal, 'one');
  const seen: number[] = [];
  const sync = new WalSync(wal, (fd) => {
    seen.push(fstatSync(fd).ino);
    return Promise.resolve();
  });
  try {
    await sync.durable(sync.committed());
    writeFileSync(join(dir, 'new'), 'two');
    renameSync(join(dir, 'new'), wal);
    await sync.durable(sync.committed());
    await sync.durable(sync.committed());
    assert.equal(seen.length, 3);
    assert.notEqual(seen[0], seen[1], 'the replaced file is synced through a new descriptor');
    assert.equal(seen[1], statSync(wal).ino);
    assert.equal(seen[2], seen[1], 'an unchanged file keeps its descriptor');
  } finally {
    sync.close();
    cleanup();
  }
});

void test('POST /v1/anchor: no 200 before the commit’s fdatasync completes (real loopback socket)', async () => {
  const { dir, cleanup } = tempDir('aw-walsync-');
  const g = gatedFlush();
  const store = SqliteStore.open(join(dir, 'witness.db'), { flush: g.flush });
  const alice = edParty(0x09);
  const registry = parseRegistry({
    parties: [{ id: 'EAgent', keys: [{ curve: 'ed25519', public_key: encodeHex(alice.publicKey) }], delegator: 'ERoot' }],
  });
  const log = new TransparencyLog(store, new LogSigner(ORIGIN, witnessKey));
  const service = new AnchorService({
    log,
    witnessKey,
    name: NAME,
    registry: () => registry,
    allowUnderivedSeeds: false,
    quota: { anchorsPerMinute: 1_000_000, newSeedsPerDay: 1_000_000 },
  });
  const app = await createServer({ logger: pino({ level: 'silent' }), accessLog: false });
  try {
    await store.bindIdentity({ witnessKey: encodeHex(ed25519PublicKeyBytes(witnessKey)), name: NAME, logOrigin: ORIGIN });
    await log.init();
    registerAnchorRoutes(app, service);
    const { url } = await listen(app, { host: '127.0.0.1', port: 0 });
    const scope = 'scope-1';
    const anchor = signAnchor(alice, {
      seedId: deriveSeedId('did:keri:ERoot', 'did:keri:EAgent', scope),
      index: 1,
      head: fill(0x11),
      cumulative: 1n,
      timestamp: 1700000001,
    });
    g.close();
    const before = g.calls();
    const reply = httpRequest(`${url}/v1/anchor`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: toJson({ anchor: encodeAnchor(anchor), party: { agent: 'did:keri:EAgent', root: 'did:keri:ERoot', scope } }),
      timeoutMs: 20_000,
    });
    // Wait until the batch has committed and asked for its fdatasync, then a while longer.
    for (let i = 0; i < 400 && g.calls() === before; i++) await sleep(10);
    assert.ok(g.calls() > before, 'the anchor was committed and its fdatasync requested');
    assert.equal(await settledWithin(reply, 300), false, 'the 200 waited for the fdatasync');
    g.open();
    const a = await reply;
    assert.equal(a.status, 200, a.text);
  } finally {
    g.open();
    await app.close();
    await store.close();
    cleanup();
  }
});
