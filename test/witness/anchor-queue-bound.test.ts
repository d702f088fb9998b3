// Issue 16 item 5: the sequencer's queue is bounded by --max-in-flight even when requests time out.
// A 408 releases the request's in-flight slot; before the fix its anchor stayed in the group-commit
// queue, so with a stalled store every 408 + resend added one more queued anchor and the queue grew
// past the bound. Now an anchor whose request was abandoned (deadline passed, client gone) before
// its batch started is dropped: never logged, never acknowledged.
//
// Real loopback sockets, a fresh connection per request (408 closes the connection), a store whose
// commits wait on a gate, --max-in-flight 4 and a 400 ms request deadline. Some clients also hang up
// before their deadline (client gone). Run with the Ed25519 worker pool (the node's default) and
// without it (--verify-threads 0: the anchor joins the queue in the same turn its handler starts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pino } from 'pino';
import { encodeAnchor } from '../../src/anchor/codec.ts';
import { cosignMessage } from '../../src/anchor/messages.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import { parseRegistry } from '../../src/anchor/registry.ts';
import type { Anchor } from '../../src/anchor/types.ts';
import { verifyAnchorResponse, type AnchorResponseBody } from '../../src/verify/receipt.ts';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { SignaturePool } from '../../src/anchoring/verify-pool.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { createServer } from '../../src/server/server.ts';
import { listen } from '../../src/server/lifecycle.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import type { StoreTransaction, WitnessStore } from '../../src/store/types.ts';
import { AnchorService } from '../../src/anchoring/service.ts';
import { TransparencyLog } from '../../src/log/log.ts';
import { LogSigner } from '../../src/log/signer.ts';
import { registerWitnessRoutes } from '../../src/witness/routes.ts';
import { registerAnchorRoutes } from '../../src/anchoring/routes.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { httpRequest, sleep, toJson } from '../helpers/rel-common.ts';
import { tempDir } from '../helpers/tmp.ts';

const NAME = 'witness.example/w1';
const ORIGIN = 'witness.example/w1/anchors';
const IN_FLIGHT = 4;
const CLIENTS = 12;
const TIMEOUT_MS = 400;
const STALL_MS = 2_500;

const witnessKey = ed25519KeyFromSeed(fill(0x01));
const pinned = { publicKey: ed25519PublicKeyBytes(witnessKey), logOrigin: ORIGIN, name: NAME };
const alice = edParty(0x09);
const alicePin = { curve: 'ed25519' as const, publicKey: alice.publicKey };
const registry = parseRegistry({
  parties: [{ id: 'EAgent', keys: [{ curve: 'ed25519', public_key: encodeHex(alice.publicKey) }], delegator: 'ERoot' }],
});
const party = (scope: string) => ({ agent: 'did:keri:EAgent', root: 'did:keri:ERoot', scope });
const anchorFor = (scope: string, index: number): Anchor =>
  signAnchor(alice, {
    seedId: deriveSeedId('did:keri:ERoot', 'did:keri:EAgent', scope),
    index,
    head: fill(index & 0xff),
    cumulative: BigInt(index),
    timestamp: 1700000000 + index,
  });

/** A store whose transactions do all their work, then wait for the gate before committing (a stalled fsync). */
function gatedStore(store: WitnessStore): { store: WitnessStore; open: () => void; transactions: () => number } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let count = 0;
  const wrapped = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop !== 'transaction') return Reflect.get(target, prop, receiver) as unknown;
      return <T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T> =>
        target.transaction(async (tx) => {
          count++;
          const r = await fn(tx);
          await gate;
          return r;
        });
    },
  });
  return { store: wrapped, open: release, transactions: () => count };
}

/** Samples the queue right after each submission joined it (exact when no worker pool is used). */
class ObservedAnchorService extends AnchorService {
  maxQueue = 0;
  sample(): void {
    this.maxQueue = Math.max(this.maxQueue, this.queueDepth);
  }
  override submit(...args: Parameters<AnchorService['submit']>): ReturnType<AnchorService['submit']> {
    const p = super.submit(...args);
    this.sample();
    return p;
  }
}

