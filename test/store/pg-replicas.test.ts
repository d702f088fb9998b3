// Scale-out (issue 9): three witness replicas — child processes, one key, one name, one PostgreSQL
// database — behind no load balancer (the test plays it, spreading requests over the replicas).
//  * conflicting submissions for one (seed, index) sent to different replicas at once: exactly one
//    co-signed, the others 409 with a valid duplicity proof, the same everywhere;
//  * cosign role: concurrent add-checkpoint on different replicas from one stored size: one winner
//    per round, the per-origin state (size and cosignature time) never goes backwards;
//  * kill -9 of replicas under load (each restarted): no acknowledged anchor lost, no seed with two
//    co-signed heads at one index, every checkpoint served is a prefix of the final log, and the log
//    audits clean from the tiles and entry bundles of any replica.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeDuplicityProof, encodeAnchor } from '../../src/anchor/codec.ts';
import { verifyDuplicityProof } from '../../src/anchor/duplicity.ts';
import { cosignMessage } from '../../src/anchor/messages.ts';
import type { Anchor } from '../../src/anchor/types.ts';
import { parseAnchorResponse, verifyAnchorResponse } from '../../src/verify/receipt.ts';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { sha256Hex } from '../../src/crypto/sha256.ts';
import { decodeBase64 } from '../../src/encoding/base64.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { parseCheckpoint } from '../../src/note/checkpoint.ts';
import { parseNote } from '../../src/note/signed-note.ts';
import { hashLeaf } from '../../src/tlog/hash.ts';
import { rootFromLeafHashes } from '../../src/tlog/merkle.ts';
import { decodeEntryBundle, decodeTile } from '../../src/tlog/tiles.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { LOG_NAME, SyntheticLog, cosignKeyC, logKeyC, logsDoc } from '../helpers/cosign-harness.ts';
import { pgSkip, startPgServer, type PgServer } from '../helpers/pg-server.ts';
import { startReplica, type Replica } from '../helpers/pg-replicas.ts';
import { tempDir } from '../helpers/tmp.ts';

const NAME = 'witness.test/replicas';
const ORIGIN = `${NAME}/anchors`;
const witnessKey = ed25519KeyFromSeed(fill(0x01));
const pinned = { publicKey: ed25519PublicKeyBytes(witnessKey), logOrigin: ORIGIN, name: NAME };
const alice = edParty(0x09);
const alicePin = { curve: 'ed25519' as const, publicKey: alice.publicKey };
const skip = pgSkip();

const body = (a: Anchor): string =>
  JSON.stringify({ anchor: encodeAnchor(a), party: { agent: 'EAlice' } }, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v));
const seedOf = (tag: number, n: number): Uint8Array => Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? tag : i === 1 ? n : 0x5a));

