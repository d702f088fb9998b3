// SPEC §1.2 witness-key rotation, end to end over loopback on one SQLite store: announce (entry
// signed by both keys, verified here and with @noble/curves), the overlap (checkpoints with K1's
// and K2's lines, each alone verifies; anchor 200 bodies with cosignature_next; /health
// keys.witness_next), the start-up table's refusals (no --next-key while one is recorded, another
// --next-key without --abandon-next, an early completion, a retired --key), --abandon-next (abort
// entry), the completion (K2 alone signs; a replay carries K2's deterministic cosignature).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { encodeAnchor } from '../../src/anchor/codec.ts';
import { cosignMessage } from '../../src/anchor/messages.ts';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem, ed25519PublicKeyBytes, verifyEd25519 } from '../../src/crypto/ed25519.ts';
import { decodeHex, encodeHex } from '../../src/encoding/hex.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { SIG_TYPE_ED25519 } from '../../src/note/signed-note.ts';
import { formatVkey } from '../../src/note/vkey.ts';
import { ed25519NoteKey, verifyCheckpoint } from '../../src/verify/note.ts';
import { parseReceipt, verifyWitnessReceipt } from '../../src/verify/receipt.ts';
import { parseRotationEntry, rotationMessage, verifyRotationEntry } from '../../src/verify/key-rotation.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { buildGo, goMissing, run } from '../helpers/external-keys.ts';
import { tempDir } from '../helpers/tmp.ts';
import { get, post, startTestWitness, WITNESS_NAME, WITNESS_ORIGIN } from '../helpers/witness.ts';

const party = edParty(0x09);
const REGISTRY = { parties: [{ id: 'EAlice', keys: [{ curve: 'ed25519', public_key: encodeHex(party.publicKey) }] }] };
const K1 = ed25519PublicKeyBytes(ed25519KeyFromSeed(fill(0x01))); // the helper's --key
const key = (seed: number) => ed25519KeyFromSeed(fill(seed));
const hex = (seed: number): string => encodeHex(ed25519PublicKeyBytes(key(seed)));

function keyFile(dir: string, seed: number): string {
  const f = join(dir, `k${seed}.pem`);
  try {
    writeNewKeyFile(f, ed25519PrivateKeyToPem(key(seed)));
  } catch {
    // already written
  }
  return f;
}

const anchorAt = (index: number) =>
  signAnchor(party, { seedId: fill(0x77), index, head: fill(index), cumulative: BigInt(index), timestamp: 1_700_000_000 + index });

interface Cos {
  witness_public_key: string;
  signature: string;
}
interface Body {
  cosignature: Cos;
  cosignature_next?: Cos;
  inclusion: { checkpoint: string };
  replay: boolean;
}

async function checkpointVerifiesUnder(url: string, pk: Uint8Array): Promise<string> {
  const note = (await get(`${url}/log/checkpoint`)).text;
  await verifyCheckpoint(note, [await ed25519NoteKey(WITNESS_ORIGIN, pk)], WITNESS_ORIGIN);
  return note;
}

const lines = (note: string): number => note.split('\n').filter((l) => l.startsWith('— ')).length;

async function refused(dir: string, over: object, code: string): Promise<void> {
  await assert.rejects(
    startTestWitness(dir, REGISTRY, { allowUnderivedSeeds: true, ...over }),
    (e: { code?: string; message?: string }) => {
      assert.equal(e.code, code, e.message);
      return true;
    },
  );
}

