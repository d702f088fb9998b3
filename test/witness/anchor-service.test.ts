// The anchor role below HTTP: sequencing, group commit, durability and verifiable outputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { AnchorService, type SubmitOutcome } from '../../src/anchoring/service.ts';
import { cosignedBody as encodeCosigned, type AnchorResponse } from '../../src/anchoring/reply.ts';
import { TransparencyLog } from '../../src/log/log.ts';
import { LogSigner } from '../../src/log/signer.ts';
import { DEFAULT_QUOTA } from '../../src/anchor/quota-window.ts';
import { parseRegistry } from '../../src/anchor/registry.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { verifyAnchorResponse } from '../../src/verify/receipt.ts';
import { verifyDuplicityProof } from '../../src/anchor/duplicity.ts';
import { decodeTile } from '../../src/tlog/tiles.ts';
import { rootFromLeafHashes, verifyConsistency } from '../../src/tlog/merkle.ts';
import { hashLeaf } from '../../src/tlog/hash.ts';
import { parseCheckpoint } from '../../src/note/checkpoint.ts';
import { parseNote } from '../../src/note/signed-note.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { tempDir } from '../helpers/tmp.ts';

const NAME = 'witness.example/w1';
const ORIGIN = 'witness.example/w1/anchors';
const witnessKey = ed25519KeyFromSeed(fill(0x01));
const pinned = { publicKey: ed25519PublicKeyBytes(witnessKey), logOrigin: ORIGIN, name: NAME };
const alice = edParty(0x09);
const alicePin = { curve: 'ed25519' as const, publicKey: alice.publicKey };
const registry = parseRegistry({
  parties: [{ id: 'EAgent', keys: [{ curve: 'ed25519', public_key: encodeHex(alice.publicKey) }], delegator: 'ERoot' }],
});
const claimFor = (scope: string) => ({ agent: 'did:keri:EAgent', root: 'did:keri:ERoot', scope });

function setup(dir: string, now = 1800000000) {
  const store = SqliteStore.open(join(dir, 'witness.db'));
  const log = new TransparencyLog(store, new LogSigner(ORIGIN, witnessKey));
  const service = new AnchorService({
    log,
    witnessKey,
    name: NAME,
    registry: () => registry,
    allowUnderivedSeeds: false,
    quota: { ...DEFAULT_QUOTA, anchorsPerMinute: 10_000, newSeedsPerDay: 10_000 },
    now: () => now,
  });
  return { store, log, service };
}

/** The 200 body the routes send for `o` (src/anchoring/reply.ts). */
function cosignedBody(o: SubmitOutcome): AnchorResponse {
  if (o.kind !== 'cosigned') return assert.fail(`expected a co-signature, got ${o.kind}`);
  return encodeCosigned({ name: NAME, publicKeyHex: encodeHex(pinned.publicKey) }, o.record, o.inclusion, o.replay);
}

const anchorFor = (scope: string, index: number, head = 1, cumulative = BigInt(index)) =>
  signAnchor(alice, {
    seedId: deriveSeedId('did:keri:ERoot', 'did:keri:EAgent', scope),
    index,
    head: fill(head),
    cumulative,
    timestamp: 1700000000 + index,
  });

void test('co-sign, replay, fork: outputs verify offline; concurrent submissions share commits', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const { store, log, service } = setup(dir);
    await store.bindIdentity({ witnessKey: encodeHex(pinned.publicKey), name: NAME, logOrigin: ORIGIN });
    assert.deepEqual(service.witness, { name: NAME, publicKeyHex: encodeHex(pinned.publicKey) });
    const cp0 = await log.init();
    assert.equal(cp0.size, 0);
    assert.match(
      cp0.note,
      /^witness\.example\/w1\/anchors\n0\n47DEQpj8HBSa\+\/TImW\+5JCeuQeRkm5NMpJWZG3hSuFU=\n\n— witness\.example\/w1\/anchors /,
    );

    // 50 seeds × 3 anchors, all submitted at once.
    const submissions = [];
    for (let s = 0; s < 50; s++) for (let i = 1; i <= 3; i++) submissions.push(service.submit(anchorFor(`S${s}`, i), claimFor(`S${s}`)));
    const outcomes = await Promise.all(submissions);
    const bodies = outcomes.map(cosignedBody);
    for (const b of bodies) await verifyAnchorResponse(b, pinned, alicePin);
    const cp = await log.checkpoint();
    assert.equal(cp?.size, 150);
    const leaves = new Set(bodies.map((b) => b.inclusion.leaf_index));
    assert.equal(leaves.size, 150);

    // An older index of a seed is a regression, not a replay.
    const older = await service.submit(anchorFor('S0', 1), claimFor('S0'));
    assert.equal(older.kind === 'rejected' && older.rejection.code, 'non_monotone');
    await store.close();
  } finally {
    cleanup();
  }
});

