// SPEC §7.2 "Commit", both drivers in the store conformance style: the per-seed anchor floor
// (`tb_anchor_floor`) and its raise together with the nonce, in SQLite (one transaction) and in
// PostgreSQL (one statement, on the database's clock). Reproduction of issue 30 item 3: the
// PostgreSQL store kept no floor (`floor`/`raiseFloor` absent, `consume` ignored the raise), so the
// gate refused to start on --store postgres://…; two replicas on one database could not share it.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { join } from 'node:path';
import type { FloorRaise, NonceStore } from '../../src/bridge/nonces.ts';
import { SqliteNonceStore } from '../../src/bridge/nonces-sqlite.ts';
import { PostgresNonceStore } from '../../src/bridge/nonces-postgres.ts';
import { StoreUnavailableError } from '../../src/store/errors.ts';
import { pgSkip, startPgServer, type PgServer } from '../helpers/pg-server.ts';
import { tempDir } from '../helpers/tmp.ts';

const ISSUER = 'https://bridge.example';
const HEAD_A = 'aa'.repeat(32);
const HEAD_B = 'bb'.repeat(32);
let n = 0;
const seed = (): string => (++n).toString(16).padStart(64, '0');
const key = (): string => `nonce-${++n}-${Math.random()}`;
const nowS = (): number => Math.floor(Date.now() / 1000);

type Open = (floorCapacity?: number) => Promise<NonceStore>;

const tmp = tempDir('tb-floor-');
let pgServer: PgServer | undefined;
after(async () => {
  await pgServer?.stop();
  tmp.cleanup();
});

const drivers: { name: string; skip: string | false; open: () => Promise<Open> }[] = [
  {
    name: 'SQLite',
    skip: false,
    open: () => {
      let i = 0;
      return Promise.resolve((floorCapacity) =>
        Promise.resolve(
          SqliteNonceStore.open(join(tmp.dir, `s${++i}`, 'nonces.sqlite'), floorCapacity === undefined ? {} : { floorCapacity }),
        ),
      );
    },
  },
  {
    name: 'PostgreSQL',
    skip: pgSkip(),
    open: async () => {
      pgServer ??= await startPgServer();
      const server = pgServer;
      return async (floorCapacity) => {
        const url = await server.createDatabase('tbfloor');
        return PostgresNonceStore.open({ url, issuer: ISSUER, ...(floorCapacity === undefined ? {} : { floorCapacity }) });
      };
    },
  },
];

