// SPEC §5 (rev 4): a replayed checkpoint (the stored one, `old` = its size) is answered with the
// cosignature lines stored for it: no signature, no write. Issue 25 item 8: re-posting the public
// latest checkpoint re-signed (Ed25519 + ML-DSA-44) and rewrote the state durably each time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KeyObject } from 'node:crypto';
import { join } from 'node:path';
import type { SignaturePool } from '../../src/anchoring/verify-pool.ts';
import { verifyEd25519 } from '../../src/crypto/ed25519.ts';
import { generateMlDsa44, mlDsa44Supported, signMlDsa44, verifyMlDsa44 } from '../../src/crypto/ml-dsa.ts';
import { CosignService, type AddCheckpointOutcome } from '../../src/cosign/service.ts';
import { parseLogsConfig } from '../../src/cosign/logs.ts';
import { formatAddCheckpointRequest } from '../../src/note/tlog-witness.ts';
import { verifyNote } from '../../src/note/signed-note.ts';
import { parseVkey } from '../../src/note/vkey.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import type { CosignStateStorage, OriginState } from '../../src/store/types.ts';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import { LOG_NAME, SyntheticLog, WITNESS_NAME, cosignKeyC, logKeyC, logsDoc, seq, startCosign } from '../helpers/cosign-harness.ts';
import { tempDir } from '../helpers/tmp.ts';

const T0 = 1_800_000_000;

/** The outcome's body and time; fails the test unless it is a 200. */
function cosigned(o: AddCheckpointOutcome): { body: string; timestamp: number } {
  if (o.kind !== 'cosigned') assert.fail(`expected 200, got ${o.status} ${o.kind === 'rejected' ? o.code : ''}`);
  return { body: o.body, timestamp: o.timestamp };
}

/** The store with its writes counted. */
function countingStore(inner: CosignStateStorage): { store: CosignStateStorage; writes: () => number } {
  let writes = 0;
  const store: CosignStateStorage = Object.create(inner) as CosignStateStorage;
  store.updateOrigin = (expected: number, next: OriginState) => {
    writes++;
    return inner.updateOrigin(expected, next);
  };
  return { store, writes: () => writes };
}

/** A signature pool on the calling thread with its ML-DSA-44 signatures counted. */
function countingPool(): { pool: SignaturePool; signs: () => number } {
  let signs = 0;
  const pool = {
    verify: (pk: Uint8Array, m: Uint8Array, s: Uint8Array) => Promise.resolve(verifyEd25519(pk, m, s)),
    verifyMlDsa44: (pk: Uint8Array, m: Uint8Array, s: Uint8Array) => Promise.resolve(verifyMlDsa44(pk, m, s)),
    signMlDsa44: (k: KeyObject, m: Uint8Array) => {
      signs++;
      return Promise.resolve(signMlDsa44(k, m));
    },
  } as unknown as SignaturePool;
  return { pool, signs: () => signs };
}