void test('replay of the latest, non-monotone older index, duplicity freezes the seed', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const { store, log, service } = setup(dir);
    await log.init();
    const a3 = cosignedBody(await service.submit(anchorFor('S', 3), claimFor('S')));
    const again = cosignedBody(await service.submit(anchorFor('S', 3), claimFor('S')));
    assert.equal(again.replay, true);
    assert.equal(again.cosignature.signature, a3.cosignature.signature);
    assert.equal(again.cosignature.timestamp, a3.cosignature.timestamp);
    assert.equal(again.inclusion.leaf_index, a3.inclusion.leaf_index);
    assert.equal((await log.checkpoint())?.size, 1);
    await verifyAnchorResponse(again, pinned, alicePin);

    const older = await service.submit(anchorFor('S', 2), claimFor('S'));
    assert.deepEqual(older.kind === 'rejected' && older.rejection.code, 'non_monotone');

    const fork = await service.submit(anchorFor('S', 3, 7), claimFor('S'));
    if (fork.kind !== 'duplicity') return assert.fail(`expected duplicity, got ${fork.kind}`);
    assert.equal(fork.isNew, true);
    assert.deepEqual(verifyDuplicityProof(fork.proof), { valid: true });
    assert.equal((await log.checkpoint())?.size, 2); // the proof is logged
    const frozen = await service.submit(anchorFor('S', 4), claimFor('S'));
    assert.equal(frozen.kind === 'duplicity' && !frozen.isNew, true);
    assert.equal((await log.checkpoint())?.size, 2);
    const latest = await service.latest(anchorFor('S', 3).seedId);
    assert.equal(latest?.record.duplicity !== undefined, true);
    assert.equal((await store.anchors.listDuplicities(undefined, 100)).length, 1);
    await store.close();
  } finally {
    cleanup();
  }
});

void test('tiles and entry bundles re-derive every checkpoint; checkpoints are consistent', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const { store, log, service } = setup(dir);
    await log.init();
    const roots: { size: number; root: Uint8Array }[] = [];
    for (let batch = 0; batch < 6; batch++) {
      const subs = [];
      for (let s = 0; s < 110; s++) subs.push(service.submit(anchorFor(`B${batch}-${s}`, 1), claimFor(`B${batch}-${s}`)));
      await Promise.all(subs);
      const cp = (await log.checkpoint())!;
      const parsed = parseCheckpoint(parseNote(cp.note).text);
      roots.push({ size: parsed.size, root: parsed.rootHash });
    }
    const size = roots.at(-1)!.size;
    assert.equal(size, 660);
    // Leaf hashes from level-0 tiles equal the hashes of the entries in the bundles.
    const leafHashes: Uint8Array[] = [];
    for (let n = 0; n * 256 < size; n++) {
      const width = Math.min(256, size - n * 256);
      const tile = decodeTile(await log.tile(0, n, width), width);
      const entries = await log.entries(n, width);
      entries.forEach((e, i) => {
        assert.deepEqual(hashLeaf(e), tile[i]);
      });
      leafHashes.push(...tile);
    }
    // Level-1 tile holds the roots of the two full level-0 tiles.
    const level1 = decodeTile(await log.tile(1, 0, 2), 2);
    assert.deepEqual(level1[0], rootFromLeafHashes(leafHashes.slice(0, 256)));
    assert.deepEqual(level1[1], rootFromLeafHashes(leafHashes.slice(256, 512)));
    for (const { size: s, root } of roots) {
      assert.deepEqual(rootFromLeafHashes(leafHashes.slice(0, s)), root);
    }
    for (let i = 1; i < roots.length; i++) {
      const a = roots[i - 1]!;
      const b = roots[i]!;
      assert.equal(verifyConsistency(a.size, b.size, a.root, b.root, await log.consistencyProof(a.size, b.size)), true);
    }
    await store.close();
  } finally {
    cleanup();
  }
});

void test('store identity binding and exclusive lock', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const path = join(dir, 'witness.db');
    const store = SqliteStore.open(path);
    await store.bindIdentity({ witnessKey: 'aa', name: NAME, logOrigin: ORIGIN });
    assert.throws(() => SqliteStore.open(path), { code: 'store_locked' });
    await store.close();
    const again = SqliteStore.open(path);
    await assert.rejects(again.bindIdentity({ witnessKey: 'bb', name: NAME, logOrigin: ORIGIN }), { code: 'store_identity_mismatch' });
    await assert.rejects(again.bindIdentity({ witnessKey: 'aa', name: 'other.example/w', logOrigin: ORIGIN }), {
      code: 'store_identity_mismatch',
    });
    await again.bindIdentity({ witnessKey: 'aa', name: NAME, logOrigin: ORIGIN });
    await again.close();
  } finally {
    cleanup();
  }
});

