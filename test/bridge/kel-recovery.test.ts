// SPEC §3.5 rev 4 "Recovery rotations" at the bridge (§7.1 "Rollback": tb_kel_tips with §3.5's
// rules), with the keys of research/upstream-kel.md §4 B (keripy Salter seeds 00/0…00/2). The
// root's stored KEL is [icp, ixn1, ixn2]; a recovery [icp, rot@1] (signed by the committed next key
// 00/1) supersedes it. Reproduction of issue 30 item 1: the bridge raised its row by `s` only (and
// read est_s back under another name), so the recovery was refused after a restart ('fork') and the
// old copy [icp, ixn1, ixn2] was accepted again after a restart (the rotated-out key 00/0 minted).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { buildTokenRequest } from '../../src/bridge/client.ts';
import { startBridge, type RunningBridge } from '../../src/bridge/node.ts';
import { partyKeyProblem } from '../../src/bridge/freshness-gate.ts';
import type { KelRootSnapshot } from '../../src/bridge/roots-kel.ts';
import type { TrustedRoots } from '../../src/bridge/trusted-roots.ts';
import type { Anchor } from '../../src/anchor/types.ts';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { decodeHex, encodeHex } from '../../src/encoding/hex.ts';
import { KelBuilder, ed25519Signer, kelFile, type KelSigner } from '../helpers/kel-builder.ts';
import { tempDir } from '../helpers/tmp.ts';
import { chain, DEV1, freshNonce, type Key } from './_helpers.ts';

const log = pino({ level: 'silent' });
const SEEDS: Record<string, string> = {
  '00/0': '50994fccf3045faca2c1f57b688eff2c2ee21d88febdd4086533f4f282db81ad',
  '00/1': '962c0c59597bfd92c56baf8b387600c5d9963a5e85c2c919f9201148111bbe35',
  '00/2': '0cb0376f24a9422c58d4bbf8795e6b19f827bdc3ce62c13473990178ee49dbc9',
};
const signer = (id: string): KelSigner => ed25519Signer(decodeHex(SEEDS[id]!, 32));
function rootKey(id: string): Key {
  const key = ed25519KeyFromSeed(decodeHex(SEEDS[id]!, 32));
  const pub = ed25519PublicKeyBytes(key);
  return { key, pub, hex: encodeHex(pub), did: '' };
}
const K0 = rootKey('00/0');
const K1 = rootKey('00/1');

/** [icp(00/0; next 00/1), ixn1, ixn2]: the copy first accepted. */
function storedKel(): KelBuilder {
  const b = KelBuilder.incept({ signers: [signer('00/0')], next: [signer('00/1')] });
  b.interact([{ d: 'ixn1' }]);
  b.interact([{ d: 'ixn2' }]);
  return b;
}
/** [icp, rot@1 (by 00/1; next 00/2)]: a recovery over the stored copy. */
function recoveredKel(): KelBuilder {
  const b = KelBuilder.incept({ signers: [signer('00/0')], next: [signer('00/1')] });
  b.rotate({ signers: [signer('00/1')], next: [signer('00/2')] });
  return b;
}

