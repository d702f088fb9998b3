// The anchor path's diagnostic marks (src/anchoring/trace.ts) that bench/_loop-probe.ts's long-turn
// tracer attributes event-loop turns to: one per verify-pool trip (send, reply) and per batch
// (commit, answer), each with how many requests it covered; nothing is published without a
// subscriber.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import diagnostics_channel from 'node:diagnostics_channel';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { AnchorService } from '../../src/anchoring/service.ts';
import { SignaturePool } from '../../src/anchoring/verify-pool.ts';
import { ANCHOR_PATH_CHANNEL, tracing, type AnchorPathMark } from '../../src/anchoring/trace.ts';
import { TransparencyLog } from '../../src/log/log.ts';
import { LogSigner } from '../../src/log/signer.ts';
import { DEFAULT_QUOTA } from '../../src/anchor/quota-window.ts';
import { parseRegistry } from '../../src/anchor/registry.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { tempDir } from '../helpers/tmp.ts';

const ORIGIN = 'witness.example/trace/anchors';
const witnessKey = ed25519KeyFromSeed(fill(0x01));
const party = edParty(0x0a);
const registry = parseRegistry({ parties: [{ id: 'EAgent', keys: [{ curve: 'ed25519', public_key: encodeHex(party.publicKey) }] }] });

void test('each verify trip and each batch publishes one mark with its request count, only while someone subscribes', async () => {
  const { dir, cleanup } = tempDir();
  const pool = new SignaturePool(1, witnessKey);
  const store = SqliteStore.open(join(dir, 'witness.db'));
  const marks: AnchorPathMark[] = [];
  const listen = (m: unknown) => marks.push(m as AnchorPathMark);
  try {
    const log = new TransparencyLog(store, new LogSigner(ORIGIN, witnessKey));
    await log.init();
    const service = new AnchorService({
      log,
      witnessKey,
      name: 'witness.example/trace',
      registry: () => registry,
      allowUnderivedSeeds: false,
      quota: { ...DEFAULT_QUOTA, anchorsPerMinute: 10_000, newSeedsPerDay: 10_000 },
      verifyPool: pool,
    });
    const claim = (scope: string) => ({ agent: 'did:keri:EAgent', root: 'did:keri:EAgent', scope });
    const submit = (scope: string) =>
      service.submit(
        signAnchor(party, {
          seedId: deriveSeedId('did:keri:EAgent', 'did:keri:EAgent', scope),
          index: 1,
          head: fill(2),
          cumulative: 1n,
          timestamp: 1700000001,
        }),
        claim(scope),
      );

    assert.equal(tracing(), false);
    await submit('untraced'); // no subscriber: nothing published
    diagnostics_channel.subscribe(ANCHOR_PATH_CHANNEL, listen);
    assert.equal(tracing(), true);
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => submit(`S${i}`)));
    assert.ok(outcomes.every((o) => o.kind === 'cosigned'));
    diagnostics_channel.unsubscribe(ANCHOR_PATH_CHANNEL, listen);
    await submit('after'); // unsubscribed again
    const sum = (what: AnchorPathMark['what']) => marks.filter((m) => m.what === what).reduce((a, m) => a + m.n, 0);
    // 20 requests submitted in one turn: every one went through one verify trip and one batch
    assert.equal(sum('verify_send'), 20);
    assert.equal(sum('verify_reply'), 20);
    assert.equal(sum('verify_trip'), 20);
    assert.equal(sum('batch_commit'), 20);
    assert.equal(sum('batch_answer'), 20);
    for (const m of marks) assert.ok(m.ms >= 0 && m.at > 0 && m.n > 0, JSON.stringify(m));
    // a batch's commit mark spans its transaction, from the batch's start to durability
    assert.ok(marks.filter((m) => m.what === 'batch_commit').every((m) => m.ms > 0));
  } finally {
    diagnostics_channel.unsubscribe(ANCHOR_PATH_CHANNEL, listen);
    await store.close();
    await pool.close();
    cleanup();
  }
});
