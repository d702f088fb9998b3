// SPEC §1.1 with §4.1: the witnessed own log with the witness key in an ssh-agent (Debian's
// OpenSSH agent, started here). Before: the witnessing signed the size-0 checkpoint (served before
// the first quorum) synchronously, which an external key cannot do, so GET /log/checkpoint answered
// 503 signer_unavailable although the agent was up. Now:
//   - before any quorum, GET /log/checkpoint is 200: the size-0 checkpoint signed through the agent,
//     verifying under the node's log vkey;
//   - after anchors, the served checkpoint is the agent-signed one with the peer's cosignature line;
//   - `ssh-add -D`: the served (already signed) checkpoint stays 200 (GETs are unaffected).
// Skipped (saying why) when openssh-client is missing, except under CI=true.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { parseVkey } from '../../src/note/vkey.ts';
import { verifyNote } from '../../src/note/signed-note.ts';
import { TestAgent, agentRef, opensshMissing, requireTool } from '../helpers/external-keys.ts';
import { anchorAt, makePeer, publishedCheckpoint, startPeer, type Peer } from '../helpers/log-witness-peers.ts';
import { waitFor } from '../helpers/poll.ts';
import { tempDir } from '../helpers/tmp.ts';

void test(
  'witnessed own log with an agent-held witness key: size-0 checkpoint served, quorum checkpoints cosigned',
  { timeout: 120_000 },
  async (t) => {
    if (!requireTool(t, await opensshMissing())) return;
    const { dir, cleanup } = tempDir('aw-lw-agent-');
    const agent = new TestAgent(join(dir, 'agent.sock'));
    const peers: Peer[] = [];
    try {
      await agent.start();
      const a = await makePeer(1, dir);
      const b = await makePeer(2, dir);
      peers.push(a, b);
      const fp = await agent.add(a.witnessKey, dir, 'a-witness');
      await startPeer(b, [a]);
      await startPeer(a, [b], { keyFile: agentRef(fp, agent.socket), signers: { startTimeoutMs: 5_000 } });
      const logVerifier = parseVkey(a.logVkey);
      const cosigner = parseVkey(b.cosignVkey);

      // Before any quorum: the size-0 checkpoint, signed through the agent.
      const first = await publishedCheckpoint(a);
      assert.equal(first.cp.size, 0);
      verifyNote(first.text, [logVerifier]);

      // Anchors: B cosigns A's checkpoints; A serves the quorum checkpoint with B's line.
      const size = await anchorAt(a, 3);
      await waitFor('A publishes a checkpoint B cosigned', async () => (await publishedCheckpoint(a)).cp.size >= size, 30_000);
      const served = await publishedCheckpoint(a);
      const verified = verifyNote(served.text, [logVerifier, cosigner]);
      assert.equal(verified.verified.length, 2, 'the agent-signed checkpoint line and the peer cosignature');

      // The agent loses its keys: GETs still 200 with the signed checkpoint.
      await agent.removeAll();
      const during = await publishedCheckpoint(a);
      assert.equal(during.cp.size, served.cp.size);
    } finally {
      for (const p of peers) await p.node?.close();
      await agent.stop();
      cleanup();
    }
  },
);