async function scenario(withPool: boolean): Promise<void> {
  const { dir, cleanup } = tempDir('aw-queue-bound-');
  const sqlite = SqliteStore.open(join(dir, 'witness.db'));
  const pool = withPool ? new SignaturePool(1, witnessKey) : undefined;
  const gated = gatedStore(sqlite);
  const logSigner = new LogSigner(ORIGIN, witnessKey);
  const witnessLog = new TransparencyLog(gated.store, logSigner);
  const service = new ObservedAnchorService({
    log: witnessLog,
    witnessKey,
    name: NAME,
    registry: () => registry,
    allowUnderivedSeeds: false,
    quota: { anchorsPerMinute: 1_000_000, newSeedsPerDay: 1_000_000 },
    ...(pool === undefined ? {} : { verifyPool: pool }),
  });
  const app = await createServer({
    maxInFlight: IN_FLIGHT,
    maxQueue: 64,
    requestTimeoutMs: TIMEOUT_MS,
    logger: pino({ level: 'silent' }),
    accessLog: false,
  });
  const sample = (): void => {
    service.sample();
  };
  const sampler = setInterval(sample, 1);
  try {
    await sqlite.bindIdentity({ witnessKey: encodeHex(pinned.publicKey), name: NAME, logOrigin: ORIGIN });
    await new TransparencyLog(sqlite, logSigner).init(); // before the gate: the size-0 checkpoint commits
    registerAnchorRoutes(app, service);
    registerWitnessRoutes(app, {
      log: witnessLog,
      health: {
        name: NAME,
        roles: ['anchor'],
        version: 'test',
        origin: ORIGIN,
        witnessKeyHex: encodeHex(pinned.publicKey),
        logVkey: '',
      },
      statusPage: () => '',
    });
    const { url } = await listen(app, { host: '127.0.0.1', port: 0 });

    const acked: { anchor: Anchor; body: AnchorResponseBody }[] = [];
    const timedOut: Anchor[] = [];
    let hungUp = 0;
    const sent: Anchor[] = [];
    const unexpected: string[] = [];
    let stop = false;
    let released = false;
    const ackedAfterRelease = new Set<number>();

    // Even clients move on to the next index after a 408 (index gaps are allowed); odd clients resend
    // the identical request (SPEC §3.3: a 408 means "outcome unknown", resend). 503: retry shortly.
    // Every fourth client hangs up after 150 ms while the store is stalled, then resends.
    const client = async (c: number): Promise<void> => {
      const scope = `client-${c}`;
      let index = 1;
      while (!stop) {
        const anchor = anchorFor(scope, index);
        sent.push(anchor);
        const hangUp = c % 4 === 3 && !released;
        let a;
        try {
          a = await httpRequest(`${url}/v1/anchor`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: toJson({ anchor: encodeAnchor(anchor), party: party(scope) }),
            timeoutMs: hangUp ? 150 : 10_000,
          });
        } catch (e) {
          if (!hangUp) throw e;
          hungUp++;
          timedOut.push(anchor);
          continue;
        }
        sample();
        if (a.status === 200) {
          acked.push({ anchor, body: JSON.parse(a.text) as AnchorResponseBody });
          if (released) ackedAfterRelease.add(c);
          index++;
        } else if (a.status === 408) {
          timedOut.push(anchor);
          if (c % 2 === 0) index++;
        } else if (a.status === 503) {
          await sleep(10);
        } else {
          unexpected.push(`${a.status} ${a.text}`);
          return;
        }
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));

    // Phase 1: the store is stalled; requests time out, reconnect and send more.
    await sleep(STALL_MS);
    const timeoutsWhileStalled = timedOut.length;
    // Phase 2: the store commits again; run until every client got a 200 (or 15 s pass).
    released = true;
    gated.open();
    const until = performance.now() + 15_000;
    while (ackedAfterRelease.size < CLIENTS && unexpected.length === 0 && performance.now() < until) await sleep(20);
    stop = true;
    await Promise.all(clients);
    // Let handlers that outlived their 408 finish; then one more submission through the same
    // sequencer: batches are FIFO, so once it is decided everything queued before it is settled.
    await sleep(200);
    assert.equal((await service.submit(anchorFor('sentinel', 1), party('sentinel'))).kind, 'cosigned');
    sample();

    assert.deepEqual(unexpected, [], 'only 200, 408 and 503 are expected');
    assert.ok(
      timeoutsWhileStalled >= 2 * IN_FLIGHT,
      `the stall must make requests time out (got ${timeoutsWhileStalled} 408s or hang-ups)`,
    );
    assert.equal(ackedAfterRelease.size, CLIENTS, 'every client got a 200 once the store recovered');
    // The bound: the sequencer never holds more waiting anchors than there are in-flight slots.
    const maxQueue = service.maxQueue;
    assert.ok(maxQueue <= IN_FLIGHT, `anchor queue reached ${maxQueue} > --max-in-flight ${IN_FLIGHT}`);
    assert.ok(hungUp > 0, 'some clients hung up before their deadline');

    // Every acknowledged anchor is in the log, at the leaf its receipt names, and verifies offline.
    const size = (await witnessLog.checkpoint())!.size;
    const log: Uint8Array[] = [];
    for (let bundle = 0; bundle * 256 < size; bundle++) log.push(...(await witnessLog.entries(bundle, Math.min(256, size - bundle * 256))));
    const logged = new Map<string, number>();
    log.forEach((e, i) => {
      const k = encodeHex(e);
      assert.equal(logged.has(k), false, `leaf ${i} is logged twice`);
      logged.set(k, i);
    });
    for (const { anchor, body } of acked) {
      await verifyAnchorResponse(body, pinned, alicePin);
      assert.equal(
        logged.get(encodeHex(cosignMessage(anchor))),
        body.inclusion.leaf_index,
        'an acknowledged anchor is in the log at its leaf',
      );
    }
    // Everything logged was sent by a client (or is the sentinel); per seed, indexes only go up.
    const byMessage = new Map(sent.map((a) => [encodeHex(cosignMessage(a)), a]));
    byMessage.set(encodeHex(cosignMessage(anchorFor('sentinel', 1))), anchorFor('sentinel', 1));
    const lastIndex = new Map<string, number>();
    for (const e of log) {
      const a = byMessage.get(encodeHex(e));
      assert.ok(a !== undefined, 'every log entry is an anchor a client sent');
      const seed = encodeHex(a.seedId);
      assert.ok((lastIndex.get(seed) ?? 0) < a.index, 'a seed never moves backwards in the log');
      lastIndex.set(seed, a.index);
      const latest = await service.latest(a.seedId);
      assert.ok(latest !== undefined && latest.record.latest.index >= a.index);
    }
    // Anchors abandoned while still queued were dropped before the store: 408, never logged.
    const dropped = timedOut.filter((a) => !logged.has(encodeHex(cosignMessage(a))));
    assert.ok(dropped.length > 0, 'some timed-out anchors were dropped before reaching the store');
    process.stdout.write(
      `# queue bound (${withPool ? 'pool' : 'no pool'}): max queue ${maxQueue} (bound ${IN_FLIGHT}); 408s + hang-ups ${timedOut.length} (${hungUp} hang-ups), ` +
        `dropped ${dropped.length}; 200s ${acked.length}; log size ${size}; transactions ${gated.transactions()}\n`,
    );
  } finally {
    clearInterval(sampler);
    gated.open();
    app.server.closeAllConnections();
    await app.close();
    await pool?.close();
    await sqlite.close();
    cleanup();
  }
}

for (const withPool of [true, false]) {
  void test(
    `a stalled store, clients timing out (408), hanging up and resending (${withPool ? 'worker pool' : 'no worker pool'}): the anchor queue never exceeds --max-in-flight ${IN_FLIGHT}; every 200 is in the log`,
    { timeout: 60_000 },
    () => scenario(withPool),
  );
}
