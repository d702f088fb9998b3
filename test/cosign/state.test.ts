// Per-origin state (SPEC §5): serialisation under concurrency, the store's compare-and-swap, restart,
// removed-then-re-added origins, the monitoring endpoint, and mounting on a bare fastify.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fastify } from 'fastify';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import { sha256Hex } from '../../src/crypto/sha256.ts';
import { verifyNote } from '../../src/note/signed-note.ts';
import { parseVkey } from '../../src/note/vkey.ts';
import { parseCosignatureLine } from '../../src/note/cosignature.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import type { CosignStateStorage, OriginState } from '../../src/store/types.ts';
import { CosignService } from '../../src/cosign/service.ts';
import { parseLogsConfig } from '../../src/cosign/logs.ts';
import { registerCosignRoutes } from '../../src/cosign/routes.ts';
import { LOG_NAME, SyntheticLog, WITNESS_NAME, cosignKeyC, logKeyC, logsDoc, seq, startCosign } from '../helpers/cosign-harness.ts';
import { tempDir } from '../helpers/tmp.ts';

const T0 = 1_800_000_000;
const logA = new SyntheticLog(LOG_NAME, logKeyC);
const logB = new SyntheticLog('b.example/log', ed25519KeyFromSeed(seq(0x60)));
const hashPath = (origin: string): string => `/${sha256Hex(origin)}/checkpoint`;

void test('concurrency: one origin serialises — identical requests: exactly one 200; a shuffled mix: the 200s form a chain, no rollback', async () => {
  const { dir, cleanup } = tempDir();
  const h = await startCosign({
    dir,
    logsDoc: logsDoc({ origin: logA.origin, keys: [logA.vkey] }, { origin: logB.origin, keys: [logB.vkey] }),
    server: { maxConnectionsPerIp: 1024 },
  });
  try {
    const same = await Promise.all(Array.from({ length: 20 }, () => h.post(logA.request(0, 5))));
    assert.equal(same.filter((r) => r.status === 200).length, 1);
    assert.deepEqual(
      same.filter((r) => r.status !== 200).map((r) => [r.status, r.text]),
      Array(19).fill([409, '5\n']),
    );
    // Idempotent re-cosigning of the same size: all succeed.
    const again = await Promise.all(Array.from({ length: 10 }, () => h.post(logA.request(5, 5))));
    assert.ok(again.every((r) => r.status === 200));

    // A mix of 60 requests old a → new b (5 ≤ a < b ≤ 40) with valid proofs, in random order, plus
    // requests for origin B interleaved.
    const reqs: [number, number][] = [];
    for (let i = 0; i < 60; i++) {
      const a = 5 + Math.floor(Math.random() * 30);
      reqs.push([a, a + 1 + Math.floor(Math.random() * (40 - a))]);
    }
    const results = await Promise.all([
      ...reqs.map(async ([a, b]) => ({ a, b, r: await h.post(logA.request(a, b)) })),
      ...Array.from({ length: 10 }, async (_, i) => ({ a: -1, b: i, r: await h.post(logB.request(0, 3)) })),
    ]);
    const okA = results.filter((x) => x.a >= 0 && x.r.status === 200);
    for (const x of results) assert.ok(x.r.status === 200 || x.r.status === 409, `${x.r.status} ${x.r.text}`);
    // Successes in commit order (their cosignature times are equal, so order by size): each starts
    // where the previous ended, from 5.
    okA.sort((x, y) => x.b - y.b);
    let at = 5;
    for (const x of okA) {
      if (x.a === x.b) continue;
      assert.equal(x.a, at);
      at = x.b;
    }
    const state = await h.store.cosign.getOrigin(LOG_NAME);
    assert.equal(state?.size, Math.max(5, ...okA.map((x) => x.b)));
    // Every 409 names a size the origin really had: ≥ 5 and ≤ the final size.
    for (const x of results.filter((y) => y.a >= 0 && y.r.status === 409)) {
      const n = Number(x.r.text);
      assert.ok(n >= 5 && n <= state.size && n !== x.a, x.r.text);
    }
    assert.equal(results.filter((x) => x.a < 0 && x.r.status === 200).length, 1);
  } finally {
    await h.close();
    cleanup();
  }
});

