// No proof of possession is ever accepted twice (SPEC §7), across restarts included (issue 16 items
// 1 and 2):
//  * a real bridge restart over loopback: the used proof (iat 58 s ahead: a client clock running
//    fast) is pop_replayed after the restart, and a fresh proof is accepted at once;
//  * the one-second window: iat = T used at T − 60 is still refused at T + 60.5;
//  * property (fast-check, injected clock): random clock skews, use times and restarts, with the
//    in-memory store (and its pop_stale restart rule) and with the SQLite store kept across
//    restarts: at most one token per proof.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { pino } from 'pino';
import { buildTokenRequest } from '../../src/bridge/client.ts';
import { BridgeError } from '../../src/bridge/errors.ts';
import { checkBridgeConfig, startBridge } from '../../src/bridge/node.ts';
import { createBridgeServer } from '../../src/bridge/app.ts';
import { validateIssuer } from '../../src/bridge/issuer.ts';
import { StoreUnavailableError } from '../../src/store/errors.ts';
import type { BridgeConfig } from '../../src/bridge/node.ts';
import { MemoryNonceStore } from '../../src/bridge/nonces.ts';
import type { NonceStore } from '../../src/bridge/nonces.ts';
import { SqliteNonceStore } from '../../src/bridge/nonces-sqlite.ts';
import { TokenService } from '../../src/bridge/service.ts';
import { generateSigningKeyPem, loadSigningKey } from '../../src/bridge/signing.ts';
import type { SigningKey } from '../../src/bridge/signing.ts';
import { tempDir } from '../helpers/tmp.ts';
import { chain, DEV1, DEV2, freshNonce, ISSUER, NOW_MS, NOW_S, policy, request, ROOT, wire } from './_helpers.ts';

let tmp: { dir: string; cleanup: () => void };
let key: SigningKey;
before(async () => {
  tmp = tempDir('tb-replay-');
  key = await loadSigningKey(await generateSigningKeyPem('ES256'));
});
after(() => {
  tmp.cleanup();
});

const log = pino({ level: 'silent' });