for (const d of drivers) {
  void describe(`anchor floor conformance: ${d.name}`, { skip: d.skip, timeout: 120_000 }, () => {
    const stores: NonceStore[] = [];
    let open: Open | undefined;
    const fresh = async (cap?: number): Promise<NonceStore> => {
      open ??= await d.open();
      const s = await open(cap);
      stores.push(s);
      return s;
    };
    after(async () => {
      for (const s of stores) await s.close().catch(() => undefined);
    });

    void it('the first raise sets the floor with the nonce; an older anchor with another head is superseded and writes nothing', async () => {
      const s = await fresh();
      const sd = seed();
      const raise: FloorRaise = { seed: sd, idx: 5, head: HEAD_A };
      assert.equal(await s.consume(key(), nowS(), Date.now(), raise), 'ok');
      assert.deepEqual(await s.floor!(sd), { idx: 5, head: HEAD_A });
      const k = key();
      assert.equal(await s.consume(k, nowS(), Date.now(), { seed: sd, idx: 4, head: HEAD_B }), 'superseded');
      assert.equal(await s.consume(k, nowS(), Date.now(), { seed: sd, idx: 5, head: HEAD_B }), 'superseded');
      assert.equal(await s.peek(k, nowS(), Date.now()), 'unused', 'the refused request left no nonce');
      assert.deepEqual(await s.floor!(sd), { idx: 5, head: HEAD_A });
    });

    void it('same head at a lower index keeps the floor (a heartbeat); a higher index moves it; never lowered', async () => {
      const s = await fresh();
      const sd = seed();
      assert.equal(await s.consume(key(), nowS(), Date.now(), { seed: sd, idx: 3, head: HEAD_A }), 'ok');
      assert.equal(await s.consume(key(), nowS(), Date.now(), { seed: sd, idx: 2, head: HEAD_A }), 'ok');
      assert.deepEqual(await s.floor!(sd), { idx: 3, head: HEAD_A });
      assert.equal(await s.consume(key(), nowS(), Date.now(), { seed: sd, idx: 9, head: HEAD_B }), 'ok');
      assert.deepEqual(await s.floor!(sd), { idx: 9, head: HEAD_B });
      const r = await s.raiseFloor!({ seed: sd, idx: 7, head: HEAD_A }, Date.now());
      assert.equal(r.result, 'superseded');
      assert.deepEqual(r.floor, { idx: 9, head: HEAD_B });
      const up = await s.raiseFloor!({ seed: sd, idx: 11, head: HEAD_A }, Date.now());
      assert.deepEqual(up, { result: 'ok', floor: { idx: 11, head: HEAD_A } });
      assert.deepEqual(await s.raiseFloor!({ seed: sd, idx: 11, head: HEAD_A }, Date.now()), up, 'idempotent');
    });

    void it('a replayed or stale proof raises no floor', async () => {
      const s = await fresh();
      const sd = seed();
      const k = key();
      assert.equal(await s.consume(k, nowS(), Date.now(), { seed: sd, idx: 1, head: HEAD_A }), 'ok');
      assert.equal(await s.consume(k, nowS(), Date.now(), { seed: sd, idx: 8, head: HEAD_B }), 'replayed');
      assert.equal(await s.consume(key(), nowS() - 3600, Date.now(), { seed: sd, idx: 8, head: HEAD_B }), 'stale');
      assert.deepEqual(await s.floor!(sd), { idx: 1, head: HEAD_A });
    });

    void it('--anchor-floor-max-seeds: a new seed beyond the cap is floor_full (consume and raiseFloor); known seeds still move', async () => {
      const s = await fresh(1);
      const first = seed();
      assert.equal(await s.consume(key(), nowS(), Date.now(), { seed: first, idx: 1, head: HEAD_A }), 'ok');
      const k = key();
      assert.equal(await s.consume(k, nowS(), Date.now(), { seed: seed(), idx: 1, head: HEAD_A }), 'floor_full');
      assert.equal(await s.peek(k, nowS(), Date.now()), 'unused');
      assert.equal((await s.raiseFloor!({ seed: seed(), idx: 1, head: HEAD_A }, Date.now())).result, 'floor_full');
      assert.equal(await s.consume(key(), nowS(), Date.now(), { seed: first, idx: 2, head: HEAD_B }), 'ok');
    });

    void it('concurrent raises of one seed with different heads at one index: exactly one wins', async () => {
      const s = await fresh();
      const sd = seed();
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          s.consume(key(), nowS(), Date.now(), { seed: sd, idx: 4, head: (i % 2 === 0 ? 'c' : 'd').repeat(64) }),
        ),
      );
      const floor = (await s.floor!(sd))!;
      const winners = results.filter((r) => r === 'ok').length;
      assert.equal(winners + results.filter((r) => r === 'superseded').length, 8, results.join());
      assert.equal(winners, 4, `only the head that won (${floor.head.slice(0, 4)}) passes: ${results.join()}`);
    });
  });
}

void describe('PostgreSQL: two replicas share the floor; store down → rejects, never ok', { skip: pgSkip(), timeout: 120_000 }, () => {
  void it('a newer anchor seen by one replica refuses an older one at the other', async () => {
    pgServer ??= await startPgServer();
    const url = await pgServer.createDatabase('tbfloorrep');
    const a = await PostgresNonceStore.open({ url, issuer: ISSUER });
    const b = await PostgresNonceStore.open({ url, issuer: ISSUER });
    try {
      const sd = seed();
      assert.equal(await a.consume(key(), nowS(), Date.now(), { seed: sd, idx: 2, head: HEAD_A }), 'ok');
      assert.equal(await b.consume(key(), nowS(), Date.now(), { seed: sd, idx: 6, head: HEAD_B }), 'ok');
      assert.equal(await a.consume(key(), nowS(), Date.now(), { seed: sd, idx: 2, head: HEAD_A }), 'superseded');
      assert.equal((await a.raiseFloor({ seed: sd, idx: 5, head: HEAD_A })).result, 'superseded');
      assert.deepEqual(await a.floor(sd), { idx: 6, head: HEAD_B });
    } finally {
      await a.close();
      await b.close();
    }
  });

  void it('with the server halted, consume with a raise and the floor read reject with StoreUnavailableError', async () => {
    pgServer ??= await startPgServer();
    const url = await pgServer.createDatabase('tbfloordown');
    const s = await PostgresNonceStore.open({ url, issuer: ISSUER, connectTimeoutMs: 1000, statementTimeoutMs: 1000 });
    try {
      pgServer.halt();
      await assert.rejects(s.consume(key(), nowS(), Date.now(), { seed: seed(), idx: 1, head: HEAD_A }), StoreUnavailableError);
      await assert.rejects(s.floor(seed()), StoreUnavailableError);
      await assert.rejects(s.raiseFloor({ seed: seed(), idx: 1, head: HEAD_A }), StoreUnavailableError);
    } finally {
      pgServer.resume();
      await s.close();
    }
  });
});