/** A store wrapper whose getOrigin for one origin waits until released. */
function gatedStore(inner: CosignStateStorage, origin: string): { store: CosignStateStorage; release: () => void; entered: Promise<void> } {
  let release!: () => void;
  let entered!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const enteredP = new Promise<void>((r) => (entered = r));
  const store = Object.create(inner) as CosignStateStorage;
  store.getOrigin = async (o) => {
    if (o === origin) {
      entered();
      await gate;
    }
    return inner.getOrigin(o);
  };
  return { store, release, entered: enteredP };
}

void test('different origins do not wait for each other; a lost compare-and-swap is re-checked (409 with the new size)', async () => {
  const { dir, cleanup } = tempDir();
  const inner = SqliteStore.open(join(dir, 'w.db'));
  try {
    const logs = new Map(
      parseLogsConfig(logsDoc({ origin: logA.origin, keys: [logA.vkey] }, { origin: logB.origin, keys: [logB.vkey] })).map((l) => [
        l.origin,
        l,
      ]),
    );
    const gated = gatedStore(inner.cosign, logA.origin);
    const svc = new CosignService({
      store: gated.store,
      name: WITNESS_NAME,
      cosignKeys: [cosignKeyC],
      logs: () => logs,
      now: () => T0 * 1000,
    });
    const pendingA = svc.addCheckpoint(logA.request(0, 3));
    await gated.entered;
    const b = await svc.addCheckpoint(logB.request(0, 3)); // A is stuck in the store; B goes through
    assert.equal(b.kind, 'cosigned');
    gated.release();
    assert.equal((await pendingA).kind, 'cosigned');

    // Another writer (e.g. a second replica) moves A to 7 between our read and our swap.
    let interfered = false;
    const racy = Object.create(inner.cosign) as CosignStateStorage;
    racy.updateOrigin = async (expected: number, next: OriginState) => {
      if (!interfered) {
        interfered = true;
        const cur = await inner.cosign.getOrigin(logA.origin);
        assert.ok(await inner.cosign.updateOrigin(3, { ...cur!, size: 7, root: logA.root(7), checkpoint: logA.checkpoint(7) }));
      }
      return inner.cosign.updateOrigin(expected, next);
    };
    const svc2 = new CosignService({ store: racy, name: WITNESS_NAME, cosignKeys: [cosignKeyC], logs: () => logs, now: () => T0 * 1000 });
    const r = await svc2.addCheckpoint(logA.request(3, 5));
    assert.deepEqual(r, { kind: 'conflict', status: 409, origin: logA.origin, size: 7 });
    assert.equal((await inner.cosign.getOrigin(logA.origin))?.size, 7);
  } finally {
    await inner.close();
    cleanup();
  }
});

void test('restart: the state and the last cosignature time survive re-opening the store', async () => {
  const { dir, cleanup } = tempDir();
  const doc = logsDoc({ origin: logA.origin, keys: [logA.vkey] });
  try {
    let h = await startCosign({ dir, logsDoc: doc, now: () => T0 * 1000 });
    assert.equal((await h.post(logA.request(0, 5))).status, 200);
    await h.close();
    // The clock is behind after the restart: times still do not go backwards.
    h = await startCosign({ dir, logsDoc: doc, now: () => (T0 - 600) * 1000 });
    try {
      let r = await h.post(logA.request(0, 3));
      assert.equal(r.status, 409);
      assert.equal(r.text, '5\n');
      r = await h.post(logA.request(3, 8));
      assert.equal(r.text, '5\n');
      r = await h.post(logA.request(5, 8));
      assert.equal(r.status, 200);
      assert.equal(parseCosignatureLine(r.text).timestamp, BigInt(T0));
      assert.match((await h.get('/metrics')).text, /cosign_origin_size\{origin="example.com\/log"\} 8/);
    } finally {
      await h.close();
    }
  } finally {
    cleanup();
  }
});

