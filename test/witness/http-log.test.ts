// SPEC §4 over HTTP: the checkpoint, hash tiles and entry bundles re-derive every root; full tiles
// are immutable; the log verifies against the pinned key. Plus the witness routes' hardening.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { encodeHex } from '../../src/encoding/hex.ts';
import { encodeAnchor } from '../../src/anchor/codec.ts';
import { cosignMessage } from '../../src/anchor/messages.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { parseCheckpoint } from '../../src/note/checkpoint.ts';
import { verifyNote } from '../../src/note/signed-note.ts';
import { ed25519NoteVerifier } from '../../src/note/vkey.ts';
import { decodeEntryBundle, decodeTile, tilePath, entryBundlePath } from '../../src/tlog/tiles.ts';
import { rootFromLeafHashes } from '../../src/tlog/merkle.ts';
import { hashLeaf } from '../../src/tlog/hash.ts';
import type { RunningWitness } from '../../src/witness/node.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { tempDir } from '../helpers/tmp.ts';
import { WITNESS_ORIGIN, get, post, startTestWitness } from '../helpers/witness.ts';

const alice = edParty(0x09);
const registry = { parties: [{ id: 'EAlice', keys: [{ curve: 'ed25519', public_key: encodeHex(alice.publicKey) }] }] };
const witnessKey = ed25519PublicKeyBytes(ed25519KeyFromSeed(fill(0x01)));
let w: RunningWitness;
let tmp: ReturnType<typeof tempDir>;
before(async () => {
  tmp = tempDir();
  w = await startTestWitness(tmp.dir, registry, {
    allowUnderivedSeeds: true,
    maxInFlight: 2,
    maxQueue: 0,
    requestTimeoutMs: 800,
    quota: { anchorsPerMinute: 100000, newSeedsPerDay: 100000 },
  });
});
after(async () => {
  await w.close();
  tmp.cleanup();
});

const anchorFor = (i: number) =>
  signAnchor(alice, {
    seedId: deriveSeedId('did:keri:EAlice', 'did:keri:EAlice', `T${i}`),
    index: 1,
    head: fill(1),
    cumulative: 1n,
    timestamp: 1700000000,
  });

async function checkpoint() {
  const r = await get(`${w.url}/log/checkpoint`);
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8');
  assert.equal(r.headers.get('cache-control'), 'max-age=5');
  const note = verifyNote(r.text, [ed25519NoteVerifier(WITNESS_ORIGIN, witnessKey)]);
  return parseCheckpoint(note.text);
}

void test('tiles and entry bundles re-derive the checkpoint root at every size', async () => {
  const cp0 = await checkpoint();
  assert.equal(cp0.size, 0);
  assert.equal(Buffer.from(cp0.rootHash).toString('base64'), '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=');
  const messages: Uint8Array[] = [];
  for (let batch = 0; batch < 3; batch++) {
    const anchors = Array.from({ length: 100 }, (_, k) => anchorFor(batch * 100 + k));
    for (const a of anchors) {
      // sequential: the in-flight bound of this witness is 2
      const r = await post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(a), party: { agent: 'EAlice' } });
      assert.equal(r.status, 200, r.text);
      messages[(r.body as { inclusion: { leaf_index: number } }).inclusion.leaf_index] = cosignMessage(a);
    }
    const cp = await checkpoint();
    const leafHashes: Uint8Array[] = [];
    for (let n = 0; n * 256 < cp.size; n++) {
      const width = Math.min(256, cp.size - n * 256);
      const t = await get(`${w.url}/log/${tilePath({ level: 0, index: n, width })}`);
      assert.equal(t.status, 200);
      assert.equal(t.headers.get('content-type'), 'application/octet-stream');
      assert.equal(t.headers.get('cache-control'), width === 256 ? 'public, max-age=31536000, immutable' : 'public, max-age=60');
      const hashes = decodeTile(t.bytes, width);
      const e = await get(`${w.url}/log/${entryBundlePath({ index: n, width })}`);
      const entries = decodeEntryBundle(e.bytes, width);
      entries.forEach((entry, i) => {
        assert.deepEqual(hashLeaf(entry), hashes[i]);
        assert.deepEqual(Buffer.from(entry), Buffer.from(messages[n * 256 + i]!));
      });
      leafHashes.push(...hashes);
    }
    assert.deepEqual(rootFromLeafHashes(leafHashes), cp.rootHash);
  }
  // A partial width below the current one is served; wider than the log is 404; bad paths 404.
  assert.equal((await get(`${w.url}/log/tile/0/001.p/7`)).status, 200);
  assert.equal((await get(`${w.url}/log/tile/0/001.p/200`)).status, 404);
  assert.equal((await get(`${w.url}/log/tile/0/002`)).status, 404);
  assert.equal((await get(`${w.url}/log/tile/1/000.p/1`)).status, 200);
  assert.equal((await get(`${w.url}/log/tile/0/1`)).status, 404);
  assert.equal((await get(`${w.url}/log/tile/entries/000`)).status, 200);
});