void test('a replayed checkpoint gets the stored lines byte for byte: no signature, no state write (Ed25519 + ML-DSA-44)', async () => {
  const { dir, cleanup } = tempDir();
  const sqlite = SqliteStore.open(join(dir, 'w.db'));
  try {
    const log = new SyntheticLog(LOG_NAME, logKeyC);
    const logs = new Map(parseLogsConfig(logsDoc({ origin: log.origin, keys: [log.vkey] })).map((l) => [l.origin, l]));
    const keys: KeyObject[] = [cosignKeyC, ...(mlDsa44Supported() ? [generateMlDsa44().privateKey] : [])];
    const clock = { now: T0 * 1000 };
    const { store, writes } = countingStore(sqlite.cosign);
    const { pool, signs } = countingPool();
    const service = new CosignService({
      store,
      name: WITNESS_NAME,
      cosignKeys: keys,
      logs: () => logs,
      now: () => clock.now,
      verifyPool: pool,
    });
    const { body } = cosigned(await service.addCheckpoint(log.request(0, 5)));
    assert.equal(writes(), 1);
    const mlSigns = signs();
    assert.equal(mlSigns, keys.length - 1);
    // The same checkpoint (freshly signed by the log: another note, same text), old = its size,
    // a minute later each time: a re-signature would carry a new time.
    for (let i = 1; i <= 20; i++) {
      clock.now += 60_000;
      const again = cosigned(await service.addCheckpoint(formatAddCheckpointRequest(5, [], log.checkpoint(5))));
      assert.equal(again.body, body, 'byte-identical cosignature lines');
      assert.equal(again.timestamp, T0);
    }
    assert.equal(writes(), 1, 'no state write for a replay');
    assert.equal(signs(), mlSigns, 'no ML-DSA-44 signature for a replay');
    const v = verifyNote(
      log.checkpoint(5) + body,
      service.vkeys.map((k) => parseVkey(k)),
    );
    assert.equal(v.verified.length, keys.length);
    // A replay with a (superfluous) proof is still refused; a new checkpoint is signed and stored.
    const withProof = await service.addCheckpoint(formatAddCheckpointRequest(5, [log.root(5)], log.checkpoint(5)));
    assert.equal(withProof.kind === 'rejected' && withProof.code, 'inconsistent');
    const next = await service.addCheckpoint(log.request(5, 6));
    assert.equal(next.kind === 'cosigned' && next.timestamp, T0 + 1200);
    assert.equal(writes(), 2);
    // Under another cosign key set (a key added), the stored lines are not this set's: signed anew, once.
    const other = new CosignService({
      store,
      name: WITNESS_NAME,
      cosignKeys: [...keys, ed25519KeyFromSeed(seq(0x33))],
      logs: () => logs,
      now: () => clock.now,
      verifyPool: pool,
    });
    const resigned = cosigned(await other.addCheckpoint(formatAddCheckpointRequest(6, [], log.checkpoint(6))));
    assert.equal(resigned.body.split('\n').filter(Boolean).length, keys.length + 1);
    assert.equal(
      verifyNote(
        log.checkpoint(6) + resigned.body,
        other.vkeys.map((k) => parseVkey(k)),
      ).verified.length,
      keys.length + 1,
    );
    assert.equal(writes(), 3);
    const replayed = await other.addCheckpoint(formatAddCheckpointRequest(6, [], log.checkpoint(6)));
    assert.equal(replayed.kind === 'cosigned' && replayed.body, resigned.body);
    assert.equal(writes(), 3);
  } finally {
    await sqlite.close();
    cleanup();
  }
});

void test('over HTTP: replaying the public latest checkpoint answers the stored lines; the monitoring body is unchanged', async () => {
  const { dir, cleanup } = tempDir();
  const clock = { now: T0 * 1000 };
  const log = new SyntheticLog('replay.example/log', ed25519KeyFromSeed(seq(0x70)));
  const h = await startCosign({ dir, logsDoc: logsDoc({ origin: log.origin, keys: [log.vkey] }), now: () => clock.now });
  try {
    const first = await h.post(log.request(0, 3));
    assert.equal(first.status, 200);
    const { sha256Hex } = await import('../../src/crypto/sha256.ts');
    const monitoring = (await h.get(`/${sha256Hex(log.origin)}/checkpoint`)).text;
    clock.now += 3_600_000;
    for (let i = 0; i < 5; i++) {
      const r = await h.post(formatAddCheckpointRequest(3, [], log.checkpoint(3)));
      assert.equal(r.status, 200);
      assert.equal(r.text, first.text);
    }
    assert.equal((await h.get(`/${sha256Hex(log.origin)}/checkpoint`)).text, monitoring);
    assert.equal((await h.store.cosign.getOrigin(log.origin))?.lastTime, T0);
  } finally {
    await h.close();
    cleanup();
  }
});
