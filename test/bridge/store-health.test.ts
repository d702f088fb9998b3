/**
 * Health and logs tell the truth (issue 27 item 9). The bridge's `/health` said ok while its
 * PostgreSQL nonce store was down and every token got 503; a store outage logged a stack per
 * request; the TLS listener's line said http://. Now `/health` stays 200 (SPEC §6) with `status`
 * `degraded` and `store` {kind, state, since, last_error}; an outage is one log line when it
 * starts and one when it ends; the listening line says https://; /metrics has `build_info`.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createBridgeServer } from '../../src/bridge/app.ts';
import { buildTokenRequest } from '../../src/bridge/client.ts';
import { validateIssuer } from '../../src/bridge/issuer.ts';
import { startBridge } from '../../src/bridge/node.ts';
import { MemoryNonceStore, type NonceStore } from '../../src/bridge/nonces.ts';
import { TokenService } from '../../src/bridge/service.ts';
import { generateSigningKeyPem, loadSigningKey, type SigningKey } from '../../src/bridge/signing.ts';
import { StoreUnavailableError } from '../../src/store/errors.ts';
import { StoreHealth } from '../../src/store/health.ts';
import { buildInfo } from '../../src/release/build-info.ts';
import { pgSkip, startPgServer, type PgServer } from '../helpers/pg-server.ts';
import { until } from '../helpers/poll.ts';
import { selfSignedCertificate } from '../helpers/tls.ts';
import { capturingLog, fetchAgain, msgs } from '../helpers/store-outage.ts';
import { tempDir } from '../helpers/tmp.ts';
import { chain, DEV1, DEV2, ISSUER, NOW_MS, policy, request, ROOT } from './_helpers.ts';

let tmp: { dir: string; cleanup: () => void };
let key: SigningKey;
let pgServer: PgServer | undefined;
before(async () => {
  tmp = tempDir('tb-store-health-');
  key = await loadSigningKey(await generateSigningKeyPem('ES256'));
});
after(async () => {
  await pgServer?.stop();
  tmp.cleanup();
});

void test('a nonce store outage: /health 200 degraded naming the store, one log line per outage and one at recovery, no stack', async () => {
  const inner = new MemoryNonceStore();
  let down = false;
  const outage = () => new StoreUnavailableError('nonce store: PostgreSQL connection: connect ECONNREFUSED 127.0.0.1:5432');
  const flaky: NonceStore = {
    kind: 'postgres',
    capacity: inner.capacity,
    get size() {
      return inner.size;
    },
    consume: (k, iat, now) => (down ? Promise.reject(outage()) : inner.consume(k, iat, now)),
    peek: (k, iat, now) => (down ? Promise.reject(outage()) : inner.peek(k, iat, now)),
    probe: () => (down ? Promise.reject(outage()) : Promise.resolve()),
    close: () => Promise.resolve(),
  };
  const { log, lines } = capturingLog();
  const health = new StoreHealth('postgres', log, { probe: () => flaky.probe() });
  const service = new TokenService({
    policy: policy({ startedAt: null }),
    trustedRoots: () => undefined,
    signingKey: () => key,
    nonces: flaky,
    now: () => NOW_MS,
  });
  const keys = { active: key, entries: [], jwks: () => ({ keys: [key.jwk] }), algs: () => [key.alg] };
  const { app } = await createBridgeServer(
    { service, keys, issuer: validateIssuer(ISSUER, false), store: health },
    { rateLimit: null, logger: log, storeHealth: health },
  );
  const send = () =>
    app.inject({ method: 'POST', url: '/token', payload: JSON.stringify(request()), headers: { 'content-type': 'application/json' } });
  const healthNow = async () => {
    const r = await app.inject({ url: '/health' });
    assert.equal(r.statusCode, 200, 'SPEC §6: /health stays 200');
    return r.json<{ status: string; store: { kind: string; state: string; since: string; last_error: string | null } }>();
  };
  try {
    const up = await healthNow();
    assert.equal(up.status, 'ok');
    assert.deepEqual({ ...up.store, since: '' }, { kind: 'postgres', state: 'up', since: '', last_error: null });

    for (let episode = 1; episode <= 2; episode++) {
      down = true;
      for (let i = 0; i < 5; i++) {
        const r = await send();
        assert.equal(r.statusCode, 503);
        assert.equal(r.json<{ code: string }>().code, 'store_unavailable');
      }
      const degraded = await healthNow();
      assert.equal(degraded.status, 'degraded');
      assert.equal(degraded.store.state, 'down');
      assert.match(degraded.store.last_error ?? '', /ECONNREFUSED/);
      assert.equal(msgs(lines(), /^postgres store unavailable/).length, episode, 'one line per outage, not one per request');
      down = false;
      await health.probeNow(); // what the 5 s timer does
      assert.equal((await healthNow()).status, 'ok');
      const back = msgs(lines(), /^postgres store available again after/);
      assert.equal(back.length, episode);
      assert.equal(back.at(-1)!.refused_requests, 5);
      assert.equal((await send()).statusCode, 200);
    }
    const all = lines();
    assert.deepEqual(msgs(all, /^service unavailable$/), [], 'no per-request line for a store outage');
    assert.ok(!JSON.stringify(all).includes('"stack"'), 'no stack trace in the log');
  } finally {
    await app.close();
  }
});

void test('TLS bridge: the listening line says https://, /health and the start line name the store kind, /metrics has build_info', async () => {
  const certFile = join(tmp.dir, 'cert.pem');
  const keyFile = join(tmp.dir, 'key.pem');
  selfSignedCertificate({ certFile, keyFile, host: 'localhost', subjectAltName: 'IP:127.0.0.1' });
  const { log, lines } = capturingLog();
  const bridge = await startBridge(
    {
      host: '127.0.0.1',
      port: 0,
      keyDir: join(tmp.dir, 'keys'),
      issuer: ISSUER,
      tlsCertFile: certFile,
      tlsKeyFile: keyFile,
      rateLimit: null,
    },
    log,
  );
  try {
    assert.match(bridge.url, /^https:\/\//);
    const listening = msgs(lines(), /^Server listening at /);
    assert.deepEqual(
      listening.map((l) => l.msg),
      [`Server listening at ${bridge.url}`],
    );
    const started = msgs(lines(), /^token bridge started$/);
    assert.equal(started[0]?.nonce_store, 'sqlite');
    const h = await bridge.app.inject({ url: '/health' });
    assert.equal(h.json<{ store: { kind: string } }>().store.kind, 'sqlite');
    const metrics = (await bridge.app.inject({ url: '/metrics' })).body;
    const b = buildInfo();
    assert.ok(
      metrics.includes(`build_info{version="${b.version}",commit="${b.commit}",node="${b.node}"} 1`),
      metrics
        .split('\n')
        .filter((l) => l.includes('build_info'))
        .join('\n'),
    );
  } finally {
    await bridge.close();
  }
});

void test(
  'PostgreSQL nonce store stopped and started again: 503s, /health degraded then ok, two log lines in all',
  { skip: pgSkip() },
  async () => {
    pgServer ??= await startPgServer();
    const url = await pgServer.createDatabase('tbh');
    const { log, lines } = capturingLog();
    const bridge = await startBridge(
      {
        host: '127.0.0.1',
        port: 0,
        keyDir: join(tmp.dir, 'pg-keys'),
        issuer: ISSUER,
        store: url,
        rateLimit: null,
        noncePurgeIntervalMs: 600_000,
      },
      log,
    );
    const live = () => {
      const now = Math.floor(Date.now() / 1000);
      const links = chain(ROOT, [
        { device: DEV1, capabilities: ['deploy'], expiresAt: now + 600, timestamp: now - 10 },
        { device: DEV2, capabilities: ['deploy'], expiresAt: now + 600, timestamp: now - 10 },
      ]);
      return buildTokenRequest({
        chain: links,
        rootPublicKey: ROOT.hex,
        audience: 'sts.amazonaws.com',
        issuer: ISSUER,
        deviceKey: DEV2.key,
        iat: now,
      });
    };
    const send = async () => {
      const r = await fetchAgain(`${bridge.url}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(live()),
      });
      return { status: r.status, body: (await r.json()) as { code?: string } };
    };
    const healthNow = async () =>
      (await (await fetchAgain(`${bridge.url}/health`)).json()) as { status: string; store: { kind: string; state: string } };
    try {
      assert.equal((await send()).status, 200);
      assert.deepEqual([(await healthNow()).status, (await healthNow()).store.kind], ['ok', 'postgres']);
      pgServer.halt();
      for (let i = 0; i < 3; i++) {
        const r = await send();
        assert.equal(r.status, 503);
        assert.equal(r.body.code, 'store_unavailable');
      }
      const degraded = await healthNow();
      assert.deepEqual([degraded.status, degraded.store.kind, degraded.store.state], ['degraded', 'postgres', 'down']);
      pgServer.resume();
      // The probe (every 5 s) notices the recovery without any request.
      await until('the probe to see the store again', async () => ((await healthNow()).status === 'ok' ? true : undefined), 60_000);
      assert.equal((await send()).status, 200);
      const all = lines();
      assert.equal(msgs(all, /^postgres store unavailable/).length, 1);
      assert.equal(msgs(all, /^postgres store available again/).length, 1);
      assert.deepEqual(msgs(all, /^service unavailable$/), []);
      assert.ok(!JSON.stringify(all).includes('"stack"'), 'no stack trace in the log');
    } finally {
      await bridge.close();
    }
  },
);