function rawRequest(port: number, chunks: string[], pauseMs: number): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let out = '';
    s.on('data', (d) => (out += d.toString()));
    s.on('close', () => {
      resolve(out);
    });
    s.on('error', () => {
      resolve(out);
    });
    let i = 0;
    const next = (): void => {
      if (i < chunks.length) s.write(chunks[i++]!);
      if (i < chunks.length) setTimeout(next, pauseMs);
    };
    next();
  });
}

void test('hardening on the witness routes', async () => {
  const port = w.listen!.port;
  // oversize body → 413 and close
  const big = await rawRequest(
    port,
    [`POST /v1/anchor HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 70000\r\n\r\n{`],
    0,
  );
  assert.match(big, /^HTTP\/1\.1 413/);
  assert.match(big, /"code":"body_too_large"/);
  // stalled headers and stalled body → 408 problem
  const t0 = Date.now();
  const slowHeaders = await rawRequest(port, ['GET /health HTTP/1.1\r\n', 'Host: x\r\n'], 3000);
  assert.match(slowHeaders, /^HTTP\/1\.1 408/);
  assert.match(slowHeaders, /request_timeout/);
  const slowBody = await rawRequest(
    port,
    ['POST /v1/anchor HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"an', 'chor'],
    3000,
  );
  assert.match(slowBody, /^HTTP\/1\.1 408/);
  assert.ok(Date.now() - t0 < 6000);
  // wrong method, content type, invalid JSON, unknown fields
  const wrongMethod = await fetch(`${w.url}/v1/anchor`, { method: 'PUT' });
  assert.equal(wrongMethod.status, 405);
  assert.equal(wrongMethod.headers.get('allow'), 'POST');
  assert.equal((await post(`${w.url}/v1/anchor`, '{}', { 'content-type': 'text/plain' })).status, 415);
  assert.equal((await post(`${w.url}/v1/anchor`, '{"anchor":')).status, 400);
  assert.equal(
    (
      (await post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(anchorFor(999)), party: { agent: 'EAlice' }, x: 1 })).body as {
        code: string;
      }
    ).code,
    'malformed_body',
  );
  // 2× the in-flight bound (2, no queue) at once: the excess gets 503 + Retry-After, the rest 200
  const burst = await Promise.all(
    Array.from({ length: 8 }, (_, k) =>
      post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(anchorFor(5000 + k)), party: { agent: 'EAlice' } }),
    ),
  );
  const statuses = burst.map((r) => r.status);
  assert.ok(statuses.includes(200), statuses.join());
  for (const r of burst) {
    if (r.status === 503) {
      assert.equal((r.body as { code: string }).code, 'overloaded');
      assert.ok(r.headers.get('retry-after'));
    } else assert.equal(r.status, 200);
  }
  // health bypasses the queue
  assert.equal((await get(`${w.url}/health`)).status, 200);
});

void test('registry reload: a good file renamed into place is picked up, a bad one is ignored, node.reload() (SIGHUP) reloads', async () => {
  const bob = edParty(0x0b);
  const file = join(tmp.dir, 'registry.json');
  const submitBob = (i: number) =>
    post(`${w.url}/v1/anchor`, {
      anchor: encodeAnchor(
        signAnchor(bob, { seedId: new Uint8Array(32).fill(i), index: 1, head: fill(1), cumulative: 1n, timestamp: 1700000000 }),
      ),
      party: { agent: 'EBob' },
    });
  assert.equal((await submitBob(1)).status, 403);
  const withBob = { parties: [...registry.parties, { id: 'EBob', keys: [{ curve: 'ed25519', public_key: encodeHex(bob.publicKey) }] }] };
  // requests keep succeeding throughout
  let failures = 0;
  let running = true;
  const background = (async () => {
    let i = 0;
    while (running) {
      const r = await post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(anchorFor(10000 + i++)), party: { agent: 'EAlice' } });
      if (r.status !== 200 && r.status !== 503) failures++;
    }
  })();
  writeFileSync(`${file}.new`, JSON.stringify(withBob));
  renameSync(`${file}.new`, file);
  await new Promise((r) => setTimeout(r, 1600));
  assert.equal((await submitBob(2)).status, 200);
  // a bad file (duplicate key) is ignored
  writeFileSync(`${file}.new`, JSON.stringify({ parties: [...withBob.parties, withBob.parties[0]] }));
  renameSync(`${file}.new`, file);
  await new Promise((r) => setTimeout(r, 1600));
  assert.equal((await submitBob(3)).status, 200);
  const metrics = await get(`${w.url}/metrics`);
  assert.match(metrics.text, /registry_reload_failures_total 1/);
  // node.reload() (what the CLI's one SIGHUP handler calls) re-reads the (now fixed) file without Bob
  writeFileSync(file, JSON.stringify(registry));
  const reports = await w.reload();
  assert.deepEqual(
    reports.filter((r) => r.part === 'registry'),
    [{ part: 'registry', error: null }],
  );
  assert.equal((await submitBob(4)).status, 403);
  running = false;
  await background;
  assert.equal(failures, 0);
});
