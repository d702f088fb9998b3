// SPEC §4.1 end to end on loopback: three anchor witnesses (anchor + cosign roles) cosign each
// other's own logs; C also has an ML-DSA-44 cosign key (when the runtime has ML-DSA-44), listed
// beside its Ed25519 one, so A's served checkpoint carries its subtree/v1 (0x06) line too. After anchors at one node its /log/checkpoint carries both peers' cosignatures
// (verified here under the peers' vkeys, and by the Go x/mod client of test/cosign/go-client); a
// peer restarted mid-way resumes from its stored size; the published size survives a restart and
// never decreases; the test-only fork hook's inconsistent checkpoint is refused by every peer.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseCheckpoint } from '../../src/note/checkpoint.ts';
import { parseNote, verifyNote } from '../../src/note/signed-note.ts';
import { parseVkey } from '../../src/note/vkey.ts';
import { mlDsa44Supported } from '../../src/crypto/ml-dsa.ts';
import { tempDir } from '../helpers/tmp.ts';
import { get } from '../helpers/witness.ts';
import { anchorAt, makePeer, metricValue, startPeer, type Peer } from '../helpers/log-witness-peers.ts';
import { until } from '../helpers/poll.ts';

const run = promisify(execFile);
const GOPATH = '/usr/share/gocode';

let tmp: ReturnType<typeof tempDir>;
let A: Peer, B: Peer, C: Peer;
const others = (p: Peer): Peer[] => [A, B, C].filter((q) => q !== p);

before(async () => {
  tmp = tempDir('aw-logwit-');
  A = await makePeer(1, tmp.dir);
  B = await makePeer(2, tmp.dir);
  C = await makePeer(3, tmp.dir, { mlDsa: mlDsa44Supported() });
  await startPeer(A, others(A), { testOnlyFaultHooks: true });
  await startPeer(B, others(B));
  await startPeer(C, others(C));
});
after(async () => {
  for (const p of [A, B, C]) await p.node?.close();
  tmp.cleanup();
});

/**
 * GET, once more when the client's pooled keep-alive connection turns out closed (the nodes here
 * restart on their ports; the server closing an idle connection is not a failure).
 */
async function fetchAgain(url: string, headers: Record<string, string> = {}): ReturnType<typeof get> {
  try {
    return await get(url, headers);
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    return get(url, headers);
  }
}

/** A's served checkpoint: the parsed note and checkpoint. */
async function served(p: Peer, query = '') {
  const r = await fetchAgain(`${p.url}/log/checkpoint${query}`);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8');
  const note = parseNote(r.text);
  return { text: r.text, note, cp: parseCheckpoint(note.text) };
}

const verifiersOf = (p: Peer) => [parseVkey(p.logVkey), ...others(p).flatMap((o) => o.cosignVkeys.map(parseVkey))];

async function health(p: Peer) {
  const r = await fetchAgain(`${p.url}/health`);
  assert.equal(r.status, 200);
  return r.body as {
    status: string;
    log: { size: number };
    log_witnesses: { url: string; cosigned_size: number; last_success: string | null; lag_entries: number; lag_seconds: number }[];
    warnings: string[];
  };
}

