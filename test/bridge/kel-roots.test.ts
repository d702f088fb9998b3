// SPEC §7.1 / §7.3 test 1 (rev 4): bridge roots from KERI key event logs, with the keripy-made
// vectors of research/upstream-kel.md §4 (test/helpers/kel-vectors.ts). The root is the delegated
// identifier did:keri:EC3GG… (own KEL [dip, drt]); its delegator's KEL is [icp, ixn, ixn2, ixn3].
// Each step rewrites the dir: source (rename into place) and does ONE reload, with no edit of the
// trusted-roots file; every minted token is verified through the JWKS with npm `jose`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { renameSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { startBridge, type RunningBridge } from '../../src/bridge/node.ts';
import { buildTokenRequest } from '../../src/bridge/client.ts';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { decodeHex, encodeHex } from '../../src/encoding/hex.ts';
import { tempDir } from '../helpers/tmp.ts';
import { AGENT_EVENTS, AGENT_PREFIX, kelDocument, MULTI_EVENTS, MULTI_PREFIX, ROOT_EVENTS, ROOT_PREFIX } from '../helpers/kel-vectors.ts';
import { chain, DEV1, freshNonce, type Key } from './_helpers.ts';

const log = pino({ level: 'silent' });
const V = (await import('../keri/vectors/upstream-kel.json', { with: { type: 'json' } })).default as {
  seeds: Record<string, { seed: string }>;
};

function keyOf(seedHex: string): Key {
  const key = ed25519KeyFromSeed(decodeHex(seedHex, 32));
  const pub = ed25519PublicKeyBytes(key);
  return { key, pub, hex: encodeHex(pub), did: '' };
}
const K11_0 = keyOf(V.seeds['11/0']!.seed);
const K11_1 = keyOf(V.seeds['11/1']!.seed);
const K00_3 = keyOf(V.seeds['00/3']!.seed);
const K00_4 = keyOf(V.seeds['00/4']!.seed);
const K00_0 = keyOf(V.seeds['00/0']!.seed);

const AGENT_DID = `did:keri:${AGENT_PREFIX}`;
const MULTI_DID = `did:keri:${MULTI_PREFIX}`;

let tmp: { dir: string; cleanup: () => void };
let kels: string;
let bridge: RunningBridge;

function writeKel(prefix: string, doc: string): void {
  const tmpFile = join(kels, `.${prefix}.tmp`);
  writeFileSync(tmpFile, doc);
  renameSync(tmpFile, join(kels, `${prefix}.kel.json`));
}

