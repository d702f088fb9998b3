// SPEC §1.1: `--kel-key` may be an `ssh-agent:` reference (before: refused with key_unsupported,
// since the KERI role signed synchronously in the process). A node whose KERI witness key is in
// Debian's OpenSSH agent (started here) answers byte for byte what a node with the same key in a
// file answers (Ed25519 is deterministic): its OOBI and its receipt for a controller's inception.
// `ssh-add -D` → POST /receipts 503 signer_unavailable, /ready 503 naming `signer kel`, GET /oobi
// still 200 (signed once at start); re-adding → receipts again.
// Skipped (saying why) when openssh-client is missing, except under CI=true.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { basicPrefix } from '../../src/kel-witness/identity.ts';
import { fill } from '../helpers/anchors.ts';
import { TestAgent, agentRef, opensshMissing, requireTool } from '../helpers/external-keys.ts';
import { waitFor } from '../helpers/poll.ts';
import { tempDir } from '../helpers/tmp.ts';
import { Controller, problemOf, send, startKelNode } from '../kel-witness/harness.ts';

const SEED = 0x07;

void test(
  '--kel-key in an ssh-agent: the same OOBI and receipts as the file key; agent without keys → 503, OOBI still served',
  { timeout: 120_000 },
  async (t) => {
    if (!requireTool(t, await opensshMissing())) return;
    const { dir, cleanup } = tempDir('aw-kel-agent-');
    const agent = new TestAgent(join(dir, 'agent.sock'));
    try {
      await agent.start();
      const kelKey = ed25519KeyFromSeed(fill(SEED));
      const prefix = basicPrefix(ed25519PublicKeyBytes(kelKey));
      const fp = await agent.add(kelKey, dir, 'kel');
      const fileNode = await startKelNode(join(dir, 'file'), {}, SEED);
      const agentNode = await startKelNode(
        join(dir, 'agent'),
        { kelKeyFile: agentRef(fp, agent.socket), signers: { startTimeoutMs: 5_000 } },
        SEED,
      );
      try {
        const oobi = async (url: string) => {
          const r = await fetch(`${url}/oobi`);
          assert.equal(r.status, 200);
          return r.text();
        };
        assert.equal(await oobi(agentNode.url), await oobi(fileNode.url), 'the same OOBI (icp + endorsed reply)');
        const c = await Controller.create(0x31);
        const icp = c.incept([prefix]);
        const fromFile = await send(fileNode.url, '/receipts', icp.raw, c.sign(icp));
        const fromAgent = await send(agentNode.url, '/receipts', icp.raw, c.sign(icp));
        assert.equal(fromFile.status, 200, fromFile.text);
        assert.equal(fromAgent.status, 200, fromAgent.text);
        assert.equal(fromAgent.text, fromFile.text, 'the same receipt');
        const health = (await (await fetch(`${agentNode.url}/health`)).json()) as { signers: { key: string; state: string }[] };
        assert.deepEqual(
          health.signers.map((s) => [s.key, s.state]),
          [['kel', 'ok']],
        );

        await agent.removeAll();
        const d = await Controller.create(0x32);
        const icp2 = d.incept([prefix]);
        const refused = await send(agentNode.url, '/receipts', icp2.raw, d.sign(icp2));
        assert.equal(refused.status, 503, refused.text);
        assert.equal(problemOf(refused.text).code, 'signer_unavailable');
        const ready = await fetch(`${agentNode.url}/ready`);
        assert.equal(ready.status, 503);
        assert.match(((await ready.json()) as { detail: string }).detail, /signer kel/);
        assert.equal(await oobi(agentNode.url), await oobi(fileNode.url), 'GET /oobi is unaffected');

        await agent.add(kelKey, dir, 'kel');
        await waitFor(
          'receipts again',
          async () => (await send(agentNode.url, '/receipts', icp2.raw, d.sign(icp2))).status === 200,
          10_000,
        );
        const again = await send(agentNode.url, '/receipts', icp2.raw, d.sign(icp2));
        assert.equal(again.text, (await send(fileNode.url, '/receipts', icp2.raw, d.sign(icp2))).text);
      } finally {
        await agentNode.close();
        await fileNode.close();
      }
    } finally {
      await agent.stop();
      cleanup();
    }
  },
);
