// SPEC §1.3 "A K1-pinned monitor follows" (§1.2 Clients): a monitor pinned to K1 — by trust on
// first use, or by a witness set naming K1 — polls a real node through announce → overlap →
// complete. The announce entry (sig_old under the pinned K1, sig_new under K2) pins K2 as next
// (`witness_key_rotated`, info, reported once; persisted in the state); overlap checkpoints and
// anchors keep verifying; the completion moves the pin to K2 alone (the node's /health now claims
// K2, which before this was `key_changed` / `unknown_witness`). A forged announce (sig_old by
// another key, or a bad sig_new) is `witness_key_rotation_invalid` (alert) and pins nothing: the
// witness then claiming K3 stays `key_changed`. After a verifying announce of K3, a checkpoint
// signed by K3 alone is accepted during the overlap (either key counts), one by any other key not.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { encodeAnchor } from '../../src/anchor/codec.ts';
import { parseRegistry } from '../../src/anchor/registry.ts';
import {
  emptyMonitorState,
  monitorPoll,
  parseMonitorState,
  type Finding,
  type MonitorConfig,
  type MonitorState,
} from '../../src/client/index.ts';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem, ed25519PublicKeyBytes, signEd25519 } from '../../src/crypto/ed25519.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { stringifyJson } from '../../src/encoding/json.ts';
import { parseJsonBody } from '../../src/client/http.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { signNote } from '../../src/note/signed-note.ts';
import { ed25519NoteSigner } from '../../src/note/vkey.ts';
import { encodeRotationEntry, KEY_ROTATION_V, rotationMessage, type RotationEntry } from '../../src/verify/key-rotation.ts';
import { makeWitnessSet } from '../../src/verify/witness-set.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { tempDir } from '../helpers/tmp.ts';
import { post, startTestWitness, WITNESS_NAME, WITNESS_ORIGIN } from '../helpers/witness.ts';

const party = edParty(0x09);
const REGISTRY = { parties: [{ id: 'EAlice', keys: [{ curve: 'ed25519', public_key: encodeHex(party.publicKey) }] }] };
const SEED = fill(0x77);
const key = (seed: number) => ed25519KeyFromSeed(fill(seed));
const pub = (seed: number): Uint8Array => ed25519PublicKeyBytes(key(seed));
const K1 = encodeHex(pub(0x01)); // the helper's --key
const K2 = encodeHex(pub(0x02));
const http = { timeoutMs: 5000, retries: 0 };

function keyFile(dir: string, seed: number): string {
  const f = join(dir, `k${seed}.pem`);
  writeNewKeyFile(f, ed25519PrivateKeyToPem(key(seed)));
  return f;
}

const anchorAt = (index: number) =>
  signAnchor(party, { seedId: SEED, index, head: fill(index), cumulative: BigInt(index), timestamp: 1_700_000_000 + index });

const kinds = (fs: readonly Finding[]): string[] => fs.map((f) => f.kind).sort();
/** The state round-trips through JSON as the CLI persists it. */
const persisted = (s: MonitorState): MonitorState => parseMonitorState(parseJsonBody(stringifyJson(s)));