async function mint(did: string, root: Key): Promise<{ status: number; json: Record<string, unknown> }> {
  const now = Math.floor(Date.now() / 1000);
  const links = chain(root, [{ device: DEV1, issuer: did, capabilities: ['deploy'], expiresAt: now + 600, timestamp: now - 10 }]);
  const body = buildTokenRequest({
    chain: links,
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

async function verified(token: unknown): Promise<Record<string, unknown>> {
  const jwks = createRemoteJWKSet(new URL(`${bridge.url}/.well-known/jwks.json`));
  const { payload } = await jwtVerify(token as string, jwks, { issuer: bridge.issuer.issuer, audience: 'sts.amazonaws.com' });
  return payload;
}

void describe('KEL roots (SPEC §7.1): keripy vectors as bridge roots', { timeout: 120_000 }, () => {
  before(async () => {
    tmp = tempDir('tb-kel-');
    kels = join(tmp.dir, 'kels');
    mkdirSync(kels);
    writeKel(ROOT_PREFIX, kelDocument(ROOT_PREFIX, ROOT_EVENTS, 2)); // delegator [icp, ixn]
    writeKel(AGENT_PREFIX, kelDocument(AGENT_PREFIX, AGENT_EVENTS)); // own KEL [dip, drt]; drt not yet anchored
    writeKel(MULTI_PREFIX, kelDocument(MULTI_PREFIX, MULTI_EVENTS)); // rot_remove: kt 2 after the rot
    const roots = join(tmp.dir, 'roots.json');
    // Two KEL roots (no "keys"), and the delegator with static keys: its KEL in the source is shadowed.
    writeFileSync(
      roots,
      JSON.stringify({
        parties: [
          { id: AGENT_DID },
          { id: MULTI_DID },
          { id: `did:keri:${ROOT_PREFIX}`, keys: [{ curve: 'ed25519', public_key: K00_0.hex }] },
        ],
      }),
    );
    bridge = await startBridge(
      {
        host: '127.0.0.1',
        port: 0,
        dev: true,
        keyDir: join(tmp.dir, 'keys'),
        trustedRootsFile: roots,
        kelSources: [`dir:${kels}`],
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

  void it('seed 11/0 mints with no keys entry; jose verifies the token and reads keri_state', async () => {
    const r = await mint(AGENT_DID, K11_0);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const claims = await verified(r.json.access_token);
    assert.equal(claims.sub, AGENT_DID);
    assert.equal(claims.keri_prefix, AGENT_PREFIX);
    assert.deepEqual(claims.keri_state, { s: 0, d: AGENT_EVENTS[0]!.event.d });
    // an unknown key of that root is refused
    const other = await mint(AGENT_DID, K11_1);
    assert.equal(other.status, 403);
    assert.equal(other.json.code, 'root_key_not_current');
    assert.match(String(other.json.detail), /s=0/);
  });

  void it('a static-keys entry with a KEL in the source loads, counted as shadowed', async () => {
    const health = (await (await fetch(`${bridge.url}/health`)).json()) as { kel: { roots: Record<string, number>; sources: string[] } };
    assert.deepEqual(health.kel.roots, { accepted: 2, pending: 0, invalid: 0 });
    assert.deepEqual(health.kel.sources, [`dir:${kels}`]);
    const metrics = await (await fetch(`${bridge.url}/metrics`)).text();
    assert.match(metrics, /^registry_kel_shadowed_total 1$/m);
    assert.match(metrics, /^bridge_kel_roots\{status="accepted"\} 2$/m);
  });

  void it('rot_remove (kt 2): either current key mints alone; a rotated-out key is root_key_not_current', async () => {
    for (const k of [K00_3, K00_4]) {
      const r = await mint(MULTI_DID, k);
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.deepEqual((await verified(r.json.access_token)).keri_state, { s: 1, d: MULTI_EVENTS[1]!.event.d });
    }
    const old = await mint(MULTI_DID, K00_0);
    assert.equal(old.json.code, 'root_key_not_current');
  });

  void it('with ixn2 (the drt anchored) after one reload: 11/0 → root_key_not_current, 11/1 mints', async () => {
    writeKel(ROOT_PREFIX, kelDocument(ROOT_PREFIX, ROOT_EVENTS, 3));
    assert.equal(await bridge.kel!.reload('test'), true);
    const old = await mint(AGENT_DID, K11_0);
    assert.equal(old.status, 403);
    assert.equal(old.json.code, 'root_key_not_current');
    assert.match(String(old.json.detail), /s=1/);
    const r = await mint(AGENT_DID, K11_1);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual((await verified(r.json.access_token)).keri_state, { s: 1, d: AGENT_EVENTS[1]!.event.d });
  });

  void it('with ixn3 (the revocation seal) after one reload: root_revoked', async () => {
    writeKel(ROOT_PREFIX, kelDocument(ROOT_PREFIX, ROOT_EVENTS, 4));
    assert.equal(await bridge.kel!.reload('test'), true);
    const r = await mint(AGENT_DID, K11_1);
    assert.equal(r.status, 403);
    assert.equal(r.json.code, 'root_revoked');
  });

  void it('an older copy of the root KEL is refused (rollback): the accepted state stays, across a restart too', async () => {
    writeKel(AGENT_PREFIX, kelDocument(AGENT_PREFIX, AGENT_EVENTS, 1)); // back to [dip]
    await bridge.kel!.reload('test');
    // still revoked (the last accepted state stays in force), never the old dip key
    assert.equal((await mint(AGENT_DID, K11_0)).json.code, 'root_revoked');
    const roots = join(tmp.dir, 'roots.json');
    await bridge.close();
    bridge = await startBridge(
      {
        host: '127.0.0.1',
        port: 0,
        dev: true,
        keyDir: join(tmp.dir, 'keys'),
        trustedRootsFile: roots,
        kelSources: [`dir:${kels}`],
        kelPollSeconds: 0,
        rateLimit: null,
      },
      log,
    );
    // a fresh process has no cached state: the stored tip (s=1) is ahead of the [dip] copy → never 11/0
    const now = Math.floor(Date.now() / 1000);
    const body = buildTokenRequest({
      chain: chain(K11_0, [{ device: DEV1, issuer: AGENT_DID, expiresAt: now + 600, timestamp: now - 10 }]),
      rootPublicKey: K11_0.hex,
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
    assert.equal(r.status, 503);
    assert.equal(r.headers.get('retry-after'), '30');
    assert.equal(((await r.json()) as { code: string }).code, 'registry_behind');
  });
});

void describe('KEL roots: configuration', () => {
  void it('--kel-source with --nonce-store memory refuses to start (kel_store_required)', async () => {
    const t = tempDir('tb-kel-cfg-');
    try {
      writeFileSync(join(t.dir, 'roots.json'), JSON.stringify({ parties: [{ id: AGENT_DID }] }));
      await assert.rejects(
        startBridge(
          {
            host: '127.0.0.1',
            port: 0,
            dev: true,
            keyDir: join(t.dir, 'keys'),
            trustedRootsFile: join(t.dir, 'roots.json'),
            kelSources: [`dir:${t.dir}`],
            nonceStore: 'memory',
          },
          log,
        ),
        { code: 'kel_store_required' },
      );
    } finally {
      t.cleanup();
    }
  });
  void it('an entry without keys is a load error without --kel-source', async () => {
    const t = tempDir('tb-kel-cfg-');
    try {
      writeFileSync(join(t.dir, 'roots.json'), JSON.stringify({ parties: [{ id: AGENT_DID }] }));
      await assert.rejects(
        startBridge(
          { host: '127.0.0.1', port: 0, dev: true, keyDir: join(t.dir, 'keys'), trustedRootsFile: join(t.dir, 'roots.json') },
          log,
        ),
        { code: 'invalid_trusted_roots' },
      );
    } finally {
      t.cleanup();
    }
  });
});
