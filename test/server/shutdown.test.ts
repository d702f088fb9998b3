// Graceful shutdown does not wait for connections that never sent a byte (browsers pre-connect).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { createServer } from '../../src/server/server.ts';
import { listen, closeGracefully } from '../../src/server/lifecycle.ts';

void test('a silent pre-connected socket does not hold shutdown', async () => {
  const app = await createServer({ requestTimeoutMs: 5000 });
  app.get('/x', () => Promise.resolve({ ok: true }));
  const { port, url } = await listen(app);
  const silent = net.connect(port, '127.0.0.1');
  await new Promise((r) => silent.once('connect', r));
  const closed = new Promise((r) => silent.once('close', r));
  assert.equal((await fetch(`${url}/x`)).status, 200);
  const t = performance.now();
  await closeGracefully(app);
  await closed;
  assert.ok(performance.now() - t < 1000, `shutdown took ${Math.round(performance.now() - t)} ms`);
});