void test('a failed commit leaves no co-sign counted in the cached quota windows', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const store = SqliteStore.open(join(dir, 'witness.db'));
    let failNext = false;
    // The store's transaction runs the batch, then (once) fails as a commit would: SQLite rolls back.
    const failing = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop !== 'transaction') return Reflect.get(target, prop, receiver) as unknown;
        return async <T>(fn: (tx: never) => Promise<T>): Promise<T> =>
          target.transaction(async (tx) => {
            const r = await fn(tx as never);
            if (failNext) {
              failNext = false;
              throw Object.assign(new Error('injected commit failure'), { code: 'store_unavailable' });
            }
            return r;
          });
      },
    });
    const log = new TransparencyLog(failing, new LogSigner(ORIGIN, witnessKey));
    const service = new AnchorService({
      log,
      witnessKey,
      name: NAME,
      registry: () => registry,
      allowUnderivedSeeds: false,
      quota: { anchorsPerMinute: 2, newSeedsPerDay: 100 },
      now: () => 1800000000,
    });
    await log.init();
    // Warm the cache with one committed co-sign (1 of 2 in the minute).
    assert.equal((await service.submit(anchorFor('q1', 1), claimFor('q1'))).kind, 'cosigned');
    failNext = true;
    await assert.rejects(service.submit(anchorFor('q2', 1), claimFor('q2')), /injected commit failure/);
    // The failed one was never committed, so the second co-sign of the minute is still allowed…
    assert.equal((await service.submit(anchorFor('q3', 1), claimFor('q3'))).kind, 'cosigned');
    // …and the third is over the quota.
    const over = await service.submit(anchorFor('q4', 1), claimFor('q4'));
    assert.equal(over.kind === 'rejected' ? over.rejection.code : over.kind, 'party_quota_exceeded');
    await store.close();
  } finally {
    cleanup();
  }
});

void test('an abandoned request whose anchor still waits for a batch is dropped (never logged); once its batch started it commits', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const store = SqliteStore.open(join(dir, 'witness.db'));
    await store.bindIdentity({ witnessKey: encodeHex(pinned.publicKey), name: NAME, logOrigin: ORIGIN });
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let gated = false;
    // After the first transaction (the size-0 checkpoint), commits wait for the gate: a stalled store.
    const stalled = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop !== 'transaction') return Reflect.get(target, prop, receiver) as unknown;
        return async <T>(fn: (tx: never) => Promise<T>): Promise<T> =>
          target.transaction(async (tx) => {
            const r = await fn(tx as never);
            if (gated) await gate;
            return r;
          });
      },
    });
    const log = new TransparencyLog(stalled, new LogSigner(ORIGIN, witnessKey));
    const service = new AnchorService({
      log,
      witnessKey,
      name: NAME,
      registry: () => registry,
      allowUnderivedSeeds: false,
      quota: { ...DEFAULT_QUOTA, anchorsPerMinute: 10_000, newSeedsPerDay: 10_000 },
      now: () => 1800000000,
    });
    await log.init();
    gated = true;
    const first = new AbortController();
    const a = service.submit(anchorFor('ab-1', 1), claimFor('ab-1'), first.signal);
    // Let the sequencer take `a` into its (stalled) batch.
    while (service.queueDepth > 0) await new Promise((r) => setImmediate(r));
    const second = new AbortController();
    const b = service.submit(anchorFor('ab-2', 1), claimFor('ab-2'), second.signal);
    const bSettled = b.then(
      () => 'resolved',
      (e: unknown) => (e as { code?: string }).code,
    );
    while (service.queueDepth === 0) await new Promise((r) => setImmediate(r));
    assert.equal(service.queueDepth, 1);
    first.abort(); // `a` is in the batch already: it still commits
    second.abort(); // `b` is still queued: it leaves the queue at once
    assert.equal(service.queueDepth, 0);
    assert.equal(await bSettled, 'request_abandoned');
    await assert.rejects(service.submit(anchorFor('ab-3', 1), claimFor('ab-3'), AbortSignal.abort()), { code: 'request_abandoned' });
    open();
    const body = cosignedBody(await a);
    assert.equal(body.inclusion.leaf_index, 0);
    assert.equal((await store.log.checkpoint())?.size, 1, 'only the anchor whose batch had started is logged');
    assert.equal(await store.anchors.getSeed(anchorFor('ab-2', 1).seedId), undefined);
    await store.close();
  } finally {
    cleanup();
  }
});
