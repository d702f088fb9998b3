// SPEC §1.2 rev 4: a second replica (one PostgreSQL store) follows an announcement without a
// restart. Replica A runs with K1 alone; replica B starts with --next-key K2 and announces; A
// re-reads the key history before its next checkpoint signature and refuses (503
// signer_unavailable, nothing committed) instead of signing a K1-only checkpoint; B serves both
// lines. /ready on A answers 503 naming both key sets once B announced, and 200 again once A
// restarts with --next-key K2. Skipped (reported) without PostgreSQL binaries outside CI.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { encodeAnchor } from '../../src/anchor/codec.ts';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { pgSkip, startPgServer, type PgServer } from '../helpers/pg-server.ts';
import { tempDir } from '../helpers/tmp.ts';
import { get, post, startTestWitness } from '../helpers/witness.ts';

const skip = pgSkip();
let server: PgServer | undefined;
const party = edParty(0x09);
const REGISTRY = { parties: [{ id: 'EAlice', keys: [{ curve: 'ed25519', public_key: encodeHex(party.publicKey) }] }] };
const anchorAt = (seed: number, index: number) =>
  signAnchor(party, { seedId: fill(seed), index, head: fill(index), cumulative: BigInt(index), timestamp: 1_700_000_000 + index });

before(async () => {
  if (skip === false) server = await startPgServer();
});
after(async () => {
  await server?.stop();
});

void test('a second replica follows an announcement without a restart: it refuses to sign with the old key set', { skip }, async () => {
  const { dir, cleanup } = tempDir('aw-rotation-replicas-');
  after(cleanup);
  const store = await server!.createDatabase('rotation');
  for (const d of ['a', 'b']) mkdirSync(join(dir, d));
  const k2 = join(dir, 'k2.pem');
  writeNewKeyFile(k2, ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(0x02))));
  let a = await startTestWitness(join(dir, 'a'), REGISTRY, { allowUnderivedSeeds: true, store, keySetWatchMs: 200 });
  const b0 = await startTestWitness(join(dir, 'b'), REGISTRY, { allowUnderivedSeeds: true, store });
  try {
    let r = await post(`${a.url}/v1/anchor`, { anchor: encodeAnchor(anchorAt(0x71, 1)), party: { agent: 'EAlice' } });
    assert.equal(r.status, 200, r.text);
    await b0.close();
    // B restarts with --next-key K2: the announcement is logged in the shared store.
    const b = await startTestWitness(join(dir, 'b'), REGISTRY, { allowUnderivedSeeds: true, store, nextKeyFile: k2 });
    try {
      const size = Number(/\n(\d+)\n/.exec((await get(`${b.url}/log/checkpoint`)).text)![1]);
      // A's periodic read of the key history (every 200 ms here) makes /ready 503 before any request.
      for (let i = 0; i < 200 && (await get(`${a.url}/ready`)).status === 200; i++) await new Promise((res) => setTimeout(res, 100));
      assert.equal((await get(`${a.url}/ready`)).status, 503, 'not ready once the store holds another key set');
      // A (K1 only) must not sign a checkpoint for the store's {K1, K2} set.
      r = await post(`${a.url}/v1/anchor`, { anchor: encodeAnchor(anchorAt(0x72, 1)), party: { agent: 'EAlice' } });
      assert.equal(r.status, 503, r.text);
      assert.equal((r.body as { code: string }).code, 'signer_unavailable');
      assert.equal((await get(`${a.url}/v1/anchor/${encodeHex(fill(0x72))}`)).status, 404, 'nothing committed');
      // B signs with both keys.
      r = await post(`${b.url}/v1/anchor`, { anchor: encodeAnchor(anchorAt(0x72, 1)), party: { agent: 'EAlice' } });
      assert.equal(r.status, 200, r.text);
      assert.ok((r.body as { cosignature_next?: unknown }).cosignature_next !== undefined);
      const note = (await get(`${b.url}/log/checkpoint`)).text;
      assert.equal(Number(/\n(\d+)\n/.exec(note)![1]), size + 1);
      assert.equal(note.split('\n').filter((l) => l.startsWith('— ')).length, 2);
      // A's /ready: 503 naming the store's set and its own.
      let ready = await get(`${a.url}/ready`);
      assert.equal(ready.status, 503, ready.text);
      const detail = (ready.body as { code: string; detail: string }).detail;
      assert.equal((ready.body as { code: string }).code, 'not_ready');
      assert.match(detail, /witness key set/);
      assert.ok(detail.includes(encodeHex(ed25519PublicKeyBytes(ed25519KeyFromSeed(fill(0x02))))), detail);
      assert.equal((await get(`${b.url}/ready`)).status, 200);
      // A restarted with --next-key K2 is ready again (and signs).
      await a.close();
      a = await startTestWitness(join(dir, 'a'), REGISTRY, { allowUnderivedSeeds: true, store, nextKeyFile: k2, keySetWatchMs: 200 });
      ready = await get(`${a.url}/ready`);
      assert.equal(ready.status, 200, ready.text);
      r = await post(`${a.url}/v1/anchor`, { anchor: encodeAnchor(anchorAt(0x73, 1)), party: { agent: 'EAlice' } });
      assert.equal(r.status, 200, r.text);
    } finally {
      await b.close();
    }
  } finally {
    await a.close();
  }
});
