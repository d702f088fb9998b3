// Bridge replicas (SPEC §7 "Replicas", issue 16 item 4): two `token-bridge serve` nodes behind one
// issuer, one throwaway PostgreSQL database as the shared nonce store, one shared key directory.
//  * the same proof sent to both at once → exactly one token (the other pop_replayed), every round;
//  * the store is bound to the issuer: a bridge with another issuer is refused at start;
//  * `keys rotate` on the shared key directory shows up in the JWKS of both replicas within the
//    (test-shortened) refresh interval, and the promoted key signs on both.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pino } from 'pino';
import { buildTokenRequest } from '../../src/bridge/client.ts';
import { KeyDir } from '../../src/bridge/key-dir.ts';
import { startBridge } from '../../src/bridge/node.ts';
import type { BridgeConfig, RunningBridge } from '../../src/bridge/node.ts';
import { pgSkip, startPgServer, type PgServer } from '../helpers/pg-server.ts';
import { tempDir } from '../helpers/tmp.ts';
import { chain, DEV1, DEV2, freshNonce, ROOT } from './_helpers.ts';

const ISSUER = 'https://bridge.example';
const REFRESH_MS = 300;
const log = pino({ level: 'silent' });

async function post(url: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await fetch(`${url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
}

async function getJson<T>(url: string): Promise<T> {
  return (await (await fetch(url)).json()) as T;
}

function liveRequest(): Record<string, unknown> {
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
    nonce: freshNonce(),
  });
}

async function waitFor(what: string, ms: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > ms) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

void describe('two bridge replicas on one PostgreSQL nonce store and one key directory', { skip: pgSkip(), timeout: 120_000 }, () => {
  let server: PgServer;
  let tmp: { dir: string; cleanup: () => void };
  let config: BridgeConfig;
  let replicas: RunningBridge[] = [];

  before(async () => {
    server = await startPgServer();
    tmp = tempDir('tb-replicas-');
    config = {
      host: '127.0.0.1',
      port: 0,
      keyDir: join(tmp.dir, 'keys'),
      issuer: ISSUER,
      rateLimit: null,
      alg: 'ES256',
      store: await server.createDatabase('tbr'),
      keyRefreshIntervalMs: REFRESH_MS,
    };
    // Both start at once: first key creation, schema creation and issuer binding race on purpose.
    replicas = await Promise.all([startBridge(config, log), startBridge(config, log)]);
  });

  after(async () => {
    for (const r of replicas) await r.close();
    await server.stop();
    tmp.cleanup();
  });

  void test('they publish one JWKS and both use the PostgreSQL store', async () => {
    const [a, b] = replicas;
    assert.deepEqual(await getJson(`${a!.url}/.well-known/jwks.json`), await getJson(`${b!.url}/.well-known/jwks.json`));
    assert.equal(a!.nonces.kind, 'postgres');
    assert.equal(b!.nonces.kind, 'postgres');
  });

  void test('the same proof sent to both at once: exactly one token, the other pop_replayed (20 rounds)', async () => {
    const [a, b] = replicas;
    for (let round = 0; round < 20; round++) {
      const body = liveRequest();
      const answers = await Promise.all([post(a!.url, body), post(b!.url, body)]);
      const statuses = answers.map((r) => (r.status === 200 ? 200 : `${r.status} ${String(r.json.code)}`)).sort();
      assert.deepEqual(statuses, [200, '401 pop_replayed'], `round ${round}`);
      // and each replica refuses it afterwards
      for (const r of replicas) assert.equal((await post(r.url, body)).json.code, 'pop_replayed');
    }
  });

  void test('the store is bound to its issuer: another issuer is refused at start', async () => {
    await assert.rejects(
      startBridge({ ...config, issuer: 'https://other.example', keyDir: join(tmp.dir, 'other-keys') }, log),
      (e: unknown) => (e as { code?: string }).code === 'store_issuer_mismatch',
    );
  });

  void test('keys rotate on the shared key directory: in both JWKS within the refresh interval, then signing on both', async () => {
    const entry = await new KeyDir(config.keyDir!).rotate(Math.floor(Date.now() / 1000), 1, 'ES256');
    assert.equal(entry.state, 'next');
    for (const r of replicas) {
      const took = await waitFor(`new key ${entry.kid} in ${r.url} JWKS`, 10 * REFRESH_MS, async () => {
        const jwks = await getJson<{ keys: { kid: string }[] }>(`${r.url}/.well-known/jwks.json`);
        return jwks.keys.some((k) => k.kid === entry.kid);
      });
      assert.ok(took <= 10 * REFRESH_MS);
    }
    // not_before is 1 s ahead: after it, both replicas promote it (whichever writes keys.json first)
    for (const r of replicas) {
      await waitFor(
        `${r.url} signing with ${entry.kid}`,
        2000 + 10 * REFRESH_MS,
        async () => (await getJson<{ active_kid: string }>(`${r.url}/health`)).active_kid === entry.kid,
      );
      const issued = await post(r.url, liveRequest());
      assert.equal(issued.status, 200);
      const header = JSON.parse(Buffer.from(String(issued.json.access_token).split('.')[0]!, 'base64url').toString()) as { kid: string };
      assert.equal(header.kid, entry.kid);
    }
    assert.deepEqual(
      await getJson(`${replicas[0]!.url}/.well-known/jwks.json`),
      await getJson(`${replicas[1]!.url}/.well-known/jwks.json`),
    );
  });
});
