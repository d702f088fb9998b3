// SPEC §1.3 (ssh-agent): a Debian `ssh-agent -D -a SOCK` started here (stopped by PID) holds the
// witness key and a cosign key, each written by `key to-openssh` (ssh-add -l -E sha256 shows our
// fingerprint). A witness serving anchor and cosign with both keys in the agent:
//   - anchors co-signed through the agent verify (the cosignature under the witness key), and the
//     checkpoint the agent signed verifies with Go golang.org/x/mod/sumdb/note; the cosign role's
//     answers verify with the x/mod client of test/cosign/go-client;
//   - `ssh-add -D` → anchors 503 signer_unavailable, /ready 503 not_ready, /health 200 degraded,
//     GETs 200, nothing committed; re-adding → anchors 200 again within 6 s, no restart;
//   - the agent killed while a client sends 50 req/s → the process stays up, every answer is 200
//     or 503; a new agent on the same socket with the keys → recovered.
// Skipped (saying why) when openssh-client or Go is missing, except under CI=true.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeAnchor } from '../../src/anchor/codec.ts';
import { cosignMessage } from '../../src/anchor/messages.ts';
import { ed25519KeyFromSeed, verifyEd25519 } from '../../src/crypto/ed25519.ts';
import { decodeHex, encodeHex } from '../../src/encoding/hex.ts';
import { SIG_TYPE_ED25519 } from '../../src/note/signed-note.ts';
import { formatVkey } from '../../src/note/vkey.ts';
import { fill } from '../helpers/anchors.ts';
import { LOG_NAME, SyntheticLog, logKeyC, logsDoc } from '../helpers/cosign-harness.ts';
import { TestAgent, agentRef, buildGo, goMissing, opensshMissing, requireTool, run } from '../helpers/external-keys.ts';
import { waitFor } from '../helpers/poll.ts';
import { keyTestParty } from '../helpers/key-party.ts';
import { tempDir } from '../helpers/tmp.ts';
import { post, startTestWitness, WITNESS_ORIGIN } from '../helpers/witness.ts';

const { registry, submission } = keyTestParty(0x09);

const witnessKey = ed25519KeyFromSeed(fill(0x31));
const cosignKey = ed25519KeyFromSeed(fill(0x32));

async function get(url: string): Promise<{ status: number; json: unknown; text: string }> {
  const r = await fetch(url);
  const text = await r.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: r.status, json, text };
}

