// SPEC §3.6.8 / §3.6.10 item 10, end to end over a real `anchor-witness serve` (roles anchor and
// kel, `--kel-source ledger:`, the poll set to one hour): a controller that the registry file names
// and that has NO KEL file anywhere incepts with this witness in `b`; once its icp is receipted it
// anchors with its key. Its rotation puts the old key out of force, and a recovery rotation over
// two interaction events does the same to the rotated key — each within seconds, with no SIGHUP
// and no poll: the commit of the witnessed event triggers the reload (debounced 1 s).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Signer } from 'signify-ts';
import { anchorRequest } from '../../src/client/party.ts';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { fill, signAnchor, type TestParty } from '../helpers/anchors.ts';
import { spawnServe } from '../helpers/spawn-serve.ts';
import { tempDir } from '../helpers/tmp.ts';
import { get, post } from '../helpers/witness.ts';
import { Controller, send } from './harness.ts';

const partyOf = (s: Signer): TestParty => {
  const key = ed25519KeyFromSeed(s.raw);
  return { key, publicKey: ed25519PublicKeyBytes(key) };
};

void test(
  'ledger: a commit reloads the registry (no SIGHUP, poll 1 h): icp -> party, rot and a recovery rot -> key_not_current',
  { timeout: 120_000 },
  async (t) => {
    const { dir, cleanup } = tempDir('aw-kel-ledger-serve-');
    t.after(cleanup);
    const ctl = await Controller.create(131);
    // The controller's prefix depends on its `b` (this witness): the registry file naming it is
    // written once the witness prefix is read from /health, before the icp is sent.
    writeNewKeyFile(join(dir, 'w.pem'), ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(1))));
    writeNewKeyFile(join(dir, 'kel.pem'), ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(7))));
    writeFileSync(join(dir, 'registry.json'), JSON.stringify({ parties: [] }));
    const w = await spawnServe([
      'serve',
      '--listen',
      '127.0.0.1:0',
      '--data-dir',
      join(dir, 'data'),
      '--key',
      join(dir, 'w.pem'),
      '--kel-key',
      join(dir, 'kel.pem'),
      '--name',
      'witness.test/kel-ledger',
      '--roles',
      'anchor,kel',
      '--kel-allow',
      'any',
      '--registry',
      join(dir, 'registry.json'),
      '--kel-source',
      'ledger:',
      '--kel-poll-seconds',
      '3600',
      '--allow-underived-seeds',
    ]);
    try {
      const health = (await get(`${w.url}/health`)).body as { keys: { kel_prefix: string } };
      const witness = health.keys.kel_prefix;
      const icp = ctl.incept([witness]);
      const did = `did:keri:${ctl.pre}`;
      // The registry file names the controller; SIGHUP makes the node read it (the file is no KEL source).
      writeFileSync(join(dir, 'registry.json'), JSON.stringify({ parties: [{ id: did }] }));
      w.child.kill('SIGHUP');

      let seed = 0;
      const anchor = async (s: Signer): Promise<{ status: number; code: string | null }> => {
        const a = signAnchor(partyOf(s), {
          seedId: fill(++seed),
          index: 1,
          head: fill(1),
          cumulative: 1n,
          timestamp: Math.floor(Date.now() / 1000),
        });
        const r = await post(`${w.url}/v1/anchor`, anchorRequest(a, { agent: did }));
        return { status: r.status, code: (r.body as { code?: string }).code ?? null };
      };
      /** Poll until `s`'s anchor gets `want` (200, or a code); the elapsed ms. */
      const until = async (s: Signer, want: 200 | string, what: string): Promise<number> => {
        const t0 = Date.now();
        for (;;) {
          const r = await anchor(s);
          if (want === 200 ? r.status === 200 : r.code === want) return Date.now() - t0;
          if (Date.now() - t0 > 20_000) throw new Error(`${what}: still ${r.status} ${r.code} after 20 s`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      };

      const k0 = ctl.signer;
      // Wait for the SIGHUP's reload of the file: the party is named, and still unknown (nothing held).
      const named = Date.now();
      while ((await anchor(k0)).code !== 'unknown_party') {
        if (Date.now() - named > 20_000) throw new Error('the registry file was not reloaded');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal((await send(w.url, '/receipts', icp.raw, ctl.sign(icp))).status, 200);
      const incepted = await until(k0, 200, 'the icp');

      const rot = ctl.rotate();
      const k1 = ctl.signer;
      assert.equal((await send(w.url, '/receipts', rot.raw, ctl.sign(rot))).status, 200);
      const rotated = await until(k0, 'key_not_current', 'the rot');
      assert.equal((await anchor(k1)).status, 200, 'the rotated key anchors');

      // Two interaction events, then a recovery rotation at the first one's sn (§3.5 Recovery rotations).
      const afterRot = { said: ctl.said, sn: ctl.sn };
      for (let i = 0; i < 2; i++) {
        const ixn = ctl.interact();
        assert.equal((await send(w.url, '/receipts', ixn.raw, ctl.sign(ixn))).status, 200);
      }
      ctl.said = afterRot.said;
      ctl.sn = afterRot.sn;
      const recovery = ctl.rotate();
      const k2 = ctl.signer;
      assert.equal((await send(w.url, '/receipts', recovery.raw, ctl.sign(recovery))).status, 200, 'the recovery is witnessed');
      const recovered = await until(k1, 'key_not_current', 'the recovery');
      assert.equal((await anchor(k2)).status, 200, 'the recovery key anchors');

      const metrics = (await get(`${w.url}/metrics`)).text;
      assert.match(metrics, /^registry_kel_parties\{status="accepted"\} 1$/m);
      assert.match(metrics, /^registry_kel_invalid_total\{reason="fork"\} 0$/m);
      t.diagnostic(`after the commit: party in ${incepted} ms, rotation in ${rotated} ms, recovery in ${recovered} ms`);
    } finally {
      assert.equal(await w.stop(), 0);
    }
  },
);
