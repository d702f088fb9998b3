// The status page's cosign counts come from the role's own outcome tally (issue 26), not from the
// Prometheus registry: after N add-checkpoint requests over loopback the registry is reset (as a
// registry shared with, or replaced by, something else would be) and the part still reports them;
// the next request feeds both the tally and the metric.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import type { SignaturePool } from '../../src/anchoring/verify-pool.ts';
import { startCosignPart } from '../../src/cosign/part.ts';
import type { NodeKeys } from '../../src/keys/node-keys.ts';
import { closeGracefully, listen } from '../../src/server/lifecycle.ts';
import { createServer } from '../../src/server/server.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import { cosignKeyC, seq, SyntheticLog, WITNESS_NAME } from '../helpers/cosign-harness.ts';

void test('cosign status counts: from the role tally, whatever the metrics registry holds', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-'));
  const store = SqliteStore.open(join(dir, 'witness.db'));
  const log = new SyntheticLog('tally.example/log', ed25519KeyFromSeed(seq(0x50)));
  const logsFile = join(dir, 'logs.json');
  // qpd 24: one token (capacity 1), so the second request that reaches the quota check is a 429.
  writeFileSync(logsFile, JSON.stringify({ logs: [{ origin: log.origin, keys: [log.vkey], qpd: 24 }] }));
  const metrics = new Registry();
  const part = await startCosignPart(
    {
      store: { cosign: store.cosign, capabilities: { multiWriter: false } },
      // the part reads only the cosign keys of NodeKeys
      keys: { cosign: [{ privateKey: cosignKeyC }] } as unknown as NodeKeys,
      name: WITNESS_NAME,
      origin: `${WITNESS_NAME}/anchors`,
      // no pool: the role verifies Ed25519 log signatures inline
      pool: undefined as unknown as SignaturePool,
      metrics,
      logger: pino({ level: 'silent' }),
      dev: false,
    },
    { logsFile },
  );
  const app = await createServer({ metrics, logger: false });
  assert.ok(part.register !== undefined);
  part.register(app);
  const { url } = await listen(app, { host: '127.0.0.1', port: 0 });
  const post = async (body: string): Promise<number> => (await fetch(`${url}/add-checkpoint`, { method: 'POST', body })).status;
  const scrape = async (): Promise<string> =>
    (await metrics.metrics())
      .split('\n')
      .filter((l) => l.startsWith('cosign_add_checkpoint_total{'))
      .join('\n');
  try {
    assert.equal(await post(log.request(0, 3)), 200, 'cosigned (takes the one token)');
    assert.equal(await post(log.request(0, 4)), 429, 'quota exceeded (refused)');
    assert.equal(await post(log.request(0, 5)), 429);
    assert.equal(await post('not a request'), 400, 'malformed: before the quota, no origin');
    assert.match(await scrape(), /outcome="cosigned"} 1/);

    metrics.resetMetrics();
    assert.doesNotMatch(await scrape(), /origin="tally\.example\/log"/, 'the registry holds none of it now');
    let row = (await part.status()).logs.find((l) => l.origin === log.origin);
    assert.deepEqual({ counted: row?.counted, refused: row?.refused, size: row?.size }, { counted: 1, refused: 2, size: 3 });

    // one more: the tally and the metric are both fed
    assert.equal(await post(log.request(0, 6)), 429);
    assert.match(await scrape(), /cosign_add_checkpoint_total\{origin="tally\.example\/log",outcome="quota_exceeded"} 1/);
    row = (await part.status()).logs.find((l) => l.origin === log.origin);
    assert.deepEqual({ counted: row?.counted, refused: row?.refused }, { counted: 1, refused: 3 });
  } finally {
    await closeGracefully(app, { timeoutMs: 5000 });
    await part[Symbol.asyncDispose]();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