void test('rotation: announce, overlap with both keys, refusals, completion; replays after it carry K2', async () => {
  const { dir, cleanup } = tempDir('aw-rotation-');
  after(cleanup);
  const base = { allowUnderivedSeeds: true };
  const K2 = decodeHex(hex(0x02), 32);
  // Before: K1 alone.
  let w = await startTestWitness(dir, REGISTRY, base);
  let r = await post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(anchorAt(1)), party: { agent: 'EAlice' } });
  assert.equal(r.status, 200, r.text);
  assert.equal((r.body as Body).cosignature_next, undefined);
  await w.close();

  // Announce: --next-key K2.
  const now = Math.floor(Date.now() / 1000);
  w = await startTestWitness(dir, REGISTRY, { ...base, nextKeyFile: keyFile(dir, 0x02), rotationNow: () => now });
  const items = (await get(`${w.url}/v1/key-rotation`)).body as { items: Record<string, unknown>[] };
  assert.equal(items.items.length, 1);
  const announce = parseRotationEntry(items.items[0])!;
  assert.equal(announce.stage, 'announce');
  assert.equal(announce.old, encodeHex(K1));
  assert.equal(announce.new, encodeHex(K2));
  await verifyRotationEntry(announce);
  // independently: @noble/curves over the JCS without the signatures
  const msg = rotationMessage(announce);
  assert.ok(ed25519.verify(decodeHex(announce.sig_old!, 64), msg, K1), 'sig_old verifies with @noble/curves');
  assert.ok(ed25519.verify(decodeHex(announce.sig_new!, 64), msg, K2), 'sig_new verifies with @noble/curves');
  // the entry is in the log at log_index
  const idx = items.items[0]!.log_index as number;
  assert.ok(Number.isInteger(idx) && idx >= 1);
  // overlap: the checkpoint carries two lines, and each key alone verifies it
  const note = await checkpointVerifiesUnder(w.url, K1);
  await checkpointVerifiesUnder(w.url, K2);
  assert.equal(lines(note), 2);
  assert.equal(((await get(`${w.url}/health`)).body as { keys: { witness_next?: string } }).keys.witness_next, encodeHex(K2));
  // a new anchor: cosignature by K1 and cosignature_next by K2 over the same message
  const a2 = anchorAt(2);
  r = await post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(a2), party: { agent: 'EAlice' } });
  assert.equal(r.status, 200, r.text);
  const b2 = r.body as Body;
  assert.ok(verifyEd25519(K1, cosignMessage(a2), decodeHex(b2.cosignature.signature, 64)));
  assert.equal(b2.cosignature_next?.witness_public_key, encodeHex(K2));
  assert.ok(verifyEd25519(K2, cosignMessage(a2), decodeHex(b2.cosignature_next.signature, 64)));
  assert.equal(lines(b2.inclusion.checkpoint), 2);
  // the SDK pinned to either key verifies the receipt (K2 by cosignature_next and its checkpoint line)
  for (const pk of [K1, K2]) {
    const v = await verifyWitnessReceipt(a2, parseReceipt(b2), { publicKey: pk, logOrigin: WITNESS_ORIGIN, name: WITNESS_NAME });
    assert.equal(v.leafIndex, (r.body as { inclusion: { leaf_index: number } }).inclusion.leaf_index);
  }
  // GET /v1/anchor/{seed} and a replay carry the same pair
  const latest = (await get(`${w.url}/v1/anchor/${encodeHex(fill(0x77))}`)).body as Body;
  assert.deepEqual(latest.cosignature_next, b2.cosignature_next);
  const replay = (await post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(a2), party: { agent: 'EAlice' } })).body as Body;
  assert.equal(replay.replay, true);
  assert.deepEqual([replay.cosignature, replay.cosignature_next], [b2.cosignature, b2.cosignature_next]);
  await w.close();

  // Refusals while K2 is recorded as next.
  await refused(dir, {}, 'store_identity_mismatch'); // no --next-key
  await refused(dir, { nextKeyFile: keyFile(dir, 0x03) }, 'store_identity_mismatch'); // another, without --abandon-next
  await refused(dir, { keyFile: keyFile(dir, 0x02), rotationNow: () => now + 3600 }, 'key_overlap_too_short');

  // Completion, a day and a second later: K2 alone.
  w = await startTestWitness(dir, REGISTRY, { ...base, keyFile: keyFile(dir, 0x02), rotationNow: () => now + 86_401 });
  const completed = (await get(`${w.url}/v1/key-rotation`)).body as { items: Record<string, unknown>[] };
  assert.deepEqual(
    completed.items.map((e) => e.stage),
    ['announce', 'complete'],
  );
  await verifyRotationEntry(parseRotationEntry(completed.items[1])!);
  const note2 = await checkpointVerifiesUnder(w.url, K2);
  assert.equal(lines(note2), 1);
  await assert.rejects(checkpointVerifiesUnder(w.url, K1), { code: 'checkpoint_invalid' });
  // a replay of the anchor K1 co-signed now carries K2's deterministic signature
  const again = (await post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(a2), party: { agent: 'EAlice' } })).body as Body;
  assert.equal(again.replay, true);
  assert.equal(again.cosignature.witness_public_key, encodeHex(K2));
  assert.equal(again.cosignature.signature, b2.cosignature_next.signature);
  assert.equal(again.cosignature_next, undefined);
  await w.close();

  // K1 is retired forever.
  await refused(dir, {}, 'key_retired');
});