void test('a K1-pinned monitor follows announce → overlap → complete (trust on first use and a K1 witness set)', async () => {
  const { dir, cleanup } = tempDir('aw-monitor-rotation-');
  after(cleanup);
  const k2 = keyFile(dir, 0x02);
  const base = { allowUnderivedSeeds: true };
  let w = await startTestWitness(dir, REGISTRY, base);
  const port = Number(new URL(w.url).port);
  const registry = parseRegistry(REGISTRY);
  const tofu: MonitorConfig = { witnesses: [w.url], seeds: [SEED], registry, http };
  const set = makeWitnessSet(1, [{ name: WITNESS_NAME, publicKey: pub(0x01), logOrigin: WITNESS_ORIGIN }]);
  const pinned: MonitorConfig = { ...tofu, witnessSet: set };
  let s1 = emptyMonitorState();
  let s2 = emptyMonitorState();
  const poll = async (t: number): Promise<[Finding[], Finding[]]> => {
    const a = await monitorPoll(tofu, s1, t);
    const b = await monitorPoll(pinned, s2, t);
    [s1, s2] = [persisted(s1), persisted(s2)];
    return [a.findings, b.findings];
  };
  try {
    assert.equal((await post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(anchorAt(1)), party: { agent: 'EAlice' } })).status, 200);
    for (const f of await poll(1000)) assert.deepEqual(kinds(f), []);
    assert.equal(s1.witnesses[WITNESS_NAME]?.public_key, K1);
    await w.close();

    // Announce (same port: trust on first use is bound to the URL).
    const now = Math.floor(Date.now() / 1000);
    w = await startTestWitness(dir, REGISTRY, { ...base, port, nextKeyFile: k2, rotationNow: () => now });
    assert.equal((await post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(anchorAt(2)), party: { agent: 'EAlice' } })).status, 200);
    for (const [f, s] of (await poll(2000)).map((f, i) => [f, [s1, s2][i]!] as const)) {
      assert.deepEqual(kinds(f), ['witness_key_rotated'], JSON.stringify(f));
      assert.equal(f[0]!.severity, 'info');
      assert.match(f[0]!.message, /announced the next key/);
      assert.equal((f[0]!.evidence as { entry: RotationEntry }).entry.stage, 'announce');
      const rec = s.witnesses[WITNESS_NAME]!;
      assert.deepEqual([rec.public_key, rec.next_key], [K1, K2], 'K2 pinned as next, K1 still the pin (persisted)');
      assert.equal(rec.anchors[encodeHex(SEED)]?.anchor.index, 2, 'the overlap anchor verified');
    }
    // The overlap goes on: nothing new is reported, anchors keep verifying.
    assert.equal((await post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(anchorAt(3)), party: { agent: 'EAlice' } })).status, 200);
    for (const f of await poll(3000)) assert.deepEqual(kinds(f), []);
    assert.equal(s1.witnesses[WITNESS_NAME].anchors[encodeHex(SEED)]?.anchor.index, 3);
    await w.close();

    // Complete: /health now claims K2; the pin moves to K2 alone.
    w = await startTestWitness(dir, REGISTRY, { ...base, port, keyFile: k2, rotationNow: () => now + 86_401 });
    assert.equal((await post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(anchorAt(4)), party: { agent: 'EAlice' } })).status, 200);
    for (const [f, s] of (await poll(4000)).map((f, i) => [f, [s1, s2][i]!] as const)) {
      assert.deepEqual(kinds(f), ['witness_key_rotated'], JSON.stringify(f));
      assert.match(f[0]!.message, /completed its rotation/);
      const rec = s.witnesses[WITNESS_NAME]!;
      assert.deepEqual([rec.public_key, rec.next_key, rec.rotated_from], [K2, undefined, [K1]]);
      assert.equal(rec.anchors[encodeHex(SEED)]?.anchor.index, 4, 'K2-only anchors verify under the new pin');
    }
    for (const f of await poll(5000)) assert.deepEqual(kinds(f), [], 'reported once');
  } finally {
    await w.close();
  }
});

/**
 * A witness in front of the real one: every route passes through, except a forged GET
 * /v1/key-rotation, /health's key (`claim`) and /log/checkpoint re-signed by another key alone (`resign`).
 */
