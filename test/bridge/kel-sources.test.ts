// SPEC §7.1 rev 4: `token-bridge serve --kel-source` is repeatable and applies §3.5 at the bridge:
// every source's copy of a root's KEL is evaluated and the superseding one is in force whatever the
// flag order; one source's hostile entry for a root never blocks that root's good copy elsewhere, nor
// any other root; the aggregate bound counts identifiers over all sources with the trusted roots
// first; diverging copies are counted in registry_kel_source_conflicts_total. Before issue 30 item 2
// the bridge refused a second --kel-source at start (invalid_option).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { buildTokenRequest } from '../../src/bridge/client.ts';
import { startBridge, type RunningBridge } from '../../src/bridge/node.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { ed25519Signer, KelBuilder, kelFile, type KelSigner } from '../helpers/kel-builder.ts';
import { tempDir } from '../helpers/tmp.ts';
import { chain, DEV1, freshNonce, type Key } from './_helpers.ts';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { createHash } from 'node:crypto';

const log = pino({ level: 'silent' });

/** One deterministic seed, as a KEL signer and as a chain root key. */
function pair(label: string): { signer: KelSigner; key: Key } {
  const seed = new Uint8Array(createHash('sha256').update(`bridge-kel-sources/${label}`).digest());
  const key = ed25519KeyFromSeed(seed);
  const pub = ed25519PublicKeyBytes(key);
  return { signer: ed25519Signer(seed), key: { key, pub, hex: encodeHex(pub), did: '' } };
}