void test('rotation: --abandon-next logs an abort entry (sig_old only), retires the lost key and announces the new one', async () => {
  const { dir, cleanup } = tempDir('aw-rotation-abort-');
  after(cleanup);
  const base = { allowUnderivedSeeds: true };
  let w = await startTestWitness(dir, REGISTRY, { ...base, nextKeyFile: keyFile(dir, 0x02) });
  await w.close();
  w = await startTestWitness(dir, REGISTRY, { ...base, nextKeyFile: keyFile(dir, 0x03), abandonNext: true });
  const items = ((await get(`${w.url}/v1/key-rotation`)).body as { items: Record<string, unknown>[] }).items;
  assert.deepEqual(
    items.map((e) => [e.stage, e.new]),
    [
      ['announce', hex(0x02)],
      ['abort', hex(0x02)],
      ['announce', hex(0x03)],
    ],
  );
  const abort = parseRotationEntry(items[1])!;
  assert.equal(abort.sig_new, undefined);
  await verifyRotationEntry(abort);
  assert.ok(ed25519.verify(decodeHex(abort.sig_old!, 64), rotationMessage(abort), K1));
  await checkpointVerifiesUnder(w.url, decodeHex(hex(0x03), 32));
  await w.close();
  // the lost next key is never used again
  await refused(dir, { nextKeyFile: keyFile(dir, 0x02), abandonNext: true }, 'key_retired');
});

void test('rotation: Go x/mod note holding only K1, or only K2, accepts every overlap checkpoint (and both keys together)', async (t) => {
  const gap = await goMissing();
  if (gap !== null) {
    t.skip(`Go interop skipped: ${gap}`);
    return;
  }
  const { dir, cleanup } = tempDir('aw-rotation-go-');
  after(cleanup);
  const verifier = await buildGo(join(import.meta.dirname, '..', 'keys', 'go-note', 'main.go'), dir);
  const w = await startTestWitness(dir, REGISTRY, { allowUnderivedSeeds: true, nextKeyFile: keyFile(dir, 0x02) });
  try {
    const v1 = formatVkey(WITNESS_ORIGIN, SIG_TYPE_ED25519, K1);
    const v2 = formatVkey(WITNESS_ORIGIN, SIG_TYPE_ED25519, decodeHex(hex(0x02), 32));
    for (const index of [1, 2, 3]) {
      const r = await post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(anchorAt(index)), party: { agent: 'EAlice' } });
      assert.equal(r.status, 200, r.text);
      for (const [vkeys, n] of [
        [v1, 1],
        [v2, 1],
        [`${v1},${v2}`, 2],
      ] as const) {
        const out = await run(verifier, ['-url', `${w.url}/log/checkpoint`, '-vkeys', vkeys]);
        assert.match(out.stdout, new RegExp(`NOTE PASSED ${n} signatures`), `checkpoint after anchor ${index} under ${vkeys}`);
      }
    }
  } finally {
    await w.close();
  }
});