async function postAnchor(url: string, a: Anchor): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${url}/v1/anchor`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(a) });
  return { status: res.status, json: await res.json() };
}

void describe('three witness replicas on one PostgreSQL database', { skip, timeout: 120_000 }, () => {
  let server: PgServer;
  let cleanup = (): void => undefined;
  let replicaArgs: (i: number) => string[] = () => [];
  const replicas: Replica[] = [];
  /** Every checkpoint any replica returned in a 200, for the final prefix check. */
  const checkpoints: { size: number; root: Uint8Array }[] = [];
  const acked: { seed: string; index: number; leaf: number; message: Uint8Array }[] = [];

  before(async () => {
    server = await startPgServer();
    const url = await server.createDatabase('replicas');
    const t = tempDir('aw-replicas-');
    cleanup = t.cleanup;
    const dir = t.dir;
    writeNewKeyFile(join(dir, 'w.pem'), ed25519PrivateKeyToPem(witnessKey));
    writeNewKeyFile(join(dir, 'c.pem'), ed25519PrivateKeyToPem(cosignKeyC));
    writeFileSync(
      join(dir, 'registry.json'),
      JSON.stringify({ parties: [{ id: 'EAlice', keys: [{ curve: 'ed25519', public_key: encodeHex(alice.publicKey) }] }] }),
    );
    writeFileSync(join(dir, 'logs.json'), JSON.stringify(logsDoc({ origin: LOG_NAME, keys: [new SyntheticLog(LOG_NAME, logKeyC).vkey] })));
    replicaArgs = (i) => [
      '--data-dir',
      join(dir, `r${i}`),
      '--key',
      join(dir, 'w.pem'),
      '--cosign-key',
      join(dir, 'c.pem'),
      '--name',
      NAME,
      '--roles',
      'anchor,cosign',
      '--registry',
      join(dir, 'registry.json'),
      '--logs',
      join(dir, 'logs.json'),
      '--allow-underived-seeds',
      '--party-anchors-per-minute',
      '100000000',
      '--party-new-seeds-per-day',
      '100000000',
      '--verify-threads',
      '0',
      '--log-level',
      'fatal',
      '--store',
      url,
    ];
    // All three start at once: the schema migration and the identity binding race on purpose.
    replicas.push(...(await Promise.all([0, 1, 2].map((i) => startReplica(replicaArgs(i))))));
  });

  after(async () => {
    for (const r of replicas) await r.stop();
    await server.stop();
    cleanup();
  });

  void test('conflicting heads for one (seed, index) on different replicas: exactly one co-signed, the rest 409 with a valid duplicity proof', async () => {
    const SEEDS = 24;
    const sent = Array.from({ length: SEEDS }, (_, s) =>
      [0, 1, 2].map((k) => ({
        replica: (k + s) % 3,
        anchor: signAnchor(alice, { seedId: seedOf(0xa0, s), index: 1, head: fill(0x10 + k), cumulative: 1n, timestamp: 1700000001 }),
      })),
    );
    const results = await Promise.all(sent.flat().map(async (x) => ({ ...x, ...(await postAnchor(replicas[x.replica]!.url, x.anchor)) })));
    for (let s = 0; s < SEEDS; s++) {
      const mine = results.slice(s * 3, s * 3 + 3);
      const ok = mine.filter((r) => r.status === 200);
      const conflicts = mine.filter((r) => r.status === 409);
      assert.equal(ok.length, 1, `seed ${s}: ${mine.map((r) => r.status).join(',')}`);
      assert.equal(conflicts.length, 2, `seed ${s}: ${mine.map((r) => r.status).join(',')}`);
      const receipt = await verifyAnchorResponse(parseAnchorResponse(ok[0]!.json), pinned, alicePin);
      const cosignedHead = encodeHex(receipt.anchor.head);
      const cp = parseCheckpoint(parseNote((ok[0]!.json as { inclusion: { checkpoint: string } }).inclusion.checkpoint).text);
      checkpoints.push({ size: cp.size, root: cp.rootHash });
      acked.push({ seed: encodeHex(receipt.anchor.seedId), index: 1, leaf: receipt.leafIndex, message: cosignMessage(receipt.anchor) });
      const proofs = conflicts.map((r) => JSON.stringify(r.json));
      assert.equal(proofs[0], proofs[1], 'the frozen seed answers the same stored proof');
      const proof = decodeDuplicityProof(conflicts[0]!.json);
      assert.deepEqual(verifyDuplicityProof(proof), { valid: true });
      assert.equal(encodeHex(proof.seedId), encodeHex(seedOf(0xa0, s)));
      assert.equal(proof.index, 1);
      assert.ok(
        [encodeHex(proof.anchorA.head), encodeHex(proof.anchorB.head)].includes(cosignedHead),
        'the proof involves the co-signed head',
      );
      // every replica serves the same latest anchor (frozen) and the same proof
      for (const r of replicas) {
        const latest = (await (await fetch(`${r.url}/v1/anchor/${encodeHex(seedOf(0xa0, s))}`)).json()) as {
          anchor: { head: string };
          duplicity: boolean;
        };
        assert.equal(latest.anchor.head, encodeAnchor(receipt.anchor).head, 'every replica serves the co-signed head');
        assert.equal(latest.duplicity, true);
        assert.equal(JSON.stringify(await (await fetch(`${r.url}/v1/duplicity/${encodeHex(seedOf(0xa0, s))}`)).json()), proofs[0]);
      }
    }
  });

  void test('cosign role: concurrent add-checkpoint on different replicas from one size: one winner per round, state never rolls back', async () => {
    const log = new SyntheticLog(LOG_NAME, logKeyC);
    const originHash = sha256Hex(LOG_NAME);
    let size = 0;
    let lastTime = 0;
    let running = true;
    // A reader polling every replica: the cosigned size it sees never decreases.
    const seen: number[] = [];
    const poller = (async () => {
      for (let i = 0; running; i++) {
        const res = await fetch(`${replicas[i % 3]!.url}/${originHash}/checkpoint`);
        const text = await res.text();
        if (res.status === 200) seen.push(Number(text.split('\n')[1]));
        else assert.equal(res.status, 404);
      }
    })();
    for (let round = 0; round < 10; round++) {
      const proposals = [0, 1, 2].map((k) => size + 1 + k + (round % 2));
      const res = await Promise.all(
        proposals.map(async (newSize, k) => {
          const r = await fetch(`${replicas[(k + round) % 3]!.url}/add-checkpoint`, { method: 'POST', body: log.request(size, newSize) });
          return { newSize, status: r.status, text: await r.text() };
        }),
      );
      const winners = res.filter((r) => r.status === 200);
      assert.equal(winners.length, 1, `round ${round}: ${res.map((r) => `${r.status} ${r.text.trim()}`).join(' | ')}`);
      const won = winners[0]!.newSize;
      for (const r of res.filter((x) => x.status !== 200)) {
        assert.equal(r.status, 409, r.text);
        assert.equal(r.text, `${won}\n`);
      }
      // the cosignature time (bytes 4..12 of the signature line's payload) never goes backwards
      const sig = decodeBase64(winners[0]!.text.trim().split(' ').pop()!);
      const time = Number(Buffer.from(sig).readBigUInt64BE(4));
      assert.ok(time >= lastTime);
      lastTime = time;
      size = won;
    }
    running = false;
    await poller;
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! >= seen[i - 1]!, `the cosigned size went from ${seen[i - 1]} to ${seen[i]}`);
    for (const r of replicas) {
      const text = await (await fetch(`${r.url}/${originHash}/checkpoint`)).text();
      assert.equal(Number(text.split('\n')[1]), size);
    }
  });

  void test('kill -9 of replicas under load: no acknowledged anchor lost, no equivocation, the log audits clean from tiles', async (t) => {
    const WORKERS = 12;
    const KILLS = 4;
    const next = Array.from({ length: WORKERS }, () => 1);
    const live: (Replica | undefined)[] = [...replicas];
    let running = true;
    let retries = 0;
    const anchorOf = (wk: number, index: number) =>
      signAnchor(alice, {
        seedId: seedOf(0xb0, wk),
        index,
        head: fill((index * 7 + wk) % 256),
        cumulative: BigInt(index),
        timestamp: 1700000000 + index,
      });
    const workers = next.map(async (_, wk) => {
      while (running) {
        const a = anchorOf(wk, next[wk]!);
        const up = live.filter((r): r is Replica => r !== undefined);
        const target = up[Math.floor(Math.random() * up.length)];
        if (target === undefined) {
          await new Promise((r) => setTimeout(r, 20));
          continue;
        }
        let res;
        try {
          res = await postAnchor(target.url, a);
        } catch {
          // the replica died with the request in flight: outcome unknown, re-send the same anchor
          retries++;
          continue;
        }
        if (res.status === 503) {
          retries++;
          continue;
        }
        assert.equal(res.status, 200, JSON.stringify(res.json));
        const receipt = await verifyAnchorResponse(parseAnchorResponse(res.json), pinned, alicePin);
        acked.push({ seed: encodeHex(a.seedId), index: a.index, leaf: receipt.leafIndex, message: cosignMessage(a) });
        checkpoints.push({ size: receipt.checkpoint.size, root: receipt.checkpoint.rootHash });
        next[wk]! += 1;
      }
    });
    try {
      for (let k = 0; k < KILLS; k++) {
        await new Promise((r) => setTimeout(r, 300 + Math.random() * 400));
        const victim = k % 3;
        const dying = live[victim]!;
        live[victim] = undefined;
        await dying.kill();
        await new Promise((r) => setTimeout(r, 100));
        const fresh = await startReplica(replicaArgs(victim));
        replicas[victim] = fresh;
        live[victim] = fresh;
      }
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      running = false;
      await Promise.all(workers);
    }
    assert.ok(acked.length > 3 * WORKERS, `only ${acked.length} acknowledged anchors`);

    // Audit from each replica's tiles: same checkpoint everywhere, hash tiles = hashed entries.
    const finals = await Promise.all(replicas.map(async (r) => (await fetch(`${r.url}/log/checkpoint`)).text()));
    assert.equal(new Set(finals).size, 1, 'replicas serve one checkpoint');
    const final = parseCheckpoint(parseNote(finals[0]!).text);
    const entries: Uint8Array[] = [];
    for (let n = 0; n * 256 < final.size; n++) {
      const width = Math.min(256, final.size - n * 256);
      const path = `${String(n).padStart(3, '0')}${width < 256 ? `.p/${width}` : ''}`;
      const from = replicas[n % 3]!.url;
      const bundle = decodeEntryBundle(new Uint8Array(await (await fetch(`${from}/log/tile/entries/${path}`)).arrayBuffer()), width);
      const tile = decodeTile(new Uint8Array(await (await fetch(`${from}/log/tile/0/${path}`)).arrayBuffer()), width);
      assert.deepEqual(tile.map(encodeHex), bundle.map(hashLeaf).map(encodeHex), `tile 0/${path}`);
      entries.push(...bundle);
    }
    const leaves = entries.map(hashLeaf);
    assert.deepEqual(Buffer.from(rootFromLeafHashes(leaves)), Buffer.from(final.rootHash));
    // every acknowledged anchor is in the log at its leaf index, and the latest of each seed is at least it
    const maxIndex = new Map<string, number>();
    for (const a of acked) {
      assert.deepEqual(Buffer.from(entries[a.leaf]!), Buffer.from(a.message), `acknowledged anchor ${a.seed}/${a.index} at leaf ${a.leaf}`);
      maxIndex.set(a.seed, Math.max(maxIndex.get(a.seed) ?? 0, a.index));
    }
    for (const [seed, index] of maxIndex) {
      const latest = (await (await fetch(`${replicas[0]!.url}/v1/anchor/${seed}`)).json()) as { anchor: { index: number } };
      assert.ok(latest.anchor.index >= index, `seed ${seed} went back to ${latest.anchor.index} < ${index}`);
    }
    // no two co-signed heads at one (seed, index)
    const heads = new Map<string, string>();
    for (const e of entries) {
      const o = JSON.parse(Buffer.from(e).toString()) as { v: string; seedId: string; index: number; head: string };
      if (o.v !== 'auths-anchor/cosign/v1') continue;
      const key = `${o.seedId}/${o.index}`;
      assert.ok(!heads.has(key) || heads.get(key) === o.head, `two heads co-signed at ${key}`);
      heads.set(key, o.head);
    }
    // every checkpoint any replica returned is a prefix of the final log
    for (const cp of checkpoints) assert.deepEqual(Buffer.from(rootFromLeafHashes(leaves.slice(0, cp.size))), Buffer.from(cp.root));
    t.diagnostic(`${acked.length} acknowledged anchors, ${retries} re-sent after kills, log size ${final.size}`);
  });
});