void describe('token-bridge serve with two --kel-source', { timeout: 120_000 }, () => {
  const r1 = [pair('r1/0'), pair('r1/1'), pair('r1/2')];
  const r2 = [pair('r2/0'), pair('r2/1')];
  const x = [pair('x/0'), pair('x/1')];
  // R1: [icp] in source A, [icp, rot] in source B (B is ahead; A is listed first).
  const r1Short = KelBuilder.incept({ signers: [r1[0]!.signer], next: [r1[1]!.signer] });
  const r1Long = KelBuilder.incept({ signers: [r1[0]!.signer], next: [r1[1]!.signer] });
  r1Long.rotate({ signers: [r1[1]!.signer], next: [r1[2]!.signer] });
  // R2: a good copy in B, a hostile `{}` under its name in A.
  const r2Kel = KelBuilder.incept({ signers: [r2[0]!.signer], next: [r2[1]!.signer] });
  // X: no trusted root; two diverging copies (fork).
  const xa = KelBuilder.incept({ signers: [x[0]!.signer], next: [x[1]!.signer] });
  xa.interact([{ d: 'a' }]);
  const xb = KelBuilder.incept({ signers: [x[0]!.signer], next: [x[1]!.signer] });
  xb.interact([{ d: 'b' }]);

  let tmp: { dir: string; cleanup: () => void };
  let bridge: RunningBridge;
  const put = (dir: string, prefix: string, text: string): void => {
    writeFileSync(join(dir, `.${prefix}.tmp`), text);
    renameSync(join(dir, `.${prefix}.tmp`), join(dir, `${prefix}.kel.json`));
  };
  async function mint(prefix: string, root: Key): Promise<{ status: number; json: Record<string, unknown> }> {
    const now = Math.floor(Date.now() / 1000);
    const issuer = `did:keri:${prefix}`;
    const body = buildTokenRequest({
      chain: chain(root, [{ device: DEV1, issuer, capabilities: ['deploy'], expiresAt: now + 600, timestamp: now - 10 }]),
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
    tmp = tempDir('tb-kel-src-');
    const a = join(tmp.dir, 'a');
    const b = join(tmp.dir, 'b');
    mkdirSync(a);
    mkdirSync(b);
    put(a, r1Short.prefix, kelFile(r1Short));
    put(b, r1Long.prefix, kelFile(r1Long));
    put(a, r2Kel.prefix, '{}');
    put(b, r2Kel.prefix, kelFile(r2Kel));
    put(a, xa.prefix, kelFile(xa));
    put(b, xb.prefix, kelFile(xb));
    writeFileSync(
      join(tmp.dir, 'roots.json'),
      JSON.stringify({ parties: [{ id: `did:keri:${r1Long.prefix}` }, { id: `did:keri:${r2Kel.prefix}` }] }),
    );
    bridge = await startBridge(
      {
        host: '127.0.0.1',
        port: 0,
        dev: true,
        keyDir: join(tmp.dir, 'keys'),
        trustedRootsFile: join(tmp.dir, 'roots.json'),
        kelSources: [`dir:${a}`, `dir:${b}`],
        kelPollSeconds: 0,
        rateLimit: null,
      },
      log,
    );
  });
  after(async () => {
    await bridge.close();
    tmp.cleanup();
  });

  void it('the copy ahead is in force whatever the flag order: the rotated key mints, the rotated-out key does not', async () => {
    const r = await mint(r1Long.prefix, r1[1]!.key);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const old = await mint(r1Long.prefix, r1[0]!.key);
    assert.equal(old.status, 403);
    assert.equal(old.json.code, 'root_key_not_current');
  });

  void it("a hostile copy in one source does not block the root's good copy in the other", async () => {
    const r = await mint(r2Kel.prefix, r2[0]!.key);
    assert.equal(r.status, 200, JSON.stringify(r.json));
  });

  void it('/health lists both sources; diverging copies are counted as source conflicts', async () => {
    const health = (await (await fetch(`${bridge.url}/health`)).json()) as { kel: { sources: string[]; roots: Record<string, number> } };
    assert.deepEqual(health.kel.sources, [`dir:${join(tmp.dir, 'a')}`, `dir:${join(tmp.dir, 'b')}`]);
    assert.deepEqual(health.kel.roots, { accepted: 2, pending: 0, invalid: 0 });
    const metrics = await (await fetch(`${bridge.url}/metrics`)).text();
    const m = /^registry_kel_source_conflicts_total (\d+)$/m.exec(metrics);
    assert.ok(
      m !== null && Number(m[1]) >= 1,
      metrics
        .split('\n')
        .filter((l) => l.includes('conflict'))
        .join('\n'),
    );
  });
});

void describe('--kel-max-identifiers over two sources: the trusted roots first', { timeout: 120_000 }, () => {
  void it("with a bound of 1 identifier, the one root is read, not the other source's identifier that sorts first", async () => {
    const t = tempDir('tb-kel-src-bound-');
    const a = join(t.dir, 'a');
    const b = join(t.dir, 'b');
    mkdirSync(a);
    mkdirSync(b);
    // Find a root whose prefix sorts after the filler's, so name order alone would read the filler first.
    const filler = KelBuilder.incept({ signers: [pair('f/0').signer], next: [pair('f/1').signer] });
    let n = 0;
    let rootPair = pair(`b/${n}`);
    let root = KelBuilder.incept({ signers: [rootPair.signer], next: [pair(`b/${n}/next`).signer] });
    while (root.prefix < filler.prefix) {
      n++;
      rootPair = pair(`b/${n}`);
      root = KelBuilder.incept({ signers: [rootPair.signer], next: [pair(`b/${n}/next`).signer] });
    }
    put(a, filler.prefix, kelFile(filler));
    put(b, root.prefix, kelFile(root));
    writeFileSync(join(t.dir, 'roots.json'), JSON.stringify({ parties: [{ id: `did:keri:${root.prefix}` }] }));
    const br = await startBridge(
      {
        host: '127.0.0.1',
        port: 0,
        dev: true,
        keyDir: join(t.dir, 'keys'),
        trustedRootsFile: join(t.dir, 'roots.json'),
        kelSources: [`dir:${a}`, `dir:${b}`],
        kelPollSeconds: 0,
        kelAggregate: { maxIdentifiers: 1, maxTotalBytes: 1 << 20, maxHeapMb: 128 },
        rateLimit: null,
      },
      log,
    );
    try {
      const health = (await (await fetch(`${br.url}/health`)).json()) as { kel: { roots: Record<string, number> } };
      assert.deepEqual(health.kel.roots, { accepted: 1, pending: 0, invalid: 0 });
    } finally {
      await br.close();
      t.cleanup();
    }

    function put(dir: string, prefix: string, text: string): void {
      writeFileSync(join(dir, `${prefix}.kel.json`), text);
    }
  });
});