void test('ssh-agent keys: Go x/mod verifies, the agent goes and comes back without a restart', { timeout: 300_000 }, async (t) => {
  if (!requireTool(t, await opensshMissing())) return;
  const goGap = await goMissing();
  if (!requireTool(t, goGap)) return;
  const { dir, cleanup } = tempDir('aw-agent-');
  const agent = new TestAgent(join(dir, 'agent.sock'));
  try {
    await agent.start();
    const wfp = await agent.add(witnessKey, dir, 'witness');
    const cfp = await agent.add(cosignKey, dir, 'cosign');
    const listed = await agent.list();
    assert.ok(listed.includes(wfp) && listed.includes(cfp), `ssh-add -l -E sha256 shows our fingerprints:\n${listed}`);

    const log = new SyntheticLog(LOG_NAME, logKeyC);
    const logsFile = join(dir, 'logs.json');
    writeFileSync(logsFile, JSON.stringify(logsDoc({ origin: LOG_NAME, keys: [log.vkey] })));
    const w = await startTestWitness(dir, registry, {
      keyFile: agentRef(wfp, agent.socket),
      cosignKeyFiles: [agentRef(cfp, agent.socket)],
      roles: ['anchor', 'cosign'],
      logsFile,
      signers: { startTimeoutMs: 5_000 },
    });
    try {
      // 1. Anchors co-signed through the agent.
      const r1 = await post(`${w.url}/v1/anchor`, submission('agent-1'));
      assert.equal(r1.status, 200, r1.text);
      const witnessHex = encodeHex(w.witnessPublicKey);
      const health = (await get(`${w.url}/health`)).json as {
        status: string;
        signers: { key: string; state: string }[];
        keys: { log_vkey: string; witness: string };
      };
      assert.equal(health.status, 'ok');
      assert.deepEqual(
        health.signers.map((s) => [s.key.split(':')[0], s.state]),
        [
          ['witness', 'ok'],
          ['cosign', 'ok'],
        ],
      );
      assert.equal(health.keys.witness, witnessHex);
      // The anchor's cosignature verifies under the agent's witness key.
      const cos = (r1.body as { cosignature: { signature: string } }).cosignature;
      const anchor = decodeAnchor((JSON.parse(submission('agent-1')) as { anchor: unknown }).anchor);
      assert.ok(verifyEd25519(w.witnessPublicKey, cosignMessage(anchor), decodeHex(cos.signature)), 'the cosignature verifies');
      // Go x/mod note: the checkpoint the agent signed.
      const verifier = await buildGo(join(import.meta.dirname, 'go-note', 'main.go'), dir);
      const vkey = formatVkey(WITNESS_ORIGIN, SIG_TYPE_ED25519, w.witnessPublicKey);
      assert.equal(vkey, health.keys.log_vkey);
      const go1 = await run(verifier, ['-url', `${w.url}/log/checkpoint?unwitnessed=1`, '-vkeys', vkey]);
      assert.match(go1.stdout, /NOTE PASSED 1 signatures/);
      // Go x/mod client against the cosign role (cosignature/v1 lines made by the agent's cosign key).
      const goClient = await buildGo(join(import.meta.dirname, '..', 'cosign', 'go-client', 'main.go'), join(dir, 'data'));
      const cosignVkey = (health as unknown as { cosign_vkeys: string[] }).cosign_vkeys[0]!;
      const go2 = await run(goClient, ['-url', w.url, '-witness', cosignVkey], { timeout: 60_000 });
      assert.match(go2.stdout, /INTEROP PASSED/);

      // 2. ssh-add -D: 503 for anchors, /ready 503, GETs 200, /health degraded.
      const sizeBefore = ((await get(`${w.url}/health`)).json as { log: { size: number } }).log.size;
      await agent.removeAll();
      const r2 = await post(`${w.url}/v1/anchor`, submission('agent-2'));
      assert.equal(r2.status, 503, r2.text);
      assert.equal((r2.body as { code: string }).code, 'signer_unavailable');
      assert.equal(r2.headers.get('retry-after'), '5');
      const ready = await get(`${w.url}/ready`);
      assert.equal(ready.status, 503);
      assert.equal((ready.json as { code: string }).code, 'not_ready');
      assert.match((ready.json as { detail: string }).detail, /signer witness/);
      assert.equal((await get(`${w.url}/live`)).status, 200);
      assert.equal((await get(`${w.url}/log/checkpoint`)).status, 200);
      const h2 = (await get(`${w.url}/health`)).json as { status: string; log: { size: number }; signers: { state: string }[] };
      assert.equal(h2.status, 'degraded');
      assert.equal(h2.signers[0]!.state, 'unavailable');
      assert.equal(h2.log.size, sizeBefore, 'nothing committed');
      // Re-adding: 200 again within 6 s (recovery retries at 0.5, 1, 2, 5 s).
      const t0 = Date.now();
      await agent.add(witnessKey, dir, 'witness');
      await agent.add(cosignKey, dir, 'cosign');
      await waitFor('anchors accepted again', async () => (await post(`${w.url}/v1/anchor`, submission('agent-3'))).status === 200, 6_500);
      t.diagnostic(`recovered ${Date.now() - t0} ms after ssh-add`);
      await waitFor('ready again', async () => (await get(`${w.url}/ready`)).status === 200, 6_500);

      // 3. The agent killed under 50 req/s: no exit, only 200/503; a new agent → recovered.
      const statuses = new Map<number, number>();
      let i = 0;
      let stop = false;
      const pending: Promise<void>[] = [];
      const sender = (async () => {
        while (!stop) {
          const n = i++;
          pending.push(
            post(`${w.url}/v1/anchor`, submission(`kill-${n}`)).then(
              (r) => void statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1),
              () => void statuses.set(-1, (statuses.get(-1) ?? 0) + 1),
            ),
          );
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      await new Promise((r) => setTimeout(r, 1_000));
      await agent.stop();
      await new Promise((r) => setTimeout(r, 2_000));
      await agent.start();
      await agent.add(witnessKey, dir, 'witness');
      await agent.add(cosignKey, dir, 'cosign');
      await waitFor('recovered after the agent restarted', async () => (await get(`${w.url}/ready`)).status === 200, 15_000);
      await new Promise((r) => setTimeout(r, 500));
      stop = true;
      await sender;
      await Promise.all(pending);
      t.diagnostic(`statuses under the agent kill: ${JSON.stringify([...statuses])}`);
      assert.deepEqual(
        [...statuses.keys()].filter((s) => s !== 200 && s !== 503),
        [],
        'only 200 and 503',
      );
      assert.ok((statuses.get(503) ?? 0) > 0 && (statuses.get(200) ?? 0) > 0);
      assert.equal((await post(`${w.url}/v1/anchor`, submission('after'))).status, 200);
    } finally {
      await w.close();
    }
  } finally {
    await agent.stop();
    cleanup();
  }
});
