// The PostgreSQL driver: the store conformance suite (test/store/conformance.ts), then what only a
// shared database has — several handles (replicas) writing at once, concurrent migrations, the
// database-side guards, outages (503 store_unavailable, then recovery), refused unsafe settings.
// A throwaway server is started here (test/helpers/pg-server.ts); skipped without PostgreSQL
// binaries outside CI.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { MIGRATIONS, PG_SCHEMA_VERSION, PostgresStore, mapPgError } from '../../src/store/postgres/store.ts';
import { ProtocolError } from '../../src/errors.ts';
import type { OriginState, WitnessStore } from '../../src/store/types.ts';
import { hashLeaf } from '../../src/tlog/hash.ts';
import { rootFromLeafHashes } from '../../src/tlog/merkle.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { pgSkip, startPgServer, type PgServer } from '../helpers/pg-server.ts';
import { storeConformance, type StoreFactory } from './conformance.ts';
import { logOf, storedSize } from './conformance/helpers.ts';

const skip = pgSkip();
let server: PgServer | undefined;
const urls = new WeakMap<WitnessStore, string>();

const factory: StoreFactory = {
  async fresh() {
    const url = await server!.createDatabase('conf');
    const store = await PostgresStore.open(url);
    urls.set(store, url);
    return store;
  },
  async reopen(store) {
    const url = urls.get(store)!;
    await store.close();
    const again = await PostgresStore.open(url);
    urls.set(again, url);
    return again;
  },
};

const code = (e: unknown): string | undefined => (e instanceof ProtocolError ? e.code : undefined);
const entry = (tag: string): Uint8Array => new TextEncoder().encode(tag);
const origin = (size: number, lastTime: number): OriginState => ({
  origin: 'example.com/log',
  size,
  root: fill(size & 0xff),
  checkpoint: `example.com/log\n${size}\n`,
  cosignatures: '',
  lastTime,
});

