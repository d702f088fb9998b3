// The proof-of-possession nonce store (SPEC §7): one conformance suite run against the three
// implementations (memory, SQLite, PostgreSQL), then what only the durable ones promise (a
// reopened store remembers; one transaction per batch; the SQLite file's mode and single owner).
// Clocks are injected: `now` is unix ms, `iat` unix s. The PostgreSQL store reads the time from the
// database (SPEC §7 rev 4), so here its test stand-in for the database's clock follows each `now`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { MemoryNonceStore } from '../../src/bridge/nonces.ts';
import type { NonceStore } from '../../src/bridge/nonces.ts';
import { PostgresNonceStore } from '../../src/bridge/nonces-postgres.ts';
import { SqliteNonceStore } from '../../src/bridge/nonces-sqlite.ts';
import { pgSkip, startPgServer, type PgServer } from '../helpers/pg-server.ts';
import { tempDir } from '../helpers/tmp.ts';

const T = 1_767_225_600; // a proof's iat (unix s)
const ms = (s: number): number => Math.round(s * 1000);
/** The stores' own clock (idle purges): T − 60, before every use below, so it never expires anything early. */
const clock = (): number => ms(T - 60);

/** What the PostgreSQL stores below take for the database's clock: the `now` of the latest consume or peek. */
let pgNow = clock();
const databaseClock = (): number => pgNow;
function followNow(s: PostgresNonceStore): PostgresNonceStore {
  const consume = s.consume.bind(s);
  s.consume = (key, iat, now) => {
    pgNow = now;
    return consume(key, iat, now);
  };
  const peek = s.peek.bind(s);
  return Object.assign(s, {
    peek: (key: string, iat: number, now: number) => {
      pgNow = now;
      return peek(key, iat);
    },
  });
}

interface Kind {
  name: string;
  skip?: string | false;
  /** A fresh, empty store. */
  open(capacity: number): Promise<NonceStore>;
  setup?(): Promise<void>;
  teardown?(): Promise<void>;
}

let tmp: { dir: string; cleanup: () => void };
let pgServer: PgServer | undefined;
let opened = 0;

before(() => {
  tmp = tempDir('tb-nonces-');
});
after(async () => {
  await pgServer?.stop();
  tmp.cleanup();
});

const KINDS: Kind[] = [
  { name: 'memory', open: (capacity) => Promise.resolve(new MemoryNonceStore(capacity)) },
  {
    name: 'sqlite',
    open: (capacity) => Promise.resolve(SqliteNonceStore.open(join(tmp.dir, `s${++opened}`, 'nonces.sqlite'), { capacity, clock })),
  },
  {
    name: 'postgres',
    skip: pgSkip(),
    setup: async () => {
      pgServer ??= await startPgServer();
    },
    open: async (capacity) =>
      followNow(
        await PostgresNonceStore.open({
          url: await pgServer!.createDatabase('tbn'),
          issuer: 'https://bridge.example',
          capacity,
          clock,
          databaseClock,
        }),
      ),
  },
];

