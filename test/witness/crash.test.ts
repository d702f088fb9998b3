// kill -9 recovery: a child witness under concurrent load is SIGKILLed repeatedly. Afterwards every
// acknowledged anchor is present and logged, no seed has two co-signed heads at one index, and
// every checkpoint served is a prefix of the final log (consistent with every later one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeHex } from '../../src/encoding/hex.ts';
import { encodeAnchor } from '../../src/anchor/codec.ts';
import { cosignMessage } from '../../src/anchor/messages.ts';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem } from '../../src/crypto/ed25519.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { parseCheckpoint } from '../../src/note/checkpoint.ts';
import { parseNote } from '../../src/note/signed-note.ts';
import { decodeEntryBundle } from '../../src/tlog/tiles.ts';
import { hashLeaf } from '../../src/tlog/hash.ts';
import { rootFromLeafHashes } from '../../src/tlog/merkle.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { tempDir } from '../helpers/tmp.ts';
import { spawnServe, type ServeChild } from '../helpers/spawn-serve.ts';

const CYCLES = Number(process.env.CRASH_CYCLES ?? 10);
const WORKERS = 16;

function startChild(dir: string): Promise<ServeChild> {
  return spawnServe(
    [
      'serve',
      '--listen',
      '127.0.0.1:0',
      '--data-dir',
      join(dir, 'data'),
      '--key',
      join(dir, 'w.pem'),
      '--name',
      'witness.test/crash',
      '--roles',
      'anchor',
      '--registry',
      join(dir, 'registry.json'),
      '--allow-underived-seeds',
      '--party-anchors-per-minute',
      '100000000',
      '--party-new-seeds-per-day',
      '100000000',
    ],
    { stderr: 'ignore' },
  );
}

void test(
  `kill -9 at random moments, ${CYCLES} cycles: no acknowledged write lost, no equivocation, checkpoints consistent`,
  { timeout: 120_000 },
  async () => {
    const { dir, cleanup } = tempDir();
    const party = edParty(0x09);
    writeNewKeyFile(join(dir, 'w.pem'), ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(1))));
    writeFileSync(
      join(dir, 'registry.json'),
      JSON.stringify({ parties: [{ id: 'EAlice', keys: [{ curve: 'ed25519', public_key: encodeHex(party.publicKey) }] }] }),
    );
    // Each worker owns one seed and extends it; an unanswered request is re-sent unchanged.
    const next = Array.from({ length: WORKERS }, () => 1);
    const acked = new Map<string, { index: number; leaf: number; message: Uint8Array }[]>();
    const checkpoints: { size: number; root: Uint8Array }[] = [];
    const anchorOf = (wk: number, index: number) =>
      signAnchor(party, {
        seedId: new Uint8Array(32).fill(wk + 1),
        index,
        head: fill((index * 7 + wk) % 256),
        cumulative: BigInt(index),
        timestamp: 1700000000 + index,
      });
    try {
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const { child, url } = await startChild(dir);
        let alive = true;
        const exited = new Promise((r) => child.once('exit', r));
        const workers = next.map(async (_, wk) => {
          while (alive) {
            const a = anchorOf(wk, next[wk]!);
            try {
              const res = await fetch(`${url}/v1/anchor`, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ anchor: encodeAnchor(a), party: { agent: 'EAlice' } }, (_k, v: unknown) =>
                  typeof v === 'bigint' ? String(v) : v,
                ),
              });
              const body = (await res.json()) as { inclusion?: { leaf_index: number; checkpoint: string } };
              assert.equal(res.status, 200, JSON.stringify(body));
              const seed = encodeHex(a.seedId);
              const list = acked.get(seed) ?? [];
              list.push({ index: a.index, leaf: body.inclusion!.leaf_index, message: cosignMessage(a) });
              acked.set(seed, list);
              const cp = parseCheckpoint(parseNote(body.inclusion!.checkpoint).text);
              checkpoints.push({ size: cp.size, root: cp.rootHash });
              next[wk]! += 1;
            } catch (e) {
              if (e instanceof assert.AssertionError) throw e;
              // connection cut by the kill: outcome unknown, re-send the same anchor next cycle
              return;
            }
          }
        });
        await new Promise((r) => setTimeout(r, 150 + Math.random() * 350));
        child.kill('SIGKILL');
        alive = false;
        await exited;
        await Promise.all(workers);
      }
      // Final audit from a fresh process.
      const { child, url } = await startChild(dir);
      try {
        const cpText = await (await fetch(`${url}/log/checkpoint`)).text();
        const final = parseCheckpoint(parseNote(cpText).text);
        const entries: Uint8Array[] = [];
        for (let n = 0; n * 256 < final.size; n++) {
          const width = Math.min(256, final.size - n * 256);
          const res = await fetch(`${url}/log/tile/entries/${String(n).padStart(3, '0')}${width < 256 ? `.p/${width}` : ''}`);
          entries.push(...decodeEntryBundle(new Uint8Array(await res.arrayBuffer()), width));
        }
        const leaves = entries.map(hashLeaf);
        assert.deepEqual(rootFromLeafHashes(leaves), final.rootHash);
        // every acknowledged anchor is in the log at its leaf index, and readable
        let ackCount = 0;
        for (const [seed, list] of acked) {
          for (const a of list) {
            ackCount++;
            assert.deepEqual(Buffer.from(entries[a.leaf]!), Buffer.from(a.message));
          }
          const latest = (await (await fetch(`${url}/v1/anchor/${seed}`)).json()) as { anchor: { index: number } };
          assert.ok(latest.anchor.index >= Math.max(...list.map((a) => a.index)));
        }
        assert.ok(ackCount > CYCLES, `only ${ackCount} acknowledged anchors`);
        // no two co-signed heads at one (seed, index)
        const heads = new Map<string, string>();
        for (const e of entries) {
          const o = JSON.parse(Buffer.from(e).toString()) as { v: string; seedId: string; index: number; head: string };
          if (o.v !== 'auths-anchor/cosign/v1') continue;
          const k = `${o.seedId}/${o.index}`;
          const h = heads.get(k);
          assert.ok(h === undefined || h === o.head, `two heads co-signed at ${k}`);
          heads.set(k, o.head);
        }
        // every checkpoint served is a prefix of the final log
        for (const cp of checkpoints) assert.deepEqual(rootFromLeafHashes(leaves.slice(0, cp.size)), cp.root);
      } finally {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
    } finally {
      cleanup();
    }
  },
);