void describe('bridge KEL roots: a recovery rotation is accepted, a rollback refused, across restarts', { timeout: 120_000 }, () => {
  const old = storedKel();
  const rec = recoveredKel();
  const did = `did:keri:${old.prefix}`;
  let tmp: { dir: string; cleanup: () => void };
  let kels: string;
  let bridge: RunningBridge;

  const writeKel = (b: KelBuilder): void => {
    const t = join(kels, `.${b.prefix}.tmp`);
    writeFileSync(t, kelFile(b));
    renameSync(t, join(kels, `${b.prefix}.kel.json`));
  };
  const start = (): Promise<RunningBridge> =>
    startBridge(
      {
        host: '127.0.0.1',
        port: 0,
        dev: true,
        keyDir: join(tmp.dir, 'keys'),
        trustedRootsFile: join(tmp.dir, 'roots.json'),
        kelSources: [`dir:${kels}`],
        kelPollSeconds: 0,
        rateLimit: null,
      },
      log,
    );
  async function mint(root: Key): Promise<{ status: number; json: Record<string, unknown> }> {
    const now = Math.floor(Date.now() / 1000);
    const body = buildTokenRequest({
      chain: chain(root, [{ device: DEV1, issuer: did, capabilities: ['deploy'], expiresAt: now + 600, timestamp: now - 10 }]),
      rootPublicKey: root.hex,
      audience: 'sts.amazonaws.com',
      issuer: bridge.issuer.issuer,
      deviceKey: DEV1.key,
      iat: now,
      nonce: freshNonce(),
    });
    const r = await fetch(`${bridge.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: r.status, json: (await r.json()) as Record<string, unknown> };
  }

  before(async () => {
    assert.equal(rec.prefix, old.prefix);
    tmp = tempDir('tb-kel-rec-');
    kels = join(tmp.dir, 'kels');
    mkdirSync(kels);
    writeFileSync(join(tmp.dir, 'roots.json'), JSON.stringify({ parties: [{ id: did }] }));
    writeKel(old);
    bridge = await start();
  });
  after(async () => {
    await bridge.close();
    tmp.cleanup();
  });

  void it('the stored copy [icp, ixn1, ixn2]: 00/0 mints at s=2', async () => {
    const r = await mint(K0);
    assert.equal(r.status, 200, JSON.stringify(r.json));
  });

  void it('the recovery [icp, rot@1] after one reload: 00/1 mints, 00/0 is root_key_not_current', async () => {
    writeKel(rec);
    assert.equal(await bridge.kel!.reload('test'), true);
    const r = await mint(K1);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const stale = await mint(K0);
    assert.equal(stale.status, 403);
    assert.equal(stale.json.code, 'root_key_not_current');
  });

  void it('after a restart (no cache, only the stored row) the recovered copy is still accepted', async () => {
    await bridge.close();
    bridge = await start();
    const r = await mint(K1);
    assert.equal(r.status, 200, JSON.stringify(r.json));
  });

  void it('the old copy [icp, ixn1, ixn2] put back and the bridge restarted: never a token for 00/0', async () => {
    writeKel(old);
    await bridge.close();
    bridge = await start();
    const r = await mint(K0);
    assert.notEqual(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.status, 503, JSON.stringify(r.json));
    assert.equal(r.json.code, 'registry_behind');
    const health = (await (await fetch(`${bridge.url}/health`)).json()) as { kel: { roots: Record<string, number> } };
    assert.deepEqual(health.kel.roots, { accepted: 0, pending: 0, invalid: 1 });
  });
});

void describe('G7 on a replica behind a recovery (SPEC §7.2 G7 with §3.5 rows)', () => {
  void it("a state at s=2 (est_s 0) under a row recovered to s=1 (est_s 1) is registry_behind, never the old key's anchor", () => {
    const old = storedKel();
    const did = `did:keri:${old.prefix}`;
    const state = { s: 2, d: 'ixn2', estS: 0, estD: 'icp', keys: [{ curve: 'ed25519', raw: K0.pub }], revoked: false, abandoned: false };
    const kel = {
      views: new Map([[old.prefix, { status: 'accepted', state, reason: null, detail: null, delegatedBy: null }]]),
      tips: new Map([[old.prefix, { prefix: old.prefix, s: 1, d: 'rot', estS: 1, estD: 'rot' }]]),
    } as unknown as KelRootSnapshot;
    const roots = { kelRoots: new Set([did]), registry: { parties: new Map() } } as unknown as TrustedRoots;
    const anchor = { sigParty: { curve: 'ed25519', publicKey: K0.pub } } as unknown as Anchor;
    assert.throws(() => partyKeyProblem(anchor, did, did, roots, kel), { code: 'registry_behind' });
  });
});
