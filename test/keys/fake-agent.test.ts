// SPEC §1.3 "Fake agent": an agent (our own, on a Unix socket, speaking the OpenSSH agent protocol)
// that answers the witness key's identity but, once switched, signs with another key → the request
// answers 503 signer_unavailable, `/health` says `signer_bad_signature`, nothing is committed; the
// signer recovers once the agent signs correctly again. Plus: an agent that stops answering → 3
// timeouts make the signer unavailable; a full queue → overloaded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { KeyObject } from 'node:crypto';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes, signEd25519 } from '../../src/crypto/ed25519.ts';
import { SignerError } from '../../src/keys/errors.ts';
import { openSigner } from '../../src/keys/open-signer.ts';
import { SSH_ED25519, SshReader, ed25519Fingerprint, ed25519KeyBlob, sshString, sshUint32 } from '../../src/keys/openssh.ts';
import { fill } from '../helpers/anchors.ts';
import { waitFor } from '../helpers/poll.ts';
import { keyTestParty } from '../helpers/key-party.ts';
import { tempDir } from '../helpers/tmp.ts';
import { post, startTestWitness } from '../helpers/witness.ts';

type Mode = 'honest' | 'other-key' | 'silent';

class FakeAgent {
  mode: Mode = 'honest';
  readonly server: Server;
  private readonly key: KeyObject;
  private readonly other = ed25519KeyFromSeed(fill(0x77));
  constructor(key: KeyObject) {
    this.key = key;
    this.server = createServer((s) => {
      this.serve(s);
    });
  }
  listen(path: string): Promise<void> {
    return new Promise((r) =>
      this.server.listen(path, () => {
        r();
      }),
    );
  }
  close(): Promise<void> {
    return new Promise((r) =>
      this.server.close(() => {
        r();
      }),
    );
  }
  private serve(s: Socket): void {
    let buf = Buffer.alloc(0);
    s.on('error', () => undefined);
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
        const frame = buf.subarray(4, 4 + buf.readUInt32BE(0));
        buf = buf.subarray(4 + frame.length);
        const reply = this.answer(frame);
        if (reply !== undefined) s.write(Buffer.concat([sshUint32(reply.length), reply]));
      }
    });
  }
  private answer(frame: Buffer): Buffer | undefined {
    const pub = ed25519PublicKeyBytes(this.key);
    if (frame[0] === 11) return Buffer.concat([Buffer.from([12]), sshUint32(1), sshString(ed25519KeyBlob(pub)), sshString('fake')]);
    if (frame[0] !== 13) return Buffer.from([5]);
    if (this.mode === 'silent') return undefined;
    const r = new SshReader(frame.subarray(1));
    r.string();
    const data = r.string();
    const sig = signEd25519(this.mode === 'other-key' ? this.other : this.key, data);
    return Buffer.concat([Buffer.from([14]), sshString(Buffer.concat([sshString(SSH_ED25519), sshString(sig)]))]);
  }
}

const { registry, submission } = keyTestParty(0x0b);

void test(
  'an agent signing with another key: 503, signer_bad_signature, nothing committed, then recovery',
  { timeout: 60_000 },
  async () => {
    const { dir, cleanup } = tempDir('aw-fake-agent-');
    const key = ed25519KeyFromSeed(fill(0x41));
    const agent = new FakeAgent(key);
    const sock = join(dir, 'agent.sock');
    await agent.listen(sock);
    try {
      const ref = `ssh-agent:${ed25519Fingerprint(ed25519PublicKeyBytes(key))}?socket=${encodeURIComponent(sock)}`;
      const w = await startTestWitness(dir, registry, { keyFile: ref, signers: { startTimeoutMs: 5_000 } });
      try {
        assert.equal((await post(`${w.url}/v1/anchor`, submission('ok-1'))).status, 200);
        const size = async (): Promise<number> => ((await (await fetch(`${w.url}/health`)).json()) as { log: { size: number } }).log.size;
        const before = await size();
        agent.mode = 'other-key';
        const r = await post(`${w.url}/v1/anchor`, submission('bad-1'));
        assert.equal(r.status, 503, r.text);
        assert.equal((r.body as { code: string }).code, 'signer_unavailable');
        const h = (await (await fetch(`${w.url}/health`)).json()) as { status: string; signers: { state: string; last_error: string }[] };
        assert.equal(h.status, 'degraded');
        assert.equal(h.signers[0]!.state, 'unavailable');
        assert.equal(h.signers[0]!.last_error, 'signer_bad_signature');
        assert.equal(await size(), before, 'nothing committed');
        // The seed was not recorded: once the agent is honest again, the same submission is new.
        agent.mode = 'honest';
        await waitFor('ready again', async () => (await fetch(`${w.url}/ready`)).status === 200, 10_000);
        const again = await post(`${w.url}/v1/anchor`, submission('bad-1'));
        assert.equal(again.status, 200);
        assert.equal((again.body as { replay: boolean }).replay, false);
      } finally {
        await w.close();
      }
    } finally {
      await agent.close();
      cleanup();
    }
  },
);

void test('a silent agent: 3 timeouts make the signer unavailable; a full queue is overloaded', { timeout: 60_000 }, async () => {
  const { dir, cleanup } = tempDir('aw-fake-agent-');
  const key = ed25519KeyFromSeed(fill(0x42));
  const agent = new FakeAgent(key);
  const sock = join(dir, 'agent.sock');
  await agent.listen(sock);
  try {
    const ref = `ssh-agent:${ed25519Fingerprint(ed25519PublicKeyBytes(key))}?socket=${encodeURIComponent(sock)}`;
    const s = await openSigner(ref, { algorithm: 'ed25519', key: 'witness', timeoutMs: 200, maxPending: 2, startTimeoutMs: 2_000 });
    try {
      agent.mode = 'silent';
      const results = await Promise.allSettled([1, 2, 3].map((i) => s.sign(fill(i))));
      const codes = results.map((r) => (r.status === 'rejected' && r.reason instanceof SignerError ? r.reason.code : 'fulfilled'));
      assert.deepEqual(codes, ['signer_unavailable', 'signer_unavailable', 'overloaded']);
      for (let i = 0; i < 3 && s.isAvailable(); i++) await s.sign(fill(9)).catch(() => undefined);
      assert.equal(s.isAvailable(), false);
      assert.equal(s.status().last_error, 'signer_timeout');
      agent.mode = 'honest';
      await waitFor('recovered', () => s.isAvailable(), 10_000);
    } finally {
      await s.close();
    }
  } finally {
    await agent.close();
    cleanup();
  }
});