void describe('PostgreSQL store', { skip }, () => {
  before(async () => {
    server = await startPgServer();
  });
  after(async () => {
    await server?.stop();
  });

  void describe('store conformance: PostgreSQL', () => {
    storeConformance(() => factory, { multiWriter: true });
  });

  void test('three handles on one database (three replicas): concurrent transactions form one linear log', async () => {
    const url = await server!.createDatabase('lin');
    const stores = await Promise.all([0, 1, 2].map(() => PostgresStore.open(url)));
    try {
      const written: Uint8Array[][] = [];
      await Promise.all(
        stores.flatMap((s, r) =>
          Array.from({ length: 15 }, (_, k) =>
            logOf(s).transaction((_tx, batch) => {
              const es = Array.from({ length: 1 + (k % 4) }, (_, j) => entry(`r${r} t${k} e${j}`));
              written[batch.baseSize] = es;
              for (const e of es) batch.append(e);
              return Promise.resolve();
            }),
          ),
        ),
      );
      const log = written.flat();
      const { batch } = await logOf(stores[0]!).transaction(() => Promise.resolve());
      const head = batch.head();
      assert.equal(head.size, log.length);
      assert.deepEqual(Buffer.from(head.root), Buffer.from(rootFromLeafHashes(log.map(hashLeaf))));
      const bundle = await logOf(stores[2]!).entries(0, Math.min(256, log.length));
      assert.deepEqual(
        bundle.map((b) => Buffer.from(b).toString()),
        log.slice(0, 256).map((b) => Buffer.from(b).toString()),
      );
      assert.equal((await stores[1]!.log.checkpoint())?.size, log.length);
    } finally {
      for (const s of stores) await s.close();
    }
  });

  void test('cosign CAS across handles: one winner per stored size, the cosignature time never goes backwards', async () => {
    const url = await server!.createDatabase('cas');
    const stores = await Promise.all([0, 1, 2].map(() => PostgresStore.open(url)));
    try {
      let expected = 0;
      for (let round = 0; round < 10; round++) {
        const results = await Promise.all(
          stores.flatMap((s, r) => [0, 1].map((k) => s.cosign.updateOrigin(expected, origin(expected + 1 + r * 2 + k, 100 + round)))),
        );
        assert.equal(results.filter(Boolean).length, 1, `round ${round}`);
        const now = await stores[round % 3]!.cosign.getOrigin('example.com/log');
        assert.ok(now!.size > expected);
        expected = now!.size;
      }
      // same size, earlier time: refused (a replica with a slow clock cannot roll the time back)
      assert.equal(await stores[0]!.cosign.updateOrigin(expected, { ...origin(expected, 50) }), false);
      assert.equal(await stores[0]!.cosign.updateOrigin(expected, { ...origin(expected, 200) }), true);
    } finally {
      for (const s of stores) await s.close();
    }
  });

  void test('a schema-1 database with evidence rows opens: the rows stay (no hash), count against the bound and go first', async () => {
    const url = await server!.createDatabase('evmig');
    const c = new pg.Client(url);
    await c.connect();
    try {
      // The database as schema version 1 left it, with evidence rows written by that version.
      await c.query(MIGRATIONS[0]!);
      await c.query(
        'CREATE TABLE aw_schema (id boolean PRIMARY KEY DEFAULT true CHECK (id), version integer NOT NULL); INSERT INTO aw_schema VALUES (true, 1)',
      );
      for (let i = 0; i < 3; i++) {
        await c.query('INSERT INTO evidence (origin, note, reason, at) VALUES ($1, $2, $3, $4)', [
          'example.com/log',
          `legacy ${i}\n`,
          'r',
          1700000000 + i,
        ]);
      }
    } finally {
      await c.end();
    }
    const store = await PostgresStore.open(url);
    try {
      assert.deepEqual(
        (await store.cosign.listEvidence('example.com/log')).map((r) => [r.hash, r.note, r.at]),
        [0, 1, 2].map((i) => [undefined, `legacy ${i}\n`, 1700000000 + i]),
      );
      const hash = fill(1);
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
    } finally {
      await store.close();
    }
  });

  void test('evidence from three handles at once: one row per hash, the per-origin bound holds exactly', async () => {
    const url = await server!.createDatabase('evrep');
    const stores = await Promise.all([0, 1, 2].map(() => PostgresStore.open(url)));
    try {
      // Every handle sends the same 12 checkpoints (hashes 0..11) concurrently, bound 5.
      const results = await Promise.all(
        stores.flatMap((s, r) =>
          Array.from({ length: 12 }, (_, n) =>
            s.cosign.recordEvidence({ origin: 'example.com/log', hash: fill(n), note: `n ${n} r ${r}\n`, reason: 'r', at: n }, 5),
          ),
        ),
      );
      const rows = await stores[0]!.cosign.listEvidence('example.com/log');
      assert.equal(rows.length, 5);
      assert.equal(new Set(rows.map((r) => Buffer.from(r.hash!).toString('hex'))).size, 5);
      const added = results.filter((x) => x.added).length;
      const evicted = results.reduce((n, x) => n + x.evicted, 0);
      assert.ok(added >= 12, `every hash stored at least once (${added})`);
      assert.equal(added - evicted, 5, 'rows added minus rows evicted is what is left');
    } finally {
      for (const s of stores) await s.close();
    }
  });

  void test('migrations: replicas starting at once migrate exactly once; a newer schema is refused', async () => {
    const url = await server!.createDatabase('mig');
    const stores = await Promise.all(Array.from({ length: 6 }, () => PostgresStore.open(url)));
    for (const s of stores) await s.close();
    const c = new pg.Client(url);
    await c.connect();
    try {
      assert.deepEqual((await c.query('SELECT version FROM aw_schema')).rows, [{ version: PG_SCHEMA_VERSION }]);
      assert.equal((await c.query('SELECT size FROM log_head')).rows.length, 1);
      await c.query('UPDATE aw_schema SET version = version + 1');
      await assert.rejects(PostgresStore.open(url), (e) => code(e) === 'store_schema');
    } finally {
      await c.end();
    }
  });

  void test('the database refuses a seed record that moves backwards, even from a second writer', async () => {
    const url = await server!.createDatabase('back');
    const [a, b] = await Promise.all([PostgresStore.open(url), PostgresStore.open(url)]);
    const alice = edParty(9);
    const rec = (index: number) => ({
      seedId: fill(1),
      owner: 'did:keri:EAlice',
      createdAt: 1,
      latest: signAnchor(alice, { seedId: fill(1), index, head: fill(index), cumulative: BigInt(index), timestamp: 1700000000 + index }),
      cosignature: { signature: fill(2, 64), timestamp: 1, leafIndex: 0 },
    });
    try {
      await logOf(a).transaction(async (tx, batch) => {
        batch.append(entry('x'));
        await tx.anchors.putSeed(rec(5), true, 'EAlice');
      });
      for (const index of [5, 4]) {
        await assert.rejects(
          logOf(b).transaction(async (tx, batch) => {
            batch.append(entry('y'));
            await tx.anchors.putSeed(rec(index), false, 'EAlice');
          }),
          (e) => code(e) === 'store_invariant',
        );
      }
      assert.equal((await b.anchors.getSeed(fill(1)))?.latest.index, 5);
      assert.equal(await storedSize(b), 1, 'the refused batch was rolled back whole');
    } finally {
      await a.close();
      await b.close();
    }
  });

  void test('a stuck sequencer lock holder: 503 store_unavailable after the lock timeout, then normal service', async () => {
    const url = await server!.createDatabase('lock');
    const s = await PostgresStore.open({ url, lockTimeoutMs: 300 });
    const holder = new pg.Client(url);
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock(1096241989)');
      const t = performance.now();
      await assert.rejects(
        logOf(s).transaction((_tx, batch) => Promise.resolve(batch.append(entry('a')))),
        (e) => code(e) === 'store_unavailable',
      );
      assert.ok(performance.now() - t < 3000);
      await holder.query('ROLLBACK');
      assert.equal((await logOf(s).transaction((_tx, batch) => Promise.resolve(batch.append(entry('a'))))).value, 0);
    } finally {
      await holder.end();
      await s.close();
    }
  });

  void test('unsafe durability settings are refused at open (synchronous_commit=off)', async () => {
    const url = await server!.createDatabase('unsafe');
    await assert.rejects(PostgresStore.open(`${url}?options=-c%20synchronous_commit%3Doff`), (e) => code(e) === 'store_unsafe');
    await assert.rejects(
      PostgresStore.open({ url: 'postgres://postgres@127.0.0.1:1/none', connectTimeoutMs: 1000 }),
      (e) => code(e) === 'store_unopenable',
    );
  });

  void test('error mapping: connection faults and lock timeouts are store_unavailable; integrity errors are not', () => {
    assert.equal(code(mapPgError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))), 'store_unavailable');
    assert.equal(code(mapPgError(new Error('Connection terminated unexpectedly'))), 'store_unavailable');
    for (const c of ['08006', '57P01', '55P03', '25006', '40001', '53300', '57014'])
      assert.equal(code(mapPgError(Object.assign(new Error(c), { code: c }))), 'store_unavailable', c);
    const dup = Object.assign(new Error('duplicate key'), { code: '23505' });
    assert.equal(mapPgError(dup), dup);
  });

  // Last: it stops the server.
  void test('losing the database: 503 store_unavailable (never a wrong answer), then recovery without a restart', async () => {
    const url = await server!.createDatabase('outage');
    const s = await PostgresStore.open({ url, connectTimeoutMs: 1000 });
    try {
      const { checkpoint: cp1 } = await logOf(s).transaction((_tx, batch) => Promise.resolve(batch.append(entry('before'))));
      // CHECKPOINT first: the immediate stop below then needs no long crash recovery at restart.
      const c = new pg.Client(url);
      await c.connect();
      await c.query('CHECKPOINT');
      await c.end();
      server!.halt();
      for (const op of [
        () => s.log.checkpoint(),
        () => logOf(s).transaction((_tx, batch) => Promise.resolve(batch.append(entry('during')))),
        () => s.log.readNodeRange(0, 0, 1),
        () => s.anchors.getSeed(fill(1)),
        () => s.cosign.updateOrigin(0, origin(1, 1)),
      ]) {
        await assert.rejects(op(), (e) => code(e) === 'store_unavailable');
      }
      server!.resume();
      let cp;
      for (let i = 0; i < 50 && cp === undefined; i++) {
        try {
          cp = await s.log.checkpoint();
        } catch (e) {
          assert.equal(code(e), 'store_unavailable');
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      assert.equal(cp?.note, cp1?.note);
      assert.equal(
        (await logOf(s).transaction((_tx, batch) => Promise.resolve(batch.append(entry('after'))))).value,
        1,
        'the failed append left nothing behind',
      );
    } finally {
      await s.close();
    }
  });
});
