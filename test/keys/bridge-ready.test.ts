// SPEC §1.1 readiness on the token bridge: GET /live 200 {"live":true}; GET /ready 200 {"ready":true}
// while the nonce store is up, the active key's signer is ok and (SPEC §7) the replica's clock is
// within 30 s of its PostgreSQL store's; else 503 not_ready naming each failure. Both bypass the
// /token rate limit. (Before: the bridge had no /live or /ready route at all: 404.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBridgeServer } from '../../src/bridge/app.ts';
import { validateIssuer } from '../../src/bridge/issuer.ts';
import { MemoryNonceStore, type NonceStore } from '../../src/bridge/nonces.ts';
import { TokenService } from '../../src/bridge/service.ts';
import { generateSigningKeyPem, loadSigningKey } from '../../src/bridge/signing.ts';
import type { Signer, SignerStatus } from '../../src/keys/signer.ts';
import { StoreUnavailableError } from '../../src/store/errors.ts';
import { StoreHealth } from '../../src/store/health.ts';
import { pino } from 'pino';
import { ISSUER, policy } from '../bridge/_helpers.ts';

void test('bridge /live and /ready: the store, the token signer and the clock skew each make it not ready', async () => {
  const key = await loadSigningKey(await generateSigningKeyPem('ES256'));
  const inner = new MemoryNonceStore();
  let skew: number | undefined;
  // The MemoryNonceStore with a PostgreSQL store's clock-skew reading.
  const nonces = Object.create(inner, {
    kind: { value: 'postgres' },
    clockSkewMs: { get: () => skew },
  }) as NonceStore;
  let storeDown = false;
  const store = new StoreHealth('postgres', pino({ level: 'silent' }), {
    probe: () => (storeDown ? Promise.reject(new StoreUnavailableError('nonce store: connect ECONNREFUSED')) : Promise.resolve()),
  });
  let state: SignerStatus['state'] = 'ok';
  const signer = {
    status: (): SignerStatus => ({
      key: `bridge:${key.kid}`,
      ref: 'pkcs11:…',
      state,
      since: '2026-01-01T00:00:00Z',
      last_error: state === 'ok' ? null : 'CKR_DEVICE_REMOVED',
    }),
  } as unknown as Signer;
  const service = new TokenService({ policy: policy(), trustedRoots: () => undefined, signingKey: () => key, nonces });
  const keys = { active: key, entries: [], jwks: () => ({ keys: [key.jwk] }), algs: () => [key.alg], signers: () => [signer] };
  const { app } = await createBridgeServer(
    { service, keys, issuer: validateIssuer(ISSUER, false), store },
    { rateLimit: { rps: 1, burst: 1 }, logger: pino({ level: 'silent' }), storeHealth: store },
  );
  const ready = async () => {
    const r = await app.inject({ url: '/ready' });
    return { status: r.statusCode, body: r.json<{ ready?: boolean; code?: string; detail?: string }>() };
  };
  try {
    for (let i = 0; i < 3; i++) {
      const live = await app.inject({ url: '/live' });
      assert.equal(live.statusCode, 200);
      assert.deepEqual(live.json(), { live: true });
      assert.deepEqual(await ready(), { status: 200, body: { ready: true } });
    }
    state = 'unavailable';
    let r = await ready();
    assert.equal(r.status, 503);
    assert.equal(r.body.code, 'not_ready');
    assert.match(r.body.detail!, new RegExp(`signer bridge:${key.kid}: CKR_DEVICE_REMOVED`));
    const health = (await app.inject({ url: '/health' })).json<{ status: string; signers: SignerStatus[] }>();
    assert.equal(health.status, 'degraded');
    assert.equal(health.signers[0]!.state, 'unavailable');
    state = 'ok';
    skew = 29_000;
    assert.equal((await ready()).status, 200, '29 s is within the limit');
    skew = -90_000;
    r = await ready();
    assert.equal(r.status, 503);
    assert.match(r.body.detail!, /clock: -90 s from the nonce store database's clock/);
    skew = undefined;
    storeDown = true;
    await store.probeNow();
    r = await ready();
    assert.equal(r.status, 503);
    assert.match(r.body.detail!, /store: down/);
  } finally {
    await app.close();
  }
});