for (const kind of KINDS) {
  void describe(`nonce store conformance: ${kind.name}`, { skip: kind.skip ?? false }, () => {
    const stores: NonceStore[] = [];
    const open = async (capacity = 1000): Promise<NonceStore> => {
      const s = await kind.open(capacity);
      stores.push(s);
      return s;
    };
    before(async () => {
      await kind.setup?.();
    });
    after(async () => {
      for (const s of stores) await s.close();
    });

    void test('single use per key; other keys independent', async () => {
      const s = await open();
      assert.equal(await s.consume('leaf:a', T, ms(T)), 'ok');
      assert.equal(await s.consume('leaf:a', T, ms(T + 1)), 'replayed');
      assert.equal(await s.consume('other:a', T, ms(T + 1)), 'ok');
      assert.equal(s.size, 2);
    });

    void test('remembered until its iat can no longer be accepted: iat = T used at T − 60 is replayed at T + 60.5 (the bridge still accepts that iat)', async () => {
      const s = await open();
      assert.equal(await s.consume('k:early', T, ms(T - 60)), 'ok');
      assert.equal(await s.consume('k:early', T, ms(T + 30)), 'replayed');
      assert.equal(await s.consume('k:early', T, ms(T + 60.5)), 'replayed');
      assert.equal(await s.consume('k:early', T, ms(T + 60.999)), 'replayed');
      assert.equal(await s.consume('k:early', T, ms(T + 61)), 'stale'); // iat T is stale from T + 61 on: no replay possible
      assert.equal(await s.consume('k:early', T + 1, ms(T + 61)), 'ok'); // and the entry has expired
    });

    void test('and at least 121 s after use, whatever the iat', async () => {
      const s = await open();
      assert.equal(await s.consume('k:late', T - 60, ms(T + 0.25)), 'ok');
      assert.equal(await s.consume('k:late', T + 61, ms(T + 121.249)), 'replayed');
      assert.equal(await s.consume('k:late', T + 61, ms(T + 121.25)), 'ok');
    });

    void test("an iat more than 60 s from the store's clock is stale and records nothing", async () => {
      const s = await open();
      assert.equal(await s.consume('k:s', T - 61, ms(T)), 'stale');
      assert.equal(await s.consume('k:s', T + 61, ms(T + 0.999)), 'stale');
      assert.equal(await s.consume('k:s', T + 60, ms(T + 0.999)), 'ok');
      assert.equal(await s.consume('k:s', T - 60, ms(T + 0.5)), 'replayed');
      assert.equal(s.size, 1);
    });

    void test('bounded: full refuses new keys, never evicts a live one, replays still answer replayed; space comes back on expiry', async () => {
      const s = await open(2);
      assert.equal(await s.consume('k:a', T, ms(T)), 'ok');
      assert.equal(await s.consume('k:b', T + 1, ms(T + 1)), 'ok');
      assert.equal(await s.consume('k:c', T + 2, ms(T + 2)), 'full');
      assert.equal(await s.consume('k:a', T + 2, ms(T + 2)), 'replayed');
      assert.equal(await s.consume('k:c', T + 120, ms(T + 120.9)), 'full'); // k:a lives until T + 121
      assert.equal(await s.consume('k:c', T + 121, ms(T + 121)), 'ok'); // k:a expired: its place is free
      assert.equal(await s.consume('k:b', T + 121, ms(T + 121)), 'replayed'); // k:b lives until T + 122
      assert.equal(await s.consume('k:d', T + 121, ms(T + 121)), 'full');
      assert.ok(s.size <= 2, `size ${s.size}`);
    });

    void test('peek reads without writing: unused until consumed, then replayed until expiry; stale as consume says', async () => {
      const s = await open();
      assert.equal(await s.peek('k:p', T, ms(T)), 'unused');
      assert.equal(await s.peek('k:p', T, ms(T)), 'unused');
      assert.equal(s.size, 0);
      assert.equal(await s.consume('k:p', T, ms(T)), 'ok');
      assert.equal(await s.peek('k:p', T, ms(T + 1)), 'replayed');
      assert.equal(await s.peek('k:p', T + 60, ms(T + 120.999)), 'replayed');
      assert.equal(await s.peek('k:p', T - 61, ms(T)), 'stale');
      assert.equal(await s.peek('k:p', T + 61, ms(T + 121)), 'unused'); // expired at T + 121
    });

    void test('concurrent uses of one key: exactly one ok', async () => {
      const s = await open();
      const results = await Promise.all(Array.from({ length: 25 }, () => s.consume('k:race', T, ms(T))));
      assert.equal(results.filter((r) => r === 'ok').length, 1);
      assert.equal(results.filter((r) => r === 'replayed').length, 24);
      // and many distinct keys at once are all accepted
      const distinct = await Promise.all(Array.from({ length: 50 }, (_, i) => s.consume(`k:d${i}`, T, ms(T))));
      assert.deepEqual(new Set(distinct), new Set(['ok']));
    });
  });
}

void describe('durable nonce stores', () => {
  void test('SQLite: a reopened file remembers; mode 0600; one process per file; one transaction per batch', async () => {
    const path = join(tmp.dir, 'durable', 'nonces.sqlite');
    let s = SqliteNonceStore.open(path, { capacity: 100, clock });
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(await s.consume('k:x', T, ms(T - 60)), 'ok');
    assert.throws(
      () => SqliteNonceStore.open(path),
      (e: unknown) => (e as { code?: string }).code === 'nonce_store_locked',
    );
    // 40 requests in one turn of the event loop: one commit
    const before = s.commits;
    const rs = await Promise.all(Array.from({ length: 40 }, (_, i) => s.consume(`k:g${i}`, T, ms(T))));
    assert.deepEqual(new Set(rs), new Set(['ok']));
    assert.equal(s.commits - before, 1);
    await s.close();
    s = SqliteNonceStore.open(path, { capacity: 100, clock });
    try {
      assert.equal(s.size, 41);
      assert.equal(await s.consume('k:x', T, ms(T + 60.5)), 'replayed');
      assert.equal(await s.consume('k:g7', T, ms(T + 1)), 'replayed');
      assert.equal(await s.consume('k:new', T, ms(T + 1)), 'ok');
      for (const f of [path, `${path}-wal`]) assert.equal(statSync(f).mode & 0o777, 0o600, f);
    } finally {
      await s.close();
    }
  });

  void test('PostgreSQL: a reopened store remembers; bound to its issuer; a batch is one statement', { skip: pgSkip() }, async () => {
    pgServer ??= await startPgServer();
    const url = await pgServer.createDatabase('tbd');
    let s = followNow(await PostgresNonceStore.open({ url, issuer: 'https://bridge.example', clock, databaseClock }));
    assert.equal(await s.consume('k:x', T, ms(T - 60)), 'ok');
    const before = s.batches;
    const rs = await Promise.all(Array.from({ length: 40 }, (_, i) => s.consume(`k:g${i}`, T, ms(T))));
    assert.deepEqual(new Set(rs), new Set(['ok']));
    assert.ok(s.batches - before <= 2, `${s.batches - before} statements for 40 concurrent requests`);
    await s.close();
    await assert.rejects(
      PostgresNonceStore.open({ url, issuer: 'https://other.example' }),
      (e: unknown) => (e as { code?: string }).code === 'store_issuer_mismatch',
    );
    s = followNow(await PostgresNonceStore.open({ url, issuer: 'https://bridge.example', clock, databaseClock }));
    try {
      assert.equal(s.size, 41);
      assert.equal(await s.consume('k:x', T, ms(T + 60.5)), 'replayed');
      assert.equal(await s.consume('k:new', T, ms(T + 1)), 'ok');
    } finally {
      await s.close();
    }
  });
});
