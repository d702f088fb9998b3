/**
 * The witness's `/health` names its store and tells when it is down; a store outage is one log
 * line when it starts and one when it ends, not a stack per request; /metrics has `build_info`
 * (issue 27 item 9).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem } from '../../src/crypto/ed25519.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { DEFAULT_QUOTA } from '../../src/anchor/quota-window.ts';
import { buildInfo } from '../../src/release/build-info.ts';
import { startWitness, type WitnessConfig } from '../../src/witness/node.ts';
import { fill } from '../helpers/anchors.ts';
import { pgSkip, startPgServer, type PgServer } from '../helpers/pg-server.ts';
import { until } from '../helpers/poll.ts';
import { capturingLog, fetchAgain, msgs } from '../helpers/store-outage.ts';
import { tempDir } from '../helpers/tmp.ts';

let tmp: { dir: string; cleanup: () => void };
let pgServer: PgServer | undefined;
let base: WitnessConfig;
before(() => {
  tmp = tempDir('aw-store-health-');
  const keyFile = join(tmp.dir, 'witness.pem');
  writeNewKeyFile(keyFile, ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(0x01))));
  base = {
    host: '127.0.0.1',
    port: 0,
    dataDir: join(tmp.dir, 'data'),
    keyFile,
    name: 'witness.test/w1',
    roles: ['anchor'],
    allowUnderivedSeeds: false,
    dev: false,
    quota: DEFAULT_QUOTA,
    verifyThreads: 0,
  };
});
after(async () => {
  await pgServer?.stop();
  tmp.cleanup();
});

void test('witness /health names the store kind (sqlite), status ok; /metrics has build_info', async () => {
  const { log } = capturingLog();
  const node = await startWitness(base, log);
  try {
    const h = (await (await fetchAgain(`${node.url}/health`)).json()) as {
      status: string;
      store: { kind: string; state: string; last_error: null };
    };
    assert.equal(h.status, 'ok');
    assert.deepEqual([h.store.kind, h.store.state, h.store.last_error], ['sqlite', 'up', null]);
    const b = buildInfo();
    const metrics = await (await fetchAgain(`${node.url}/metrics`)).text();
    assert.ok(metrics.includes(`build_info{version="${b.version}",commit="${b.commit}",node="${b.node}"} 1`));
  } finally {
    await node.close();
  }
});

void test(
  'witness on PostgreSQL stopped and started again: /health 200 degraded then ok, one log line each way, no stack',
  { skip: pgSkip() },
  async () => {
    pgServer ??= await startPgServer();
    const store = await pgServer.createDatabase('awh');
    const { log, lines } = capturingLog();
    const node = await startWitness({ ...base, dataDir: join(tmp.dir, 'pg-data'), store }, log);
    const health = async () => {
      const r = await fetchAgain(`${node.url}/health`);
      assert.equal(r.status, 200, 'SPEC §6: /health stays 200');
      return (await r.json()) as { status: string; store: { kind: string; state: string; last_error: string | null } };
    };
    try {
      assert.deepEqual(Object.values(await health()).slice(0, 1), ['ok']);
      assert.equal((await health()).store.kind, 'postgres');
      pgServer.halt();
      for (let i = 0; i < 3; i++) {
        const r = await fetchAgain(`${node.url}/v1/anchor/${'ab'.repeat(32)}`);
        assert.equal(r.status, 503, await r.text());
      }
      const down = await health();
      assert.deepEqual([down.status, down.store.state], ['degraded', 'down']);
      assert.match(down.store.last_error ?? '', /PostgreSQL/);
      pgServer.resume();
      await until('the probe to see the store again', async () => ((await health()).status === 'ok' ? true : undefined), 60_000);
      const all = lines();
      assert.equal(msgs(all, /^postgres store unavailable/).length, 1, JSON.stringify(msgs(all, /store/)));
      assert.equal(msgs(all, /^postgres store available again/).length, 1);
      assert.deepEqual(msgs(all, /^service unavailable$/), []);
      assert.ok(!JSON.stringify(all).includes('"stack"'), 'no stack trace in the log');
    } finally {
      await node.close();
    }
  },
);
