// Bridge replicas whose clocks differ (SPEC §7 rev 4, issue 25 item 4). Two `token-bridge serve`
// nodes share one PostgreSQL nonce store; replica A's clock runs 30 s ahead of replica B's. Time is
// injected: one "world" clock W drives B (W), A (W + 30 s) and the stand-in for the database
// server's clock (W), and the test moves W forward instead of waiting.
//
// The reproduction: B accepts a proof whose iat is 60 s ahead of it (allowed: ±60 s). Its nonce
// expires at use + 121 s. 91 s later A's clock reads use + 121 s: if A purged with its own clock it
// would delete the row, while B (at use + 91 s, iat 31 s away) still accepts that proof — and did,
// minting a second token from the same proof. With expiry and purging on the database's clock the
// row is live until the database says so: exactly one token, the second attempt `pop_replayed`.
// A third replica C runs 90 s behind: what it accepts on its own clock is refused at commit, where
// the database's clock checks the proof's iat (SPEC §7 rev 4), and its measured skew is exported.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pino } from 'pino';
import { buildTokenRequest } from '../../src/bridge/client.ts';
import { startBridge } from '../../src/bridge/node.ts';
import type { RunningBridge } from '../../src/bridge/node.ts';
import { pgSkip, startPgServer, type PgServer } from '../helpers/pg-server.ts';
import { tempDir } from '../helpers/tmp.ts';
import { chain, DEV1, DEV2, freshNonce, ROOT } from './_helpers.ts';

const ISSUER = 'https://bridge.example';
const PURGE_MS = 50;
const log = pino({ level: 'silent' });

async function post(url: string, body: unknown): Promise<string> {
  const r = await fetch(`${url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await r.json()) as { code?: string };
  return r.status === 200 ? '200' : `${r.status} ${String(json.code)}`;
}

/** A request whose proof `iat` is `iatSec`; the chain is valid for ten minutes either side of it. */
function request(iatSec: number): Record<string, unknown> {
  const links = chain(ROOT, [
    { device: DEV1, capabilities: ['deploy'], expiresAt: iatSec + 600, timestamp: iatSec - 600 },
    { device: DEV2, capabilities: ['deploy'], expiresAt: iatSec + 600, timestamp: iatSec - 600 },
  ]);
  return buildTokenRequest({
    chain: links,
    rootPublicKey: ROOT.hex,
    audience: 'sts.amazonaws.com',
    issuer: ISSUER,
    deviceKey: DEV2.key,
    iat: iatSec,
    nonce: freshNonce(),
  });
}

const sleep = (ms: number): Promise<void> =>
  new Promise((r) => {
    setTimeout(r, ms);
  });

void describe('bridge replicas with clocks 30 s apart on one PostgreSQL nonce store', { skip: pgSkip(), timeout: 120_000 }, () => {
  let server: PgServer;
  let tmp: { dir: string; cleanup: () => void };
  const replicas: RunningBridge[] = [];
  /** The world's time offset from the real clock (ms); moving it moves every clock below. */
  let shift = 0;
  const world = (): number => Date.now() + shift;

  before(async () => {
    server = await startPgServer();
    tmp = tempDir('tb-replica-clocks-');
    const base = {
      host: '127.0.0.1',
      port: 0,
      keyDir: join(tmp.dir, 'keys'),
      issuer: ISSUER,
      rateLimit: null,
      alg: 'ES256' as const,
      store: await server.createDatabase('tbc'),
      noncePurgeIntervalMs: PURGE_MS,
      storeDatabaseClock: world,
    };
    replicas.push(await startBridge({ ...base, clock: () => world() + 30_000 }, log)); // A: 30 s ahead
    replicas.push(await startBridge({ ...base, clock: world }, log)); // B: on time
    replicas.push(await startBridge({ ...base, clock: () => world() - 90_000 }, log)); // C: 90 s behind
  });

  after(async () => {
    for (const r of replicas) await r.close();
    await server.stop();
    tmp.cleanup();
  });

  void test('a proof used on B, 91 s later (A reads use + 121 s, purging): one token in all, B answers pop_replayed', async () => {
    const [a, b] = replicas as [RunningBridge, RunningBridge];
    const iat = Math.floor(world() / 1000) + 60; // B accepts it (60 s ahead), A too (30 s ahead)
    const body = request(iat);
    const answers: string[] = [];
    answers.push(await post(b.url, body));
    assert.equal(answers[0], '200', 'B accepts the proof once');
    answers.push(await post(a.url, body));
    assert.equal(answers[1], '401 pop_replayed', 'A refuses it right after');

    shift += 91_000; // B: use + 91 s (iat 31 s away: fresh); A: use + 121 s (iat 61 s away: stale)
    await sleep(10 * PURGE_MS); // both replicas purge several times at the new time
    answers.push(await post(b.url, body));
    answers.push(await post(a.url, body));
    assert.deepEqual(answers.slice(2), ['401 pop_replayed', '401 pop_stale'], 'after the purges: B still refuses the replay');
    assert.equal(answers.filter((x) => x === '200').length, 1, `one token from one proof: ${answers.join(', ')}`);
  });

  void test("a replica 90 s behind: a proof fresh on its own clock is refused at commit on the database's clock (pop_stale)", async () => {
    const c = replicas[2]!;
    const body = request(Math.floor((world() - 90_000) / 1000)); // iat = C's second: C's own check passes
    assert.equal(await post(c.url, body), '401 pop_stale');
    // nothing was recorded: the same proof is not a replay on B either, just as stale there
    assert.equal(await post(replicas[1]!.url, body), '401 pop_stale');
  });

  void test('each replica measures its clock against the database: A about −30 s, B about 0, C about +90 s', async () => {
    await new Promise((r) => setTimeout(r, 4 * PURGE_MS));
    const [a, b, c] = replicas.map((r) => r.nonces.clockSkewMs);
    assert.ok(Math.abs(a! + 30_000) < 5_000, `A's skew ${a} ms`);
    assert.ok(Math.abs(b!) < 5_000, `B's skew ${b} ms`);
    assert.ok(Math.abs(c! - 90_000) < 5_000, `C's skew ${c} ms`);
    const metrics = await (await fetch(`${replicas[2]!.url}/metrics`)).text();
    const line = /^bridge_nonce_store_clock_skew_seconds (\S+)$/m.exec(metrics);
    assert.ok(line !== null && Math.abs(Number(line[1]) - 90) < 5, line?.[0] ?? 'no clock skew gauge');
  });
});