void test('a removed origin keeps its state (404 while removed, monitor still served) and resumes when re-added', async () => {
  const { dir, cleanup } = tempDir();
  const file = join(dir, 'logs.json');
  const both = logsDoc({ origin: logA.origin, keys: [logA.vkey] }, { origin: logB.origin, keys: [logB.vkey] });
  writeFileSync(file, JSON.stringify(both));
  const h = await startCosign({ dir, logsFile: file });
  try {
    assert.equal((await h.post(logA.request(0, 5))).status, 200);
    writeFileSync(file, JSON.stringify(logsDoc({ origin: logB.origin, keys: [logB.vkey] })));
    assert.equal(h.role.reload(), true);
    assert.deepEqual(h.role.healthInfo().origins, [logB.origin]);
    const r = await h.post(logA.request(5, 6));
    assert.equal(r.status, 404);
    assert.equal((await h.get(hashPath(logA.origin))).status, 200);
    writeFileSync(file, JSON.stringify(both));
    assert.equal(h.role.reload(), true);
    assert.equal((await h.post(logA.request(0, 6))).text, '5\n');
    assert.equal((await h.post(logA.request(5, 6))).status, 200);
  } finally {
    await h.close();
    cleanup();
  }
});

void test('GET /<sha256(origin)>/checkpoint: 404 text before, the cosigned note after; does not shadow other routes', async () => {
  const { dir, cleanup } = tempDir();
  const h = await startCosign({
    dir,
    logsDoc: logsDoc({ origin: logA.origin, keys: [logA.vkey] }),
    now: () => T0 * 1000,
    routes: (app) => {
      app.get('/log/checkpoint', async (_req, reply) => reply.type('text/plain').send('own log\n'));
    },
  });
  try {
    let r = await h.get(hashPath(logA.origin));
    assert.equal(r.status, 404);
    assert.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.match(r.text, /^[^\n]+\n$/);
    const cos = await h.post(logA.request(0, 4));
    r = await h.get(hashPath(logA.origin));
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.equal(r.headers.get('access-control-allow-origin'), '*');
    assert.equal(r.text, logA.checkpoint(4) + cos.text);
    const v = verifyNote(r.text, [parseVkey(logA.vkey), parseVkey(h.role.healthInfo().cosignVkeys[0]!)]);
    assert.equal(v.verified.length, 2);
    // Either case of hex is accepted on input.
    assert.equal((await h.get(hashPath(logA.origin).toUpperCase().replace('/CHECKPOINT', '/checkpoint'))).status, 200);
    // An unknown but well-formed hash: 404 text; a parameter that is not 64 hex: the server's 404.
    assert.equal((await h.get(hashPath('nobody.example/log'))).status, 404);
    r = await h.get('/log/checkpoint');
    assert.equal(r.text, 'own log\n');
    r = await h.get('/abc/checkpoint');
    assert.equal(r.status, 404);
    assert.equal(r.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  } finally {
    await h.close();
    cleanup();
  }
});

void test('the routes also work on a bare fastify instance (own byte parser, any Content-Type)', async () => {
  const { dir, cleanup } = tempDir();
  const store = SqliteStore.open(join(dir, 'w.db'));
  const app = fastify();
  try {
    const logs = new Map(parseLogsConfig(logsDoc({ origin: logA.origin, keys: [logA.vkey] })).map((l) => [l.origin, l]));
    const service = new CosignService({ store: store.cosign, name: WITNESS_NAME, cosignKeys: [cosignKeyC], logs: () => logs });
    registerCosignRoutes(app, { service, originForHash: (hex) => (hex === sha256Hex(logA.origin) ? logA.origin : undefined) });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const url = `http://127.0.0.1:${port}`;
    let r = await fetch(`${url}/add-checkpoint`, {
      method: 'POST',
      body: logA.request(0, 2),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(r.status, 200);
    r = await fetch(`${url}/add-checkpoint`, { method: 'POST', body: logA.request(0, 2) });
    assert.equal(r.status, 409);
    assert.equal(await r.text(), '2\n');
    r = await fetch(url + hashPath(logA.origin));
    assert.equal(r.status, 200);
    r = await fetch(`${url}/nothex/checkpoint`);
    assert.equal(r.status, 404);
  } finally {
    await app.close();
    await store.close();
    cleanup();
  }
});