void test('after anchors at one node, its /log/checkpoint carries both peers’ cosignatures, verifying under their vkeys and with Go x/mod', async (t) => {
  // Before any anchor: the size-0 checkpoint (cosigned or not), never a 404.
  assert.equal((await served(A)).cp.size, 0);
  const started = Date.now();
  const size = await anchorAt(A, 3);
  assert.equal(size, 3);
  // ?unwitnessed=1: the newest node-signed checkpoint at once, with only the node's line.
  const unwitnessed = await served(A, '?unwitnessed=1');
  assert.equal(unwitnessed.cp.size, 3);
  assert.equal(unwitnessed.note.signatures.length, 1);
  const witnessed = await until('A to publish size 3', async () => {
    const s = await served(A);
    return s.cp.size === 3 ? s : undefined;
  });
  t.diagnostic(`anchor → quorum-cosigned checkpoint served: ${Date.now() - started} ms (interval 100 ms)`);
  assert.equal(witnessed.note.text, unwitnessed.note.text, 'the same checkpoint, now with the cosignatures');
  const v = verifyNote(witnessed.text, verifiersOf(A));
  assert.deepEqual(v.verified.map((x) => x.verifier.vkey).sort(), [A.logVkey, ...B.cosignVkeys, ...C.cosignVkeys].sort());
  assert.equal(v.unverified.length, 0);
  t.diagnostic(
    `witness lines: ${B.cosignVkeys.length + C.cosignVkeys.length} (ML-DSA-44: ${mlDsa44Supported() ? 'yes' : 'not in this runtime'})`,
  );
  // Each peer's lines verify under that peer's vkeys alone (cosignature/v1, subtree/v1 over A's checkpoint).
  for (const o of others(A)) for (const k of o.cosignVkeys) assert.equal(verifyNote(witnessed.text, [parseVkey(k)]).verified.length, 1, k);

  const h = await health(A);
  assert.equal(h.status, 'ok');
  assert.deepEqual(
    h.log_witnesses.map((w) => [w.url, w.cosigned_size, w.lag_entries]),
    others(A).map((o) => [`${o.url}/`, 3, 0]),
  );
  for (const w of h.log_witnesses) assert.match(w.last_success!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.deepEqual(h.warnings, []);
  const metrics = (await fetchAgain(`${A.url}/metrics`)).text;
  for (const o of others(A)) {
    assert.ok(metricValue(metrics, 'log_witness_requests_total', { witness: `${o.url}/`, outcome: 'cosigned' }) >= 1);
    assert.equal(metricValue(metrics, 'log_witness_lag_entries', { witness: `${o.url}/` }), 0);
  }
  const page = await get(`${A.url}/`, { accept: 'text/html' });
  assert.match(page.text, /Witnesses of this log/);
  assert.ok(page.text.includes(`${B.url}/`));

  // The Go x/mod client (note.Open + its own cosignature/v1 verifier) agrees.
  const missing = await goMissing();
  if (missing !== null) {
    t.diagnostic(`Go check skipped: ${missing}`);
    return;
  }
  const env = { ...process.env, GO111MODULE: 'off', GOPATH, GOFLAGS: '', GOCACHE: join(tmpdir(), 'anchor-witness-gocache') };
  const bin = join(tmp.dir, 'go-client');
  await run('go', ['build', '-o', bin, join(import.meta.dirname, '..', 'cosign', 'go-client', 'main.go')], { env, timeout: 120_000 });
  const { stdout } = await run(
    bin,
    [
      '-checkpoint-url',
      `${A.url}/log/checkpoint`,
      '-log-vkey',
      A.logVkey,
      '-witness',
      others(A)
        .map((o) => o.cosignVkey)
        .join(','),
    ],
    { timeout: 30_000 },
  );
  assert.match(stdout, /WITNESSED PASSED 3 signatures/);
  // And it refuses the unwitnessed one (a witness's line is missing).
  await assert.rejects(
    run(bin, ['-checkpoint-url', `${A.url}/log/checkpoint?unwitnessed=1`, '-log-vkey', A.logVkey, '-witness', B.cosignVkey], {
      timeout: 30_000,
    }),
    (e: { stdout?: string }) => /FAIL/.test(e.stdout ?? ''),
  );
});

void test('a peer restarted mid-way resumes from its stored size; the published size survives a restart of the node and never decreases', async () => {
  const before = (await served(A)).cp.size;
  await B.node!.close();
  const size = await anchorAt(A, 2);
  // C keeps up; B is down: quorum 2 is not met, the published checkpoint stays.
  await until('C to cosign A at the new size', async () => {
    const h = await health(A);
    return h.log_witnesses.find((w) => w.url === `${C.url}/`)?.cosigned_size === size ? true : undefined;
  });
  assert.equal((await served(A)).cp.size, before);
  const lagging = (await health(A)).log_witnesses.find((w) => w.url === `${B.url}/`)!;
  assert.equal(lagging.lag_entries, size - before);
  const metricsBefore = (await fetchAgain(`${A.url}/metrics`)).text;
  assert.ok(metricValue(metricsBefore, 'log_witness_requests_total', { witness: `${B.url}/`, outcome: 'unreachable' }) >= 1);

  await startPeer(B, others(B));
  const published = await until('A to publish the new size', async () => {
    const s = await served(A);
    return s.cp.size === size ? s : undefined;
  });
  assert.equal(verifyNote(published.text, verifiersOf(A)).verified.length, verifiersOf(A).length);
  // B resumed from the size it had stored for A's log: no 409 was needed.
  assert.equal((await B.node!.store.cosign.getOrigin(A.origin))?.size, size);
  const metrics = (await fetchAgain(`${A.url}/metrics`)).text;
  assert.equal(metricValue(metrics, 'log_witness_requests_total', { witness: `${B.url}/`, outcome: 'conflict' }), 0);

  // Restart A itself: the published checkpoint is served at once (persisted), cosignatures included.
  await A.node!.close();
  await startPeer(A, others(A), { testOnlyFaultHooks: true });
  const again = await served(A);
  assert.equal(again.cp.size, size, 'never decreases across a restart');
  assert.equal(again.text, published.text);
  const h = await health(A);
  assert.deepEqual(
    h.log_witnesses.map((w) => w.cosigned_size),
    [size, size],
    'the per-witness state survives the restart',
  );
});

void test('the test-only fault hook: a second, inconsistent checkpoint is refused by every peer (409/422, no cosignature)', async () => {
  const publishedBefore = await served(A);
  assert.equal(B.node!.testHooks, undefined, 'no hook without the test-only option');
  const fork = await A.node!.testHooks!.forkLogCheckpoint();
  const forked = parseCheckpoint(parseNote(fork.note).text);
  assert.equal(forked.size, publishedBefore.cp.size);
  assert.notDeepEqual(forked.rootHash, publishedBefore.cp.rootHash);
  assert.equal(fork.replies.length, 2);
  for (const r of fork.replies) {
    assert.equal(r.cosigned, false);
    assert.ok(r.status === 409 || r.status === 422, `status ${r.status}`);
  }
  // The peers kept it as evidence (same size, another root, validly signed by A's log key) and
  // still hold the consistent checkpoint.
  for (const o of others(A)) {
    const ev = await o.node!.store.cosign.listEvidence(A.origin);
    assert.ok(ev.some((e) => e.note.startsWith(parseNote(fork.note).text)));
    const held = (await o.node!.store.cosign.getOrigin(A.origin))!;
    assert.equal(Buffer.from(held.root).toString('hex'), Buffer.from(publishedBefore.cp.rootHash).toString('hex'));
  }
  assert.equal((await served(A)).text, publishedBefore.text, 'nothing of the fork is published');
});

void test('the fault hook is reachable from no flag, variable or config file', () => {
  const dir = join(import.meta.dirname, '..', '..', 'src', 'cli');
  for (const f of readdirSync(dir)) assert.doesNotMatch(readFileSync(join(dir, f), 'utf8'), /testOnlyFaultHooks|forkLogCheckpoint/, f);
});

async function goMissing(): Promise<string | null> {
  try {
    await run('go', ['version'], { timeout: 10_000 });
  } catch {
    return 'go is not installed';
  }
  if (!existsSync(join(GOPATH, 'src/golang.org/x/mod/sumdb/note'))) return `golang.org/x/mod is not under ${GOPATH}`;
  return null;
}
