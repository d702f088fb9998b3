// SPEC §1.2: `cosignature_next` is "deterministic; stored at first need". The next key K2 lives in
// Debian's ssh-agent (started here); the first 200 of an anchor during the overlap carries K2's
// cosignature and stores it. Then every key leaves the agent (`ssh-add -D`): a replay and
// GET /v1/anchor/{seed} still carry the same cosignature_next, served from the store (before, it
// was signed anew per reply: the replay answered 503 signer_unavailable), while a new anchor, which
// needs K2 to sign its checkpoint, answers 503. The stored row is what is served: the test reads it
// from the store. Skipped (saying why) when openssh-client is missing, except under CI=true.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { encodeAnchor } from '../../src/anchor/codec.ts';
import { cosignMessage } from '../../src/anchor/messages.ts';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes, verifyEd25519 } from '../../src/crypto/ed25519.ts';
import { decodeHex, encodeHex } from '../../src/encoding/hex.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { TestAgent, agentRef, opensshMissing, requireTool } from '../helpers/external-keys.ts';
import { tempDir } from '../helpers/tmp.ts';
import { get, post, startTestWitness } from '../helpers/witness.ts';

const party = edParty(0x09);
const REGISTRY = { parties: [{ id: 'EAlice', keys: [{ curve: 'ed25519', public_key: encodeHex(party.publicKey) }] }] };
const anchorAt = (seed: number, index: number) =>
  signAnchor(party, { seedId: fill(seed), index, head: fill(index), cumulative: BigInt(index), timestamp: 1_700_000_000 + index });

interface Cos {
  witness_public_key: string;
  signature: string;
}
interface Body {
  cosignature: Cos;
  cosignature_next?: Cos;
  replay: boolean;
  inclusion: { leaf_index: number };
}

void test(
  'cosignature_next is stored at first need: replays and reads carry it after the next key left the agent',
  { timeout: 120_000 },
  async (t) => {
    if (!requireTool(t, await opensshMissing())) return;
    const { dir, cleanup } = tempDir('aw-rotation-stored-');
    after(cleanup);
    const agent = new TestAgent(join(dir, 'agent.sock'));
    await agent.start();
    try {
      const k2 = ed25519KeyFromSeed(fill(0x02));
      const K2 = ed25519PublicKeyBytes(k2);
      const fp = await agent.add(k2, dir, 'k2');
      const w = await startTestWitness(dir, REGISTRY, {
        allowUnderivedSeeds: true,
        nextKeyFile: agentRef(fp, agent.socket),
        signers: { startTimeoutMs: 5_000 },
      });
      try {
        const a = anchorAt(0x61, 1);
        const first = await post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(a), party: { agent: 'EAlice' } });
        assert.equal(first.status, 200, first.text);
        const b = first.body as Body;
        assert.equal(b.cosignature_next?.witness_public_key, encodeHex(K2));
        assert.ok(verifyEd25519(K2, cosignMessage(a), decodeHex(b.cosignature_next.signature, 64)));
        // Stored at first need, before the reply.
        const kept = await w.store.witnessCosignature(b.inclusion.leaf_index, encodeHex(K2));
        assert.equal(kept === undefined ? undefined : encodeHex(kept), b.cosignature_next.signature);

        await agent.removeAll();
        const replay = await post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(a), party: { agent: 'EAlice' } });
        assert.equal(replay.status, 200, replay.text);
        assert.equal((replay.body as Body).replay, true);
        assert.deepEqual((replay.body as Body).cosignature_next, b.cosignature_next);
        const read = await get(`${w.url}/v1/anchor/${encodeHex(fill(0x61))}`);
        assert.equal(read.status, 200, read.text);
        assert.deepEqual((read.body as Body).cosignature_next, b.cosignature_next);
        // A new anchor needs K2 (its checkpoint and its cosignature_next): refused, nothing committed.
        const fresh = await post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(anchorAt(0x62, 1)), party: { agent: 'EAlice' } });
        assert.equal(fresh.status, 503, fresh.text);
        assert.equal((fresh.body as { code: string }).code, 'signer_unavailable');
      } finally {
        await w.close();
      }
    } finally {
      await agent.stop();
    }
  },
);