async function forgingProxy(
  target: () => string,
  items: () => unknown[],
  claim: () => string | undefined,
  resign: () => number | undefined,
): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    void (async () => {
      if (req.url === '/v1/key-rotation') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: items() }));
        return;
      }
      const r = await fetch(`${target()}${req.url}`);
      let body = Buffer.from(await r.arrayBuffer());
      const k = claim();
      if (req.url === '/health' && k !== undefined) {
        const doc = JSON.parse(body.toString()) as { keys: { witness: string } };
        doc.keys.witness = k;
        body = Buffer.from(JSON.stringify(doc));
      }
      const signer = resign();
      if (req.url === '/log/checkpoint' && signer !== undefined) {
        const text = body.toString().split('\n\n')[0]! + '\n';
        body = Buffer.from(signNote(text, [ed25519NoteSigner(WITNESS_ORIGIN, key(signer))]));
      }
      res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/octet-stream' }).end(body);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, server };
}

function announce(newSeed: number, oldSigner: number, newSigner: number): RotationEntry {
  const e: RotationEntry = {
    v: KEY_ROTATION_V,
    stage: 'announce',
    name: WITNESS_NAME,
    origin: WITNESS_ORIGIN,
    old: K1,
    new: encodeHex(pub(newSeed)),
    time: '2026-01-01T00:00:00Z',
  };
  const msg = rotationMessage(e);
  return { ...e, sig_old: encodeHex(signEd25519(key(oldSigner), msg)), sig_new: encodeHex(signEd25519(key(newSigner), msg)) };
}

void test('a forged announce (sig_old by another key, or a bad sig_new) is an alert and pins nothing', async () => {
  const { dir, cleanup } = tempDir('aw-monitor-rotation-forged-');
  after(cleanup);
  const w = await startTestWitness(dir, REGISTRY, { allowUnderivedSeeds: true });
  let items: unknown[] = [];
  let claim: string | undefined;
  let resign: number | undefined;
  const proxy = await forgingProxy(
    () => w.url,
    () => items,
    () => claim,
    () => resign,
  );
  try {
    const config: MonitorConfig = { witnesses: [proxy.url], seeds: [], http };
    const state = emptyMonitorState();
    assert.deepEqual(kinds((await monitorPoll(config, state, 1000)).findings), []);
    const K3 = encodeHex(pub(0x03));
    for (const forged of [announce(0x03, 0x04, 0x03), announce(0x03, 0x01, 0x04)]) {
      assert.ok(encodeRotationEntry(forged).length > 0);
      items = [{ ...forged, log_index: 5 }];
      const f = (await monitorPoll(config, state, 2000)).findings;
      assert.deepEqual(kinds(f), ['witness_key_rotation_invalid'], JSON.stringify(f));
      assert.equal(f[0]!.severity, 'alert');
      assert.match(f[0]!.message, forged.sig_old === announce(0x03, 0x01, 0x03).sig_old ? /sig_new/ : /sig_old/);
      assert.equal(state.witnesses[WITNESS_NAME]!.next_key, undefined, 'K3 not pinned');
    }
    // The witness then claiming K3 is not trusted.
    claim = K3;
    const f = (await monitorPoll(config, state, 3000)).findings;
    assert.ok(
      f.some((x) => x.kind === 'key_changed'),
      JSON.stringify(f),
    );
    assert.equal(state.witnesses[WITNESS_NAME]!.public_key, K1);
    // A verifying announce of K3: during the overlap a checkpoint signed by K3 alone is accepted too.
    claim = undefined;
    items = [{ ...announce(0x03, 0x01, 0x03), log_index: 6 }];
    assert.deepEqual(kinds((await monitorPoll(config, state, 4000)).findings), ['witness_key_rotated']);
    assert.equal(state.witnesses[WITNESS_NAME]!.next_key, K3);
    resign = 0x03;
    assert.deepEqual(kinds((await monitorPoll(config, state, 5000)).findings), [], 'a K3-only checkpoint verifies during the overlap');
    resign = 0x04;
    assert.deepEqual(kinds((await monitorPoll(config, state, 6000)).findings), ['invalid_response'], 'any other key does not');
  } finally {
    await new Promise((ok) => proxy.server.close(ok));
    await w.close();
  }
});