async function post(url: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await fetch(`${url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
}

function liveRequest(iat: number): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  const links = chain(ROOT, [
    { device: DEV1, capabilities: ['deploy'], expiresAt: now + 600, timestamp: now - 10 },
    { device: DEV2, capabilities: ['deploy'], expiresAt: now + 600, timestamp: now - 10 },
  ]);
  return buildTokenRequest({
    chain: links,
    rootPublicKey: ROOT.hex,
    audience: 'sts.amazonaws.com',
    issuer: 'https://bridge.example',
    deviceKey: DEV2.key,
    iat,
    nonce: freshNonce(),
  });
}

async function restartCase(extra: Partial<BridgeConfig>): Promise<void> {
  const config: BridgeConfig = {
    host: '127.0.0.1',
    port: 0,
    keyDir: join(tmp.dir, `keys-${freshNonce()}`),
    issuer: 'https://bridge.example',
    rateLimit: null,
    alg: 'ES256',
    ...extra,
  };
  const used = liveRequest(Math.floor(Date.now() / 1000) + 58); // the client's clock runs 58 s fast
  let bridge = await startBridge(config, log);
  try {
    const first = await post(bridge.url, used);
    assert.equal(first.status, 200, JSON.stringify(first.json));
  } finally {
    await bridge.close();
  }
  bridge = await startBridge(config, log);
  try {
    const replay = await post(bridge.url, used);
    assert.equal(replay.status, 401, `the replayed proof minted a second token after the restart: ${JSON.stringify(replay.json)}`);
    assert.equal(replay.json.code, 'pop_replayed');
    const fresh = await post(bridge.url, liveRequest(Math.floor(Date.now() / 1000)));
    assert.equal(fresh.status, 200, `a fresh proof right after the restart: ${JSON.stringify(fresh.json)}`);
  } finally {
    await bridge.close();
  }
}

void test('restart (default durable store, SQLite in the key dir): the used proof is pop_replayed, a fresh one is accepted at once', async () => {
  await restartCase({});
});

void test('restart with --data-dir: nonces.sqlite lives there and carries over', async () => {
  await restartCase({ dataDir: join(tmp.dir, 'data') });
  assert.equal(statSync(join(tmp.dir, 'data', 'nonces.sqlite')).mode & 0o777, 0o600);
});

void test('restart with --nonce-store memory: the used proof is refused (pop_stale), as is every proof with iat ≤ start second + 60', async () => {
  const config: BridgeConfig = {
    host: '127.0.0.1',
    port: 0,
    keyDir: join(tmp.dir, 'keys-mem'),
    issuer: 'https://bridge.example',
    rateLimit: null,
    alg: 'ES256',
    nonceStore: 'memory',
  };
  const bridge0 = await startBridge({ ...config, startedAt: Date.now() - 600_000 }, log); // "long running"
  const used = liveRequest(Math.floor(Date.now() / 1000) + 58);
  try {
    assert.equal((await post(bridge0.url, used)).status, 200);
  } finally {
    await bridge0.close();
  }
  const bridge = await startBridge(config, log);
  try {
    const replay = await post(bridge.url, used);
    assert.equal(replay.json.code, 'pop_stale', JSON.stringify(replay.json));
    const fresh = await post(bridge.url, liveRequest(Math.floor(Date.now() / 1000)));
    assert.equal(fresh.json.code, 'pop_stale'); // the documented cost: about a minute without tokens
  } finally {
    await bridge.close();
  }
});

void test('a nonce is remembered until its iat can no longer be accepted: iat = T used at T − 60, refused at T + 30 and at T + 60.5', async () => {
  let now = (NOW_S - 60) * 1000;
  const svc = new TokenService({ policy: policy(), trustedRoots: () => undefined, signingKey: () => key, now: () => now });
  const body = request({ iat: NOW_S });
  await svc.exchange(wire(body));
  for (const at of [NOW_S + 30, NOW_S + 60.5, NOW_S + 60.999]) {
    now = Math.round(at * 1000);
    await assert.rejects(
      svc.exchange(wire(body)),
      (e: unknown) => e instanceof BridgeError && e.code === 'pop_replayed',
      `accepted again at T + ${at - NOW_S}`,
    );
  }
  now = (NOW_S + 61) * 1000;
  await assert.rejects(svc.exchange(wire(body)), (e: unknown) => e instanceof BridgeError && e.code === 'pop_stale');
});

/** Uses of one proof (iat = NOW_S) at offsets from NOW_MS, with restarts in between. */
const events = fc.array(fc.record({ at: fc.integer({ min: -62_000, max: 62_999 }), restart: fc.boolean() }), {
  minLength: 2,
  maxLength: 8,
});

async function acceptances(
  evs: { at: number; restart: boolean }[],
  body: unknown,
  storeAt: (restartMs: number) => { nonces: NonceStore; startedAt: number | null },
): Promise<number> {
  const sorted = [...evs].sort((a, b) => a.at - b.at);
  let now = 0;
  const mk = (restartMs: number): TokenService => {
    const s = storeAt(restartMs);
    return new TokenService({
      policy: policy({ startedAt: s.startedAt }),
      trustedRoots: () => undefined,
      signingKey: () => key,
      nonces: s.nonces,
      now: () => now,
    });
  };
  let svc = mk(NOW_MS - 3_600_000);
  let accepted = 0;
  for (const e of sorted) {
    now = NOW_MS + e.at;
    if (e.restart) {
      await svc.nonces.close();
      svc = mk(now);
      continue;
    }
    try {
      await svc.exchange(wire(body));
      accepted++;
    } catch (err) {
      if (!(err instanceof BridgeError)) throw err;
    }
  }
  await svc.nonces.close();
  return accepted;
}

void test('property: no proof is accepted twice, whatever the clock skew, the use times and the restarts (in-memory store + restart rule)', async () => {
  const body = request({ iat: NOW_S });
  let once = 0;
  await fc.assert(
    fc.asyncProperty(events, async (evs) => {
      const n = await acceptances(evs, body, (restartMs) => ({ nonces: new MemoryNonceStore(), startedAt: restartMs }));
      assert.ok(n <= 1, `accepted ${n} times`);
      once += n;
    }),
    { numRuns: 300 },
  );
  assert.ok(once > 0, 'no run accepted the proof at all'); // the property is not met by refusing everything
});

void test('property: no proof is accepted twice across restarts with the durable SQLite store (no restart rule)', async () => {
  const body = request({ iat: NOW_S });
  let run = 0;
  let once = 0;
  await fc.assert(
    fc.asyncProperty(events, async (evs) => {
      const path = join(tmp.dir, 'prop', `${++run}`, 'nonces.sqlite');
      const n = await acceptances(evs, body, () => ({
        nonces: SqliteNonceStore.open(path, { clock: () => NOW_MS - 62_000 }),
        startedAt: null,
      }));
      assert.ok(n <= 1, `accepted ${n} times`);
      once += n;
    }),
    { numRuns: 50 },
  );
  assert.ok(once > 0, 'no run accepted the proof at all');
});

void test('a nonce store that cannot be written: 503 store_unavailable (no token), and the next request works without a restart', async () => {
  const inner = new MemoryNonceStore();
  let failNext = true;
  const flaky: NonceStore = {
    kind: 'sqlite',
    capacity: inner.capacity,
    get size() {
      return inner.size;
    },
    consume: (k, iat, now) => {
      if (failNext) {
        failNext = false;
        return Promise.reject(new StoreUnavailableError('nonce store: SQLITE_FULL: database or disk is full'));
      }
      return inner.consume(k, iat, now);
    },
    peek: (k, iat, now) => inner.peek(k, iat, now),
    probe: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
  const service = new TokenService({
    policy: policy({ startedAt: null }),
    trustedRoots: () => undefined,
    signingKey: () => key,
    nonces: flaky,
    now: () => NOW_MS,
  });
  const keys = { active: key, entries: [], jwks: () => ({ keys: [key.jwk] }), algs: () => [key.alg] };
  const { app } = await createBridgeServer({ service, keys, issuer: validateIssuer(ISSUER, false) }, { rateLimit: null });
  try {
    const body = JSON.stringify(request());
    const send = () => app.inject({ method: 'POST', url: '/token', payload: body, headers: { 'content-type': 'application/json' } });
    const r1 = await send();
    assert.equal(r1.statusCode, 503);
    assert.equal((JSON.parse(r1.body) as { code: string }).code, 'store_unavailable');
    assert.ok(!r1.body.includes('access_token'));
    const r2 = await send(); // the nonce was not recorded: the same proof is accepted now
    assert.equal(r2.statusCode, 200, r2.body);
    assert.equal((JSON.parse((await send()).body) as { code: string }).code, 'pop_replayed');
  } finally {
    await app.close();
  }
});

void test('SPEC §7 check order: a replayed proof fails on the nonce read, before the signature; a failed signature consumes no nonce', async () => {
  const nonces = new MemoryNonceStore();
  let signerUp = false;
  let signed = 0;
  const service = new TokenService({
    policy: policy({ startedAt: null }),
    trustedRoots: () => undefined,
    signingKey: () => {
      if (!signerUp) throw new Error('signer down');
      signed++;
      return key;
    },
    nonces,
    now: () => NOW_MS,
  });
  const body = request();
  await assert.rejects(service.exchange(body), /signer down/);
  assert.equal(nonces.size, 0, 'the proof that got no token did not consume its nonce');
  signerUp = true;
  await service.exchange(body); // the same proof, once the signer is back
  assert.equal(signed, 1);
  await assert.rejects(service.exchange(body), (e: unknown) => (e as BridgeError).code === 'pop_replayed');
  assert.equal(signed, 1, 'the replay never reached the signer');
});

void test('configuration: --store must be postgres://, and excludes --nonce-store memory', () => {
  const base: BridgeConfig = { host: '127.0.0.1', port: 0, keyDir: '/nonexistent', issuer: ISSUER };
  assert.throws(() => {
    checkBridgeConfig({ ...base, store: 'mysql://db/x' });
  }, /--store must be a postgres:\/\/ URL/);
  assert.throws(() => {
    checkBridgeConfig({ ...base, store: 'postgres://db/x', nonceStore: 'memory' });
  }, /exclude each other/);
  checkBridgeConfig({ ...base, store: 'postgresql://db/x' });
});
